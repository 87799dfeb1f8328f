// SimGrid 3.32's lazy update leaves a link out of the sharing: a reproduction with SimGrid alone (no ddlsim code), for
// docs/performance.md ("SimGrid's lazy update and links left out of the sharing") and an upstream report.
//
// A star of 4 workers (10 GB/s split-duplex links) and 2 servers (100 GB/s), 0.5 us per link, every route a host's
// UP link then the other host's DOWN link, exact alpha-beta (ddlsim's settings: CM02, no TCP window, no cross traffic,
// latency and bandwidth factors 1). At
// time 0 each server sends 1920 bytes to every worker. Every worker's DOWN link carries the two servers' transfers, so
// in the max-min model each gets 5 GB/s: 1 us + 1920 B / 5 GB/s = 1.384 us. Under `network/optim:Full` SimGrid gives
// that; under the default `Lazy` the transfers to workers 1-3 take 1.0606 us, less than one alone (1.192 us).
// SimGrid 3.32 `src/kernel/lmm/System.cpp`: when a transfer's latency ends, its variable is enabled and only its
// route's first constraint is marked modified (update_modified_cnst_set_from_variable), trusting the recursion to reach
// the others; when that constraint is already marked (the server's UP link, by the server's first transfer), nothing is
// added, so the workers' DOWN links of the later transfers are left out of that solve. With each route's DOWN link
// first, Lazy gives 1.384 us too.
//
// usage: simgrid_lazy_repro [--cfg=network/optim:Full]   prints each transfer's time, in us
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

std::string write_platform()
{
  char path[] = "/tmp/simgrid-lazy-repro-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0)
    return "";
  close(fd);
  const std::vector<std::string> names = {"gpu0", "gpu1", "gpu2", "gpu3", "srv0", "srv1"};
  std::ofstream x(path);
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <zone id=\"star\" routing=\"Full\">\n";
  for (const auto& n : names)
    x << "    <host id=\"" << n << "\" speed=\"1e12f\"/>\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    x << "    <link id=\"l" << i << "\" bandwidth=\"" << (i >= 4 ? "100e9" : "10e9")
      << "Bps\" latency=\"0.5e-6s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j)
      x << "    <route src=\"" << names[i] << "\" dst=\"" << names[j] << "\"><link_ctn id=\"l" << i
        << "\" direction=\"UP\"/><link_ctn id=\"l" << j << "\" direction=\"DOWN\"/></route>\n";
  x << "  </zone>\n</platform>\n";
  return path;
}

} // namespace

int main(int argc, char** argv)
{
  sg4::Engine engine(&argc, argv);
  engine.set_config("network/model:CM02"); // ddlsim's exact alpha-beta (docs/network-model.md)
  engine.set_config("network/TCP-gamma:0");
  engine.set_config("network/crosstraffic:0");
  engine.set_config("network/latency-factor:1");
  engine.set_config("network/bandwidth-factor:1");
  const std::string platform = write_platform();
  if (platform.empty()) {
    std::fprintf(stderr, "simgrid_lazy_repro: cannot write a temporary platform file\n");
    return 1;
  }
  engine.load_platform(platform);
  unlink(platform.c_str());
  sg4::Actor::create("servers", engine.host_by_name("srv0"), [] {
    std::vector<sg4::CommPtr> comms;
    std::vector<std::string> labels;
    for (int s = 0; s < 2; ++s)
      for (int w = 0; w < 4; ++w) {
        comms.push_back(sg4::Comm::sendto_async(sg4::Host::by_name("srv" + std::to_string(s)),
                                                sg4::Host::by_name("gpu" + std::to_string(w)), 1920));
        labels.push_back("srv" + std::to_string(s) + "->gpu" + std::to_string(w));
      }
    for (const auto& c : comms)
      c->wait();
    for (std::size_t i = 0; i < comms.size(); ++i)
      std::printf("%s %.4f us\n", labels[i].c_str(), (comms[i]->get_finish_time() - comms[i]->get_start_time()) * 1e6);
  });
  engine.run();
  return 0;
}
