// Platforms and workloads built for tests: small, contention-free, with known alpha and beta.
#include "test_platforms.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace ddlsim::test {

std::string write_star_platform(const StarSpec& spec)
{
  std::ostringstream x;
  x.precision(17);
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"star\" routing=\"Full\">\n";
  for (int i = 0; i < spec.hosts; ++i)
    x << "    <host id=\"gpu" << i << "\" speed=\"" << spec.speed_flops << "f\"><prop id=\"gpu\" value=\"" << spec.gpu
      << "\"/></host>\n";
  for (int i = 0; i < spec.hosts; ++i)
    x << "    <link id=\"l" << i << "\" bandwidth=\"" << spec.link_bytes_per_s << "Bps\" latency=\""
      << spec.link_latency_s << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  for (int i = 0; i < spec.hosts; ++i)
    for (int j = i + 1; j < spec.hosts; ++j)
      x << "    <route src=\"gpu" << i << "\" dst=\"gpu" << j << "\"><link_ctn id=\"l" << i
        << "\" direction=\"UP\"/><link_ctn id=\"l" << j << "\" direction=\"DOWN\"/></route>\n";
  x << "  </zone>\n</platform>\n";

  char path[] = "/tmp/ddlsim-test-platform-XXXXXX.xml";
  const int fd = mkstemps(path, 4);
  if (fd < 0)
    throw std::runtime_error("cannot create a temporary platform file");
  close(fd);
  std::ofstream(path) << x.str();
  return path;
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

} // namespace ddlsim::test
