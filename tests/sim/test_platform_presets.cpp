// Shipped platforms: every preset loads, every GPU pair has a route, and point-to-point probes take the documented
// route latency plus size over the documented bandwidth (platforms/README.md), 1e-9 relative.
#include "sim/probe.hpp"
#include "sim/sim_helpers.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using test::Transfer;

namespace {

const double S = 1e8; // bytes per probe transfer

// The documented figures (platforms/README.md), written out independently of the catalogue.
const double kPcieBw = 15.754e9, kPcieRoute = 5.7e-6;
const double kNetRoute = 9.6e-6;      // InfiniBand: NCCL's network hop
const double kEthNetRoute = 37.62e-6; // Ethernet: 31.92 us NIC to NIC (measured) + the two GPU PCIe links
const double kNvlinkHop = 3.4e-6;

std::string preset(const std::string& name)
{
  return DDLSIM_SOURCE_DIR "/platforms/" + name;
}

/** Every ordered pair of GPU hosts has a route of at least one link and a latency within (0, max_latency]. */
void check_all_routes(test::ProbeEngine& p, std::size_t gpus, double max_latency_s)
{
  const auto hosts = p.gpu_hosts();
  REQUIRE(hosts.size() == gpus);
  for (const auto& a : hosts)
    for (const auto& b : hosts)
      if (a != b) {
        INFO(a << " -> " << b);
        const double lat = p.route_latency_s(a, b);
        CHECK(lat > 0);
        CHECK(lat <= max_latency_s * (1 + 1e-12));
      }
}

void check_time(double simulated, double expected)
{
  INFO("simulated " << simulated << " s, expected " << expected << " s");
  CHECK(test::relative_error(simulated, expected) < 1e-9);
}

} // namespace

TEST_CASE("preset p40-4x4-ib56: routes, intra-node, inter-node and a shared NIC")
{
  test::ProbeEngine p(preset("p40-4x4-ib56.xml"));
  check_all_routes(p, 16, kNetRoute);
  const auto t = p.run({{{"node0-gpu0", "node0-gpu1", S}},
                        {{"node0-gpu0", "node1-gpu0", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu1", "node1-gpu1", S}}});
  check_time(t[0], kPcieRoute + S / kPcieBw);
  check_time(t[1], kNetRoute + S / 6.03e9);
  check_time(t[2], kNetRoute + 2 * S / 6.03e9); // both flows cross node0's one FDR NIC: half each
}

TEST_CASE("preset p40-4x4-10gbe: routes, intra-node, inter-node and a shared NIC")
{
  test::ProbeEngine p(preset("p40-4x4-10gbe.xml"));
  check_all_routes(p, 16, kEthNetRoute);
  const auto t = p.run({{{"node2-gpu3", "node2-gpu0", S}},
                        {{"node3-gpu1", "node0-gpu2", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu3", "node2-gpu0", S}}});
  check_time(t[0], kPcieRoute + S / kPcieBw);
  check_time(t[1], kEthNetRoute + S / 1.25e9);
  check_time(t[2], kEthNetRoute + 2 * S / 1.25e9);
}

TEST_CASE("preset k80-pcie-8gpu: intra-board, cross-board, cross-socket, and a shared board link")
{
  test::ProbeEngine p(preset("k80-pcie-8gpu.xml"));
  check_all_routes(p, 8, kPcieRoute);
  CHECK(p.route_links("node0-gpu0", "node0-gpu1") ==
        std::vector<std::string>{"node0-gpu0-pcie_UP", "node0-gpu1-pcie_DOWN"});
  CHECK(p.route_links("node0-gpu1", "node0-gpu6") ==
        std::vector<std::string>{"node0-gpu1-pcie_UP", "node0-board0-pcie_UP", "node0-sw0-pcie_UP", "node0-qpi_DOWN",
                                 "node0-sw1-pcie_DOWN", "node0-board3-pcie_DOWN", "node0-gpu6-pcie_DOWN"});
  const auto t = p.run({{{"node0-gpu0", "node0-gpu1", S}},
                        {{"node0-gpu0", "node0-gpu2", S}},
                        {{"node0-gpu1", "node0-gpu6", S}},
                        {{"node0-gpu0", "node0-gpu2", S}, {"node0-gpu1", "node0-gpu3", S}},
                        {{"node0-gpu0", "node0-gpu1", S}, {"node0-gpu2", "node0-gpu3", S}},
                        {{"node0-gpu0", "node0-gpu4", S},
                         {"node0-gpu1", "node0-gpu5", S},
                         {"node0-gpu2", "node0-gpu6", S},
                         {"node0-gpu3", "node0-gpu7", S}}});
  check_time(t[0], kPcieRoute + S / kPcieBw);     // the two GK210 of one board, through the board's switch
  check_time(t[1], kPcieRoute + S / kPcieBw);     // board 0 -> board 1, same socket
  check_time(t[2], kPcieRoute + S / kPcieBw);     // socket 0 -> socket 1: QPI (19.2 GB/s) is not the bottleneck
  check_time(t[3], kPcieRoute + 2 * S / kPcieBw); // both GK210 of board 0 leave it: they share its x16 link
  check_time(t[4], kPcieRoute + S / kPcieBw);     // pairs inside their own boards: nothing shared
  check_time(t[5], kPcieRoute + 4 * S / kPcieBw); // four flows share socket 0's switch uplink
}

TEST_CASE("preset k80-4x8-ib56: routes, inter-node from either socket, and the shared NIC")
{
  test::ProbeEngine p(preset("k80-4x8-ib56.xml"));
  check_all_routes(p, 32, kNetRoute);
  const auto t = p.run({{{"node0-gpu0", "node1-gpu0", S}},
                        {{"node0-gpu7", "node3-gpu4", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu4", "node2-gpu4", S}}});
  check_time(t[0], kNetRoute + S / 6.03e9);
  check_time(t[1], kNetRoute + S / 6.03e9);
  check_time(t[2], kNetRoute + 2 * S / 6.03e9);
}

TEST_CASE("preset k80-4x8-10gbe: routes, intra-board, inter-node and the shared NIC")
{
  test::ProbeEngine p(preset("k80-4x8-10gbe.xml"));
  check_all_routes(p, 32, kEthNetRoute);
  const auto t = p.run({{{"node1-gpu4", "node1-gpu5", S}},
                        {{"node1-gpu0", "node2-gpu0", S}},
                        {{"node1-gpu0", "node2-gpu0", S}, {"node1-gpu1", "node3-gpu0", S}}});
  check_time(t[0], kPcieRoute + S / kPcieBw);
  check_time(t[1], kEthNetRoute + S / 1.25e9);
  check_time(t[2], kEthNetRoute + 2 * S / 1.25e9);
}

TEST_CASE("preset v100-dgx1-nvlink: one- and two-link pairs, a two-hop pair, a GPU to the CPU host")
{
  test::ProbeEngine p(preset("v100-dgx1-nvlink.xml"));
  check_all_routes(p, 8, 2 * kNvlinkHop);
  // Each GPU has 6 NVLink 2.0 links: the DGX-1 hybrid cube-mesh.
  CHECK(p.route_links("node0-gpu0", "node0-gpu5") ==
        std::vector<std::string>{"node0-nvlink0-1_UP", "node0-nvlink1-5_UP"});
  const auto t = p.run({{{"node0-gpu0", "node0-gpu3", S}},
                        {{"node0-gpu0", "node0-gpu1", S}},
                        {{"node0-gpu4", "node0-gpu0", S}},
                        {{"node0-gpu0", "node0-gpu5", S}},
                        {{"node0-gpu6", "node0-cpu", S}}});
  check_time(t[0], kNvlinkHop + S / 47.9e9);  // two links: the measured 47.9 GB/s
  check_time(t[1], kNvlinkHop + S / 23.95e9); // one link: half of it
  check_time(t[2], kNvlinkHop + S / 47.9e9);
  check_time(t[3], 2 * kNvlinkHop + S / 23.95e9); // through GPU 1: one link then two
  check_time(t[4], kPcieRoute / 2 + S / kPcieBw); // its own x16 link, its switch's uplink, QPI
}

TEST_CASE("preset v100-4x8-ib100: routes, NVLink inside, EDR across, the one NIC shared")
{
  test::ProbeEngine p(preset("v100-4x8-ib100.xml"));
  check_all_routes(p, 32, kNetRoute);
  const auto t = p.run({{{"node3-gpu2", "node3-gpu3", S}},
                        {{"node0-gpu0", "node1-gpu0", S}},
                        {{"node0-gpu7", "node2-gpu7", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu6", "node1-gpu6", S}}});
  check_time(t[0], kNvlinkHop + S / 47.9e9);
  check_time(t[1], kNetRoute + S / 12.2e9);
  check_time(t[2], kNetRoute + S / 12.2e9); // socket 1 -> QPI -> the NIC on GPU 0's PCIe switch
  check_time(t[3], kNetRoute + 2 * S / 12.2e9);
}
