// Generated clusters built in memory (`ddlsim run --cluster`): the same probes as the shipped presets, fat-tree
// oversubscription, and a 1024-node build that routes.
#include "common/output_file.hpp"
#include "hardware/link_catalog.hpp"
#include "platform/cluster_spec.hpp"
#include "platform/platform_xml.hpp"
#include "sim/probe.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

using namespace ddlsim;

namespace {

const double S = 1e8;

void check_time(double simulated, double expected)
{
  INFO("simulated " << simulated << " s, expected " << expected << " s");
  CHECK(test::relative_error(simulated, expected) < 1e-9);
}

/** Every GPU pair: inside a node, the latency of the layout's route; across nodes the NIC class's GPU-to-GPU
 *  route latency (9.6 us, NCCL's network hop, for InfiniBand; 37.62 us for Ethernet). */
void check_route_latencies(test::ProbeEngine& p, const platform::ClusterSpec& spec)
{
  const auto layout = platform::build_node_layout(spec);
  const auto hosts = p.gpu_hosts();
  REQUIRE(hosts.size() == static_cast<std::size_t>(spec.nodes * spec.gpus_per_node));
  for (std::size_t a = 0; a < hosts.size(); ++a)
    for (std::size_t b = 0; b < hosts.size(); ++b) {
      if (a == b)
        continue;
      const int na = static_cast<int>(a) / spec.gpus_per_node, nb = static_cast<int>(b) / spec.gpus_per_node;
      double expected = platform::effective_nic_link(spec).route_latency_s;
      if (na == nb) {
        const int ga = static_cast<int>(a) % spec.gpus_per_node, gb = static_cast<int>(b) % spec.gpus_per_node;
        expected = 0;
        for (const auto& h : layout.routes[std::min(ga, gb)][std::max(ga, gb)])
          expected += layout.links[h.link].latency_s;
      }
      INFO(hosts[a] << " -> " << hosts[b]);
      CHECK(p.route_latency_s(hosts[a], hosts[b]) == Approx(expected).epsilon(1e-12));
    }
}

} // namespace

TEST_CASE("generated in memory, 2 x 4 P40 over FDR: routes, intra-node, inter-node, a shared NIC")
{
  const auto s = test::star_cluster(2, 4, "P40", "pcie", "ib56");
  test::ProbeEngine p(s);
  check_route_latencies(p, s);
  const auto t = p.run({{{"node0-gpu0", "node0-gpu3", S}},
                        {{"node0-gpu1", "node1-gpu2", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu1", "node1-gpu1", S}}});
  check_time(t[0], 5.7e-6 + S / 15.754e9);
  check_time(t[1], 9.6e-6 + S / 6.03e9);
  check_time(t[2], 9.6e-6 + 2 * S / 6.03e9);
}

TEST_CASE("generated in memory, 2 x 8 K80 over 25GbE with 2 NICs: board, socket, inter-node, NIC sharing")
{
  auto s = test::star_cluster(2, 8, "K80", "pcie", "25gbe");
  s.nics_per_node = 2;
  test::ProbeEngine p(s);
  check_route_latencies(p, s);
  const auto t = p.run({{{"node1-gpu6", "node1-gpu7", S}},
                        {{"node1-gpu0", "node1-gpu7", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu4", "node1-gpu4", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node0-gpu3", "node1-gpu3", S}},
                        {{"node0-gpu0", "node0-gpu2", S}, {"node0-gpu1", "node0-gpu3", S}}});
  check_time(t[0], 5.7e-6 + S / 15.754e9);
  check_time(t[1], 5.7e-6 + S / 15.754e9);
  check_time(t[2], 37.62e-6 + S / 3.125e9);     // GPUs 0 and 4 use NICs 0 and 1: nothing shared
  check_time(t[3], 37.62e-6 + 2 * S / 3.125e9); // GPUs 0 and 3 share NIC 0
  check_time(t[4], 5.7e-6 + 2 * S / 15.754e9);  // both GK210 of board 0 share its link
}

TEST_CASE("generated in memory, 2 x 8 A100 over NVSwitch and HDR: routes, NVSwitch, HDR")
{
  auto s = test::star_cluster(2, 8, "A100-SXM4-40GB", "nvswitch", "ib200");
  s.nics_per_node = 8;
  test::ProbeEngine p(s);
  check_route_latencies(p, s);
  const auto t = p.run({{{"node0-gpu0", "node0-gpu7", S}},
                        {{"node0-gpu0", "node0-gpu1", S}, {"node0-gpu2", "node0-gpu1", S}},
                        {{"node0-gpu3", "node1-gpu3", S}, {"node0-gpu4", "node1-gpu4", S}}});
  check_time(t[0], 3.4e-6 + S / 300e9);     // 12 NVLink 3.0 links x 25 GB/s
  check_time(t[1], 3.4e-6 + 2 * S / 300e9); // two senders into GPU 1's NVSwitch port
  check_time(t[2], 9.6e-6 + S / 24e9);      // one HDR NIC per GPU (behind PCIe 4.0, 31.5 GB/s): nothing shared
}

TEST_CASE("generated in memory, fat-tree 4 nodes, 2 per leaf, 2:1 oversubscribed: cross-leaf flows share the uplink")
{
  auto s = test::star_cluster(4, 2, "V100-PCIe", "pcie", "ib100");
  s.topology = platform::Topology::FatTree;
  s.nodes_per_leaf = 2;
  s.oversubscription = 2;
  test::ProbeEngine p(s);
  check_route_latencies(p, s);
  // Leaf uplink: 2 nodes x 1 NIC x 12.2 GB/s / 2 = 12.2 GB/s.
  const auto t = p.run({{{"node0-gpu0", "node2-gpu0", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node2-gpu0", "node3-gpu0", S}},
                        {{"node0-gpu0", "node2-gpu0", S}, {"node1-gpu0", "node3-gpu0", S}}});
  check_time(t[0], 9.6e-6 + S / 12.2e9);
  check_time(t[1], 9.6e-6 + S / 12.2e9);     // inside each leaf: full bandwidth
  check_time(t[2], 9.6e-6 + 2 * S / 12.2e9); // two flows share leaf 0's uplink
}

TEST_CASE("generated XML, fat-tree 4 nodes, 2 per leaf, 2:1: the same probes as in memory")
{
  auto s = test::star_cluster(4, 2, "V100-PCIe", "pcie", "ib100");
  s.topology = platform::Topology::FatTree;
  s.nodes_per_leaf = 2;
  s.oversubscription = 2;
  char path[] = "/tmp/ddlsim-test-fattree-XXXXXX.xml";
  const int fd = mkstemps(path, 4);
  REQUIRE(fd >= 0);
  close(fd);
  write_output_file(path, platform::platform_xml(s));
  test::ProbeEngine p{std::string(path)};
  std::remove(path);
  check_route_latencies(p, s);
  const auto t = p.run({{{"node0-gpu0", "node2-gpu0", S}},
                        {{"node0-gpu0", "node1-gpu0", S}, {"node2-gpu0", "node3-gpu0", S}},
                        {{"node0-gpu0", "node2-gpu0", S}, {"node1-gpu0", "node3-gpu0", S}}});
  check_time(t[0], 9.6e-6 + S / 12.2e9);
  check_time(t[1], 9.6e-6 + S / 12.2e9);
  check_time(t[2], 9.6e-6 + 2 * S / 12.2e9);
}

TEST_CASE("generated in memory, 1024 nodes x 2 GPUs in a fat-tree: it builds and routes")
{
  auto s = test::star_cluster(1024, 2, "V100-PCIe", "pcie", "ib100");
  s.topology = platform::Topology::FatTree;
  s.nodes_per_leaf = 32;
  s.oversubscription = 4;
  test::ProbeEngine p(s);
  const auto hosts = p.gpu_hosts();
  REQUIRE(hosts.size() == 2048);
  CHECK(hosts[2] == "node1-gpu0");
  CHECK(hosts.back() == "node1023-gpu1");
  CHECK(p.route_latency_s("node0-gpu0", "node0-gpu1") == Approx(5.7e-6).epsilon(1e-12));
  CHECK(p.route_latency_s("node0-gpu0", "node31-gpu1") == Approx(9.6e-6).epsilon(1e-12));
  CHECK(p.route_latency_s("node0-gpu0", "node1023-gpu1") == Approx(9.6e-6).epsilon(1e-12));
  CHECK(p.route_latency_s("node777-gpu1", "node12-gpu0") == Approx(9.6e-6).epsilon(1e-12));
  CHECK(p.route_links("node0-gpu0", "node1023-gpu1") ==
        std::vector<std::string>{"node0-gpu0-pcie_UP", "node0-nic0_UP", "leaf0-up_UP", "leaf31-up_DOWN",
                                 "node1023-nic0_DOWN", "node1023-gpu1-pcie_DOWN"});
  // Leaf uplink 32 x 12.2 GB/s / 4 = 97.6 GB/s: 8 nodes of leaf 0 sending out at once each still get a whole NIC.
  std::vector<test::Transfer> burst;
  for (int i = 0; i < 8; ++i)
    burst.push_back({"node" + std::to_string(i) + "-gpu0", "node" + std::to_string(1016 + i) + "-gpu0", S});
  const auto t = p.run({{{"node5-gpu1", "node900-gpu0", S}}, burst});
  check_time(t[0], 9.6e-6 + S / 12.2e9);
  check_time(t[1], 9.6e-6 + S / 12.2e9);
}
