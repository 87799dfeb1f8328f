// Unit tests of generated-cluster descriptions: validation messages, the inline form, node layouts.
#include "cli/flags.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"
#include "platform/cluster_spec.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ddlsim;
using platform::ClusterSpec;
using platform::SpecNaming;

namespace {

ClusterSpec good()
{
  ClusterSpec s;
  s.nodes = 4;
  s.gpus_per_node = 8;
  s.gpu = "V100-SXM2";
  s.intra = platform::Intra::NvLink;
  s.inter = platform::Inter::Ib100;
  return s;
}

/** The error of resolving good()'s sizes with these kinds, or "(accepted)". */
/** The error `f` throws, as the command line shows it (fields as flags). */
template <typename F>
std::string cli_error(F f)
{
  try {
    f();
  } catch (const ConfigError& e) {
    return cli::with_flags(e.message_template());
  }
  return "(accepted)";
}

std::string kinds_error(const std::string& intra, const std::string& inter, const std::string& topology = "star",
                        SpecNaming naming = SpecNaming::Options)
{
  try {
    platform::resolve_cluster_spec(good(), {intra, inter, topology}, naming);
  } catch (const ConfigError& e) {
    return cli::with_flags(e.message_template()); // as the command line shows it
  }
  return "(accepted)";
}

template <typename Edit>
std::string error_of(Edit edit, SpecNaming naming = SpecNaming::Options)
{
  ClusterSpec s = good();
  edit(s);
  try {
    platform::validate(s, naming);
  } catch (const ConfigError& e) {
    return cli::with_flags(e.message_template()); // as the command line shows it
  }
  return "(accepted)";
}

/** Sum of the bandwidths of the links of layout route a -> b (a < b) whose class is `cls`. */
double total_bandwidth(const platform::NodeLayout& l, int gpu, const std::string& cls)
{
  double sum = 0;
  for (const auto& link : l.links)
    if (link.link_class == cls &&
        (link.name.find("nvlink" + std::to_string(gpu) + "-") == 0 ||
         (link.name.size() > 2 && link.name.compare(link.name.size() - 2, 2, "-" + std::to_string(gpu)) == 0)))
      sum += link.bandwidth_bytes_per_s;
  return sum;
}

} // namespace

TEST_CASE("cluster spec: a valid description passes")
{
  CHECK_NOTHROW(platform::validate(good(), SpecNaming::Options));
}

TEST_CASE("cluster spec: every bad field is rejected with a message naming it")
{
  CHECK(error_of([](auto& s) { s.nodes = 0; }) == "--nodes must be >= 1 (got 0)");
  CHECK(error_of([](auto& s) { s.gpus_per_node = -2; }) ==
        "--gpus-per-node must be >= 0 (got -2; 0: CPU-only nodes, ranks on the CPU hosts)");
  CHECK(error_of([](auto& s) { s.gpu = "Z80"; }) == "--gpu: unknown GPU 'Z80' (known: " + platform::known_gpus() + ")");
  CHECK(kinds_error("pci", "ib100") == "--intra must be one of: pcie, nvlink, nvswitch (got 'pci')");
  CHECK(kinds_error("nvlink", "ib400") == "--inter must be one of: 10gbe, 25gbe, ib56, ib100, ib200 (got 'ib400')");
  CHECK(error_of([](auto& s) { s.nics_per_node = 0; }) == "--nics-per-node must be >= 1 (got 0)");
  CHECK(error_of([](auto& s) { s.nics_per_node = 3; }) ==
        "--nics-per-node 3 does not divide --gpus-per-node 8 (every NIC serves the same number of GPUs)");
  CHECK(kinds_error("nvlink", "ib100", "torus") == "--topology must be one of: star, fat-tree (got 'torus')");
  CHECK(kinds_error("nvlink", "ib100") == "(accepted)");
}

TEST_CASE("cluster spec: kinds are parsed in option order, named by one table each")
{
  // The first bad field in option order is reported, whether it is a number or a kind.
  CHECK(error_of([](auto& s) { s.nodes = 0; }) == "--nodes must be >= 1 (got 0)");
  ClusterSpec zero = good();
  zero.nodes = 0;
  CHECK(cli_error([&] {
          platform::resolve_cluster_spec(zero, {"pci", "ib100", "star"}, SpecNaming::Options);
        }) == "--nodes must be >= 1 (got 0)");
  CHECK(kinds_error("pci", "opa") == "--intra must be one of: pcie, nvlink, nvswitch (got 'pci')");
  CHECK(kinds_error("pci", "ib100", "star", SpecNaming::ClusterKeys) ==
        "--cluster: intra must be one of: pcie, nvlink, nvswitch (got 'pci')");
  const auto s = platform::resolve_cluster_spec(good(), {"nvswitch", "25gbe", "star"}, SpecNaming::Options);
  CHECK(s.intra == platform::Intra::NvSwitch);
  CHECK(s.inter == platform::Inter::Eth25G);
  CHECK(s.topology == platform::Topology::Star);
  CHECK(std::string(platform::to_string(platform::Topology::FatTree)) == "fat-tree");
  CHECK(platform::intra_names(" | ") == "pcie | nvlink | nvswitch");
  CHECK(platform::inter_names(", ") == "10gbe, 25gbe, ib56, ib100, ib200");
  for (auto inter : {platform::Inter::Eth10G, platform::Inter::Eth25G, platform::Inter::Ib56, platform::Inter::Ib100,
                     platform::Inter::Ib200}) // every NIC class is a link catalogue entry
    CHECK(platform::nic_link(inter).name == platform::to_string(inter));
}

TEST_CASE("cluster spec: combinations the hardware does not have are rejected")
{
  CHECK(error_of([](auto& s) { s.gpu = "K80", s.intra = platform::Intra::Pcie, s.gpus_per_node = 3; }) ==
        "--gpu K80 needs an even --gpus-per-node (two GK210 GPUs per K80 board; got 3)");
  CHECK(error_of([](auto& s) { s.gpu = "P40"; }) ==
        "--intra nvlink (the DGX-1 hybrid cube-mesh) needs --gpu P100-SXM2 or V100-SXM2 (got 'P40')");
  CHECK(error_of([](auto& s) { s.gpus_per_node = 4; }) ==
        "--intra nvlink (the DGX-1 hybrid cube-mesh) needs --gpus-per-node 8 (got 4)");
  CHECK(error_of([](auto& s) { s.intra = platform::Intra::NvSwitch, s.gpu = "P100-SXM2"; }) ==
        "--intra nvswitch needs --gpu V100-SXM2 or A100-SXM4-40GB (got 'P100-SXM2')");
}

TEST_CASE("cluster spec: fat-tree options are checked, and refused without a fat-tree")
{
  CHECK(error_of([](auto& s) { s.nodes_per_leaf = 2; }) == "--nodes-per-leaf needs --topology fat-tree");
  CHECK(error_of([](auto& s) { s.oversubscription = 2; }) == "--oversubscription needs --topology fat-tree");
  CHECK(error_of([](auto& s) { s.topology = platform::Topology::FatTree; }) ==
        "--topology fat-tree needs --nodes-per-leaf >= 1 (got 0)");
  CHECK(error_of([](auto& s) { s.topology = platform::Topology::FatTree, s.nodes_per_leaf = 3; }) ==
        "--nodes-per-leaf 3 does not divide --nodes 4");
  CHECK(error_of([](auto& s) {
          s.topology = platform::Topology::FatTree, s.nodes_per_leaf = 2, s.oversubscription = 0.5;
        }) == "--oversubscription must be >= 1 (got 0.5)");
  CHECK(error_of([](auto& s) {
          s.topology = platform::Topology::FatTree, s.nodes_per_leaf = 2, s.oversubscription = 3;
        }) == "(accepted)");
}

TEST_CASE("cluster spec: the inline form names keys, not options")
{
  CHECK(error_of([](auto& s) { s.nodes = 0; }, SpecNaming::ClusterKeys) == "--cluster: nodes must be >= 1 (got 0)");
  CHECK(error_of([](auto& s) { s.nics_per_node = 3; }, SpecNaming::ClusterKeys) ==
        "--cluster: nics-per-node 3 does not divide gpus-per-node 8 (every NIC serves the same number of GPUs)");
}

TEST_CASE("cluster string: parsed, every key checked, printed back")
{
  const auto s = platform::parse_cluster_string(
      "nodes=8,gpus-per-node=4,gpu=P40,intra=pcie,inter=25gbe,nics-per-node=2,topology=fat-tree,nodes-per-leaf=4,"
      "oversubscription=1.5");
  CHECK(s.nodes == 8);
  CHECK(s.gpus_per_node == 4);
  CHECK(s.nics_per_node == 2);
  CHECK(s.nodes_per_leaf == 4);
  CHECK(s.oversubscription == 1.5);
  CHECK(platform::to_cluster_string(s) ==
        "nodes=8,gpus-per-node=4,gpu=P40,intra=pcie,inter=25gbe,nics-per-node=2,topology=fat-tree,nodes-per-leaf=4,"
        "oversubscription=1.5");
  CHECK(platform::to_cluster_string(platform::parse_cluster_string(platform::to_cluster_string(s))) ==
        platform::to_cluster_string(s));
  const std::string base = "nodes=2,gpus-per-node=4,gpu=P40,intra=pcie";
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter=ib56,speed=9"); }) ==
        "--cluster: unknown key 'speed' (keys: nodes, gpus-per-node, gpu, intra, inter, nics-per-node, "
        "topology, nodes-per-leaf, oversubscription, inter-latency, inter-bandwidth, intra-latency, "
        "intra-bandwidth)");
  CHECK(cli_error([&] { platform::parse_cluster_string(base); }) ==
        "--cluster: missing key 'inter' (required: nodes, gpus-per-node, inter)");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter=ib56,nodes=3"); }) ==
        "--cluster: key 'nodes' given twice");
  CHECK(cli_error([&] { platform::parse_cluster_string("nodes=two,gpus-per-node=4,gpu=P40,intra=pcie,inter=ib56"); }) ==
        "--cluster: nodes must be an integer (got 'two')");
  CHECK_THAT(cli_error([&] { platform::parse_cluster_string(base + ",inter"); }),
             Catch::Matchers::StartsWith("--cluster: expected KEY=VALUE, got 'inter'"));
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter=ib56,oversubscription=x"); }) ==
        "--cluster: oversubscription must be a number (got 'x')");
  CHECK(cli_error([&] { platform::parse_cluster_string("nodes=0,gpus-per-node=4,gpu=P40,intra=pcie,inter=ib56"); }) ==
        "--cluster: nodes must be >= 1 (got 0)");
}

TEST_CASE("node layout: DGX-1 V100 gives every GPU 6 NVLink 2.0 links, non-neighbours take two hops")
{
  const auto l = platform::build_node_layout(good());
  const double link = platform::link_by_name("nvlink2").bandwidth_bytes_per_s;
  int direct_pairs = 0;
  for (int g = 0; g < 8; ++g)
    CHECK(total_bandwidth(l, g, "nvlink2") == Approx(6 * link).epsilon(1e-12));
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b) {
      const auto& r = l.routes[a][b];
      INFO(a << " -> " << b);
      REQUIRE((r.size() == 1 || r.size() == 2));
      direct_pairs += r.size() == 1;
      if (r.size() == 2) // through the destination's partner b ^ 4
        CHECK(l.links[r[0].link].name.find(std::to_string(b ^ 4)) != std::string::npos);
    }
  CHECK(direct_pairs == 16); // 6 pairs inside each quad, plus 4 GPU i <-> GPU i^4
}

TEST_CASE("node layout: DGX-1 P100 gives every GPU 4 NVLink 1.0 links")
{
  auto s = good();
  s.gpu = "P100-SXM2";
  const auto l = platform::build_node_layout(s);
  for (int g = 0; g < 8; ++g)
    CHECK(total_bandwidth(l, g, "nvlink1") == Approx(4 * 18.3e9).epsilon(1e-12));
}

TEST_CASE("node layout: K80 boards share a link, sockets are joined by QPI, NICs split the GPUs")
{
  auto s = good();
  s.gpu = "K80";
  s.intra = platform::Intra::Pcie;
  s.nics_per_node = 4;
  const auto l = platform::build_node_layout(s);
  auto names = [&](int a, int b) {
    std::vector<std::string> out;
    for (const auto& h : l.routes[a][b])
      out.push_back(l.links[h.link].name + (h.up ? "+" : "-"));
    return out;
  };
  CHECK(names(0, 1) == std::vector<std::string>{"gpu0-pcie+", "gpu1-pcie-"});
  CHECK(names(2, 4) == std::vector<std::string>{"gpu2-pcie+", "board1-pcie+", "sw0-pcie+", "qpi-", "sw1-pcie-",
                                                "board2-pcie-", "gpu4-pcie-"});
  for (int g = 0; g < 8; ++g) {
    INFO("gpu" << g);
    CHECK(names(g, l.gateway()).back() == "nic" + std::to_string(g / 2) + "+");
  }
  CHECK(names(l.cpu(), l.gateway()) == std::vector<std::string>{"nic0+"});
}

TEST_CASE("cluster names sort in rank order, the fat-tree leaf uplink follows the oversubscription")
{
  std::vector<std::string> ranks;
  for (int n = 0; n < 12; ++n)
    for (int g = 0; g < 10; ++g)
      ranks.push_back(platform::gpu_host_name(n, g));
  auto sorted = ranks;
  std::sort(sorted.begin(), sorted.end(), natural_less);
  CHECK(sorted == ranks);
  auto s = good();
  s.topology = platform::Topology::FatTree;
  s.nodes_per_leaf = 2;
  s.nics_per_node = 4;
  s.oversubscription = 4;
  CHECK(platform::leaf_uplink_bandwidth(s) == Approx(2 * 4 * 12.2e9 / 4).epsilon(1e-15));
}

TEST_CASE("cluster spec: link overrides are parsed with units, checked, applied and printed back")
{
  const std::string base = "nodes=2,gpus-per-node=4,gpu=P40,intra=pcie,inter=25gbe";
  const auto s = platform::parse_cluster_string(
      base + ",inter-latency=25us,inter-bandwidth=1.25GBps,intra-latency=4us,intra-bandwidth=10Gbps");
  REQUIRE(s.inter_latency_s);
  CHECK(*s.inter_latency_s == Approx(25e-6).epsilon(1e-15));
  CHECK(*s.inter_bandwidth_bytes_per_s == 1.25e9);
  CHECK(*s.intra_latency_s == Approx(4e-6).epsilon(1e-15));
  CHECK(*s.intra_bandwidth_bytes_per_s == 1.25e9);
  // Printed in us and GB/s (12 digits), read back to the same values.
  const std::string printed = platform::to_cluster_string(s);
  CHECK(printed.find(",inter-latency=25us,inter-bandwidth=1.25GBps,intra-latency=4us,intra-bandwidth=1.25GBps") !=
        std::string::npos);
  const auto back = platform::parse_cluster_string(printed);
  CHECK(*back.inter_latency_s == *s.inter_latency_s);
  CHECK(*back.intra_bandwidth_bytes_per_s == *s.intra_bandwidth_bytes_per_s);
  CHECK(platform::to_cluster_string(back) == printed);
  CHECK(platform::to_cluster_string(platform::parse_cluster_string(base)).find("latency") == std::string::npos);

  // Applied: each NIC link half the NIC-to-NIC latency; each GPU PCIe link half the hop latency.
  const auto nic = platform::effective_nic_link(s);
  CHECK(nic.latency_s == Approx(12.5e-6).epsilon(1e-12));
  CHECK(nic.bandwidth_bytes_per_s == 1.25e9);
  CHECK(nic.latency_source.find("given: inter-latency 25 us") == 0);
  const auto l = platform::build_node_layout(s);
  for (const auto& link : l.links) {
    INFO(link.name);
    if (link.name.rfind("nic", 0) == 0)
      CHECK(link.latency_s == Approx(12.5e-6).epsilon(1e-12));
    if (link.name.rfind("gpu", 0) == 0) {
      CHECK(link.latency_s == Approx(2e-6).epsilon(1e-12));
      CHECK(link.bandwidth_bytes_per_s == 1.25e9);
    }
  }

  // Errors: one line naming the key or the option.
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter-latency=25"); }) ==
        "--cluster: inter-latency: a time needs a unit: s, ms, us, ns (got '25')");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter-latency=-1us"); }) ==
        "--cluster: inter-latency: expected a time >= 0 such as 32us, 1.5ms or 2s (got '-1us')");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter-bandwidth=0"); }) ==
        "--cluster: inter-bandwidth: expected a bandwidth > 0 such as 1.25GBps or 10Gbps (got '0')");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",intra-bandwidth=5"); }) ==
        "--cluster: intra-bandwidth: a bandwidth needs a unit: Bps, kBps, MBps, GBps, KiBps, MiBps, GiBps, bps, "
        "kbps, Mbps, Gbps (got '5')");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",intra-bandwidth=5GB"); }) ==
        "--cluster: intra-bandwidth: unknown bandwidth unit 'GB' in '5GB' (use Bps, kBps, MBps, GBps, KiBps, MiBps, "
        "GiBps, bps, kbps, Mbps, Gbps)");
  CHECK(cli_error([&] { platform::parse_cluster_string(base + ",inter-latency="); }) ==
        "--cluster: inter-latency needs a value (got 'inter-latency=')");
  CHECK(
      cli_error([&] {
        platform::resolve_cluster_spec(good(), {"nvlink", "ib100", "star"}, SpecNaming::Options, {"1 us", "", "", ""});
      }) == "--inter-latency: unknown time unit ' us' in '1 us' (use s, ms, us, ns)");
  CHECK(cli_error([&] {
          platform::resolve_cluster_spec(good(), {"nvlink", "ib100", "star"}, SpecNaming::Options,
                                         {"", "infGBps", "", ""});
        }) == "--inter-bandwidth: expected a bandwidth > 0 such as 1.25GBps or 10Gbps (got 'infGBps')");
  CHECK(error_of([](auto& s) { s.inter_latency_s = -1e-6; }) == "--inter-latency must be a time >= 0 (got -1e-06 s)");
  CHECK(error_of([](auto& s) { s.intra_bandwidth_bytes_per_s = 0; }) ==
        "--intra-bandwidth must be a bandwidth > 0 (got 0 B/s)");
  CHECK(platform::parse_bandwidth("10Gbps", "x") == 1.25e9);
  CHECK(platform::parse_bandwidth("1GiBps", "x") == 1073741824.0);
  // A bare 0 latency is allowed (as every time option).
  CHECK(*platform::parse_cluster_string(base + ",inter-latency=0").inter_latency_s == 0);
}

TEST_CASE("cluster spec: CPU-only nodes (gpus-per-node 0) have no GPU, no intra, one NIC, the CPU host's route")
{
  const auto s = platform::parse_cluster_string("nodes=4,gpus-per-node=0,inter=10gbe");
  CHECK(s.gpus_per_node == 0);
  CHECK(s.gpu.empty());
  CHECK(platform::to_cluster_string(s) == "nodes=4,gpus-per-node=0,inter=10gbe,nics-per-node=1,topology=star");
  CHECK(platform::to_cluster_string(platform::parse_cluster_string(platform::to_cluster_string(s))) ==
        platform::to_cluster_string(s));
  const auto l = platform::build_node_layout(s);
  CHECK(l.gpus == 0);
  REQUIRE(l.links.size() == 1);
  CHECK(l.links[0].name == "nic0");
  REQUIRE(l.routes[l.cpu()][l.gateway()].size() == 1); // CPU host -> NIC -> gateway
  CHECK(l.links[0].latency_s == Approx(31.92e-6 / 2).epsilon(1e-12));
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=0,gpu=P40,inter=10gbe"); }) ==
        "--cluster: gpu needs gpus-per-node >= 1 (CPU-only nodes have no GPU; got 'P40')");
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=0,intra=pcie,inter=10gbe"); }) ==
        "--cluster: intra needs gpus-per-node >= 1 (CPU-only nodes have no GPU-to-GPU links)");
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=0,inter=10gbe,nics-per-node=2"); }) ==
        "--cluster: nics-per-node must be 1 with gpus-per-node 0 (the CPU host uses one NIC; got 2)");
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=0,inter=10gbe,intra-latency=1us"); }) ==
        "--cluster: intra-latency needs gpus-per-node >= 1 (CPU-only nodes have no GPU-to-GPU links)");
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=2,intra=pcie,inter=10gbe"); }) ==
        "--cluster: gpu is required with gpus-per-node >= 1 (known: " + platform::known_gpus() + ")");
  CHECK(cli_error([] { platform::parse_cluster_string("nodes=4,gpus-per-node=2,gpu=P40,inter=10gbe"); }) ==
        "--cluster: intra is required with gpus-per-node >= 1 (one of: pcie, nvlink, nvswitch)");
}
