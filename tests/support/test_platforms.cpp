// Platforms and workloads built for tests: small, contention-free, with known alpha and beta.
#include "test_platforms.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace ddlsim::test {

platform::ClusterSpec star_cluster(int nodes, int gpus_per_node, const std::string& gpu, const std::string& intra,
                                   const std::string& inter)
{
  platform::ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = gpus_per_node;
  s.gpu = gpu;
  return platform::resolve_cluster_spec(s, {intra, inter, "star"}, platform::SpecNaming::Options);
}

namespace {

std::vector<std::string>& temporary_files()
{
  static std::vector<std::string> files;
  return files;
}

void remove_temporary_files()
{
  for (const auto& f : temporary_files())
    std::remove(f.c_str());
}

/** Writes `xml` into a fresh $TMPDIR/ddlsim-test-*.xml file (removed when the process exits); returns its path. */
std::string write_temporary_xml(const std::string& xml)
{
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/ddlsim-test-XXXXXX.xml";
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  const int fd = mkstemps(path.data(), 4);
  if (fd < 0)
    throw std::runtime_error("cannot create a temporary platform file in " + pattern);
  close(fd);
  if (temporary_files().empty())
    std::atexit(remove_temporary_files);
  temporary_files().emplace_back(path.data());
  std::ofstream(path.data()) << xml;
  return path.data();
}

} // namespace

std::string write_star_platform(const StarSpec& spec)
{
  std::ostringstream x;
  x.precision(17);
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"star\" routing=\"Full\">\n";
  for (int i = 0; i < spec.hosts; ++i)
    x << "    <host id=\"gpu" << i << "\" speed=\"" << spec.speed_flops << "f\"><prop id=\"gpu\" value=\"" << spec.gpu
      << "\"/></host>\n";
  for (int i = 0; i < spec.extra_hosts; ++i) {
    x << "    <host id=\"srv" << i << "\" speed=\""
      << (spec.server_speed_flops >= 0 ? spec.server_speed_flops : spec.speed_flops) << "f\"";
    if (spec.server_cpu.empty())
      x << "/>\n";
    else
      x << "><prop id=\"cpu\" value=\"" << spec.server_cpu << "\"/></host>\n";
  }
  // One file per link (SimGrid 3.32 names a profile by its file and refuses a second of one name), named by its file
  // name alone: SimGrid finds it in the platform file's folder, where it is written, and fails to open one named by
  // an absolute path (src/surf/surf_interface.cpp, surf_ifsopen: it opens the path, then tries it again under each
  // folder of its search path, and returns the last, failed, attempt).
  auto latency_file = [&spec]() -> std::string {
    if (spec.latency_profile.empty())
      return "";
    const std::string path = write_temporary_xml(spec.latency_profile);
    return " latency_file=\"" + path.substr(path.rfind('/') + 1) + "\"";
  };
  std::vector<std::string> names;
  for (int i = 0; i < spec.hosts; ++i)
    names.push_back("gpu" + std::to_string(i));
  for (int i = 0; i < spec.extra_hosts; ++i)
    names.push_back("srv" + std::to_string(i));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto latency = spec.host_latency_s.find(static_cast<int>(i));
    const auto bandwidth = spec.host_bytes_per_s.find(static_cast<int>(i));
    x << "    <link id=\"l" << i << "\" bandwidth=\""
      << (bandwidth != spec.host_bytes_per_s.end() ? bandwidth->second : spec.link_bytes_per_s) << "Bps\" latency=\""
      << (latency != spec.host_latency_s.end() ? latency->second : spec.link_latency_s) << "s\"" << latency_file()
      << " sharing_policy=\"" << (spec.fatpipe_hosts.count(static_cast<int>(i)) > 0 ? "FATPIPE" : "SPLITDUPLEX")
      << "\"/>\n";
  }
  auto host_link = [&spec](std::size_t i, const char* direction) { // a fat pipe has no directions
    return "<link_ctn id=\"l" + std::to_string(i) + "\"" +
           (spec.fatpipe_hosts.count(static_cast<int>(i)) > 0 ? std::string()
                                                              : std::string(" direction=\"") + direction + "\"") +
           "/>";
  };
  if (spec.backbone_bytes_per_s > 0) // a switch backplane: limits each flow, not their sum
    x << "    <link id=\"bb\" bandwidth=\"" << spec.backbone_bytes_per_s
      << "Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n";
  if (!spec.shared_routes.empty())
    x << "    <link id=\"x\" bandwidth=\"" << spec.shared_bytes_per_s
      << "Bps\" latency=\"0s\" sharing_policy=\"SHARED\"/>\n";
  const std::string backbone = spec.backbone_bytes_per_s > 0 ? "<link_ctn id=\"bb\"/>" : "";
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j) {
      const auto pair = std::make_pair(static_cast<int>(i), static_cast<int>(j));
      const bool shared =
          std::find(spec.shared_routes.begin(), spec.shared_routes.end(), pair) != spec.shared_routes.end();
      x << "    <route src=\"" << names[i] << "\" dst=\"" << names[j] << "\">" << host_link(i, "UP") << backbone
        << (shared ? "<link_ctn id=\"x\"/>" : "") << host_link(j, "DOWN") << "</route>\n";
    }
  x << "  </zone>\n</platform>\n";

  return write_temporary_xml(x.str());
}

proto::Workload single_tensor_workload(std::uint64_t bytes)
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("one-tensor");
  w.set_batch_size_per_gpu(1);
  w.set_reference_gpu("P40");
  auto* l = w.add_layers();
  l->set_name("tensor");
  l->set_gradient_bytes(static_cast<std::int64_t>(bytes));
  return w;
}

std::string write_nvlink_ib_platform()
{
  std::ostringstream x;
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"Full\">\n";
  for (int n = 0; n < 2; ++n) {
    const std::string node = "node" + std::to_string(n);
    x << "    <zone id=\"" << node << "\" routing=\"Full\">\n";
    for (int g = 0; g < 4; ++g)
      x << "      <host id=\"" << node << "-gpu" << g
        << "\" speed=\"15.7Tf\"><prop id=\"gpu\" value=\"V100-SXM2\"/></host>\n";
    x << "      <router id=\"" << node << "-nic\"/>\n";
    for (int g = 0; g < 4; ++g)
      x << "      <link id=\"" << node << "-pcie" << g
        << "\" bandwidth=\"15.754GBps\" latency=\"2.85us\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    x << "      <link id=\"" << node
      << "-ib\" bandwidth=\"12.2GBps\" latency=\"1.95us\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    for (int i = 0; i < 4; ++i) // links before routes, as the DTD wants
      for (int j = i + 1; j < 4; ++j)
        x << "      <link id=\"" << node << "-nvl" << i << j
          << "\" bandwidth=\"47.9GBps\" latency=\"3.4us\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        x << "      <route src=\"" << node << "-gpu" << i << "\" dst=\"" << node << "-gpu" << j << "\"><link_ctn id=\""
          << node << "-nvl" << i << j << "\" direction=\"UP\"/></route>\n";
    for (int g = 0; g < 4; ++g)
      x << "      <route src=\"" << node << "-gpu" << g << "\" dst=\"" << node << "-nic\"><link_ctn id=\"" << node
        << "-pcie" << g << "\" direction=\"UP\"/></route>\n";
    x << "    </zone>\n";
  }
  x << "    <zoneRoute src=\"node0\" dst=\"node1\" gw_src=\"node0-nic\" gw_dst=\"node1-nic\"><link_ctn id=\"node0-ib\" "
       "direction=\"UP\"/><link_ctn id=\"node1-ib\" direction=\"DOWN\"/></zoneRoute>\n";
  x << "  </zone>\n</platform>\n";
  return write_temporary_xml(x.str());
}

std::string write_two_node_cpu_platform(double pcie_bytes_per_s)
{
  std::ostringstream x;
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"Full\">\n";
  for (int n = 0; n < 2; ++n) {
    const std::string node = "node" + std::to_string(n);
    x << "    <zone id=\"" << node << "\" routing=\"Full\">\n"
      << "      <host id=\"" << node << "-gpu0\" speed=\"12Tf\"><prop id=\"gpu\" value=\"P40\"/></host>\n"
      << "      <host id=\"" << node << "-cpu\" speed=\"2.816Tf\"><prop id=\"cpu\" value=\"2x-Xeon-E5-2698-v4\"/>"
      << "</host>\n"
      << "      <router id=\"" << node << "-nic\"/>\n"
      << "      <link id=\"" << node << "-gpu0-pcie\" bandwidth=\"" << pcie_bytes_per_s
      << "Bps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n"
      << "      <link id=\"" << node << "-cpu-pcie\" bandwidth=\"1e12Bps\" latency=\"0s\" "
      << "sharing_policy=\"SPLITDUPLEX\"/>\n"
      << "      <link id=\"" << node << "-net\" bandwidth=\"1e12Bps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n"
      << "      <route src=\"" << node << "-gpu0\" dst=\"" << node << "-nic\"><link_ctn id=\"" << node
      << "-gpu0-pcie\" direction=\"UP\"/></route>\n"
      << "      <route src=\"" << node << "-gpu0\" dst=\"" << node << "-cpu\"><link_ctn id=\"" << node
      << "-gpu0-pcie\" direction=\"UP\"/></route>\n"
      << "      <route src=\"" << node << "-cpu\" dst=\"" << node << "-nic\"><link_ctn id=\"" << node
      << "-cpu-pcie\" direction=\"UP\"/></route>\n"
      << "    </zone>\n";
  }
  x << "    <zoneRoute src=\"node0\" dst=\"node1\" gw_src=\"node0-nic\" gw_dst=\"node1-nic\"><link_ctn "
    << "id=\"node0-net\" direction=\"UP\"/><link_ctn id=\"node1-net\" direction=\"DOWN\"/></zoneRoute>\n"
    << "  </zone>\n</platform>\n";
  return write_temporary_xml(x.str());
}

std::string write_two_sided_platform(int hosts, int both_below)
{
  std::ostringstream x;
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n";
  for (int i = 0; i < hosts; ++i)
    x << "    <host id=\"gpu" << i << "\" speed=\"12e12f\"><prop id=\"gpu\" value=\"P40\"/></host>\n";
  for (int i = 0; i < hosts; ++i)
    for (const char* l : {"up", "down", "a"})
      x << "    <link id=\"" << l << i << "\" bandwidth=\"1e9Bps\" latency=\"1e-6s\"/>\n";
  for (int i = 0; i < hosts; ++i)
    for (int j = 0; j < hosts; ++j)
      if (i != j) {
        x << "    <route src=\"gpu" << i << "\" dst=\"gpu" << j << "\" symmetrical=\"NO\"><link_ctn id=\"up" << i
          << "\"/><link_ctn id=\"a" << i << "\"/>";
        if (i < both_below && j < both_below)
          x << "<link_ctn id=\"a" << j << "\"/>";
        x << "<link_ctn id=\"down" << j << "\"/></route>\n";
      }
  x << "  </zone>\n</platform>\n";
  return write_temporary_xml(x.str());
}

} // namespace ddlsim::test
