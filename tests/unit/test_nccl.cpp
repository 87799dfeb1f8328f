// NCCL 2.5's tuning model and structures (src/collectives/nccl_tuning.cpp): every number worked out by hand from
// tuning.cc's tables, the trees of trees.cc's illustration, the ring order through a topology.
#include "collectives/algorithm_table.hpp"
#include "collectives/nccl_tuning.hpp"
#include "common/error.hpp"
#include "stack/stack_io.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim::collectives;

namespace {

/** 8 nodes x 8 V100 on NVLink, 12 GB/s bus bandwidth for ring and tree. */
NcclTopology eight_by_eight()
{
  NcclTopology t;
  t.ranks = 64;
  t.nodes = 8;
  t.nvlink = true;
  t.ll128 = true;
  t.ring_bus_gbps = 12;
  t.tree_bus_gbps = 12;
  return t;
}

} // namespace

TEST_CASE("NCCL latencies on 8 x 8 NVLink GPUs: baseLat + 2(P-1) hwLat[NET] (ring), 2((G-1) intra + log2 N NET) (tree)")
{
  const NcclTopology t = eight_by_eight();
  // Ring: 126 steps at hwLat[NET][Ring]: LL 0.9, LL128 2.5, Simple 6.6 us.
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL).latency_us == Approx(3.6 + 126 * 0.9));
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL128).latency_us == Approx(3.6 + 126 * 2.5));
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::Simple).latency_us == Approx(8.4 + 126 * 6.6));
  // Tree: 7 NVLink hops (LL 0.5, LL128 1.9, Simple 28) and log2(8) = 3 network hops (5.0, 7.5, 50), twice.
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::LL).latency_us == Approx(4.4 + 2 * (7 * 0.5 + 3 * 5.0)));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::LL128).latency_us == Approx(4.4 + 2 * (7 * 1.9 + 3 * 7.5)));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::Simple).latency_us == Approx(2 * (7 * 28.0 + 3 * 50.0)));
  // One node of PCIe GPUs: the ring's hops are PCI (LL 1.0 us), no network.
  NcclTopology one{8, 1, false, false, 12, 12};
  CHECK(nccl_cost(one, NcclAlgo::Ring, NcclProto::LL).latency_us == Approx(3.6 + 14 * 1.0));
  CHECK(nccl_cost(one, NcclAlgo::Tree, NcclProto::LL).latency_us == Approx(4.4 + 2 * (7 * 1.0 + 0 * 5.0)));
}

TEST_CASE("NCCL bandwidths: per-protocol refinements, caps, and bus to algorithm bandwidth")
{
  NcclTopology t = eight_by_eight();
  const double ring_ratio = 64.0 / 126;
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::Simple).bandwidth_gbps == Approx(12 * ring_ratio));
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL).bandwidth_gbps == Approx(3 * ring_ratio));
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL128).bandwidth_gbps == Approx(12 * 120.0 / 128 * ring_ratio));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::Simple).bandwidth_gbps == Approx(12 * 0.9 * 0.5));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::LL).bandwidth_gbps == Approx(12 * 0.9 / 3 * 0.5));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::LL128).bandwidth_gbps == Approx(12 * 0.9 * 7 / 9 * 0.5));
  CHECK(nccl_efficiency(t, NcclAlgo::Ring, NcclProto::LL) == Approx(0.25));
  CHECK(nccl_efficiency(t, NcclAlgo::Tree, NcclProto::Simple) == Approx(0.9));
  // Caps: LL128 ring at 100 GB/s, tree at 70 GB/s across nodes (90 on one node).
  t.ring_bus_gbps = t.tree_bus_gbps = 200;
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL128).bandwidth_gbps == Approx(100 * ring_ratio));
  CHECK(nccl_efficiency(t, NcclAlgo::Ring, NcclProto::LL128) == Approx(0.5));
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::Simple).bandwidth_gbps == Approx(70 * 0.5));
  t.nodes = 1;
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::Simple).bandwidth_gbps == Approx(90 * 0.5));
  // LL128 only where enabled (Volta on NVLink).
  t.ll128 = false;
  CHECK(nccl_cost(t, NcclAlgo::Ring, NcclProto::LL128).bandwidth_gbps == 0);
  CHECK(nccl_cost(t, NcclAlgo::Tree, NcclProto::LL128).bandwidth_gbps == 0);
}

TEST_CASE("NCCL's choice on 8 x 8: tree/LL for 8 bytes, ring/Simple for 256 MiB, as NCCL's model computes it")
{
  const NcclTopology t = eight_by_eight();
  // 8 B: tree/LL 41.4 us + 8 B / (1.8 GB/s x correction 1.0) beats ring/LL's 117 us.
  const NcclChoice small = nccl_choose(t, 8);
  CHECK(small.algo == NcclAlgo::Tree);
  CHECK(small.proto == NcclProto::LL);
  CHECK(small.model_us == Approx(41.4 + 8 / (1000 * 1.8)));
  // 256 MiB (no tree correction from 2^28 B up): ring/Simple 840 + 2^28 / (1000 x 12 x 64/126) = 44880.6 us against
  // ring/LL128 318.6 + 2^28 / (1000 x 11.25 x 64/126) = 47296.0 and tree/Simple 692 + 2^28 / 5400 = 50402.5.
  const NcclChoice large = nccl_choose(t, 1ull << 28);
  CHECK(large.algo == NcclAlgo::Ring);
  CHECK(large.proto == NcclProto::Simple);
  CHECK(large.model_us == Approx(840 + double(1ull << 28) / (1000 * 12 * 64.0 / 126)));
  // The tree correction factor: index log2(bytes / 64), e.g. 64 KiB -> index 10 (Simple .6); none from 2^28 B.
  CHECK(nccl_tree_correction(NcclProto::Simple, 64 << 10) == Approx(.6));
  CHECK(nccl_tree_correction(NcclProto::LL, 63) == Approx(1.0));
  CHECK(nccl_tree_correction(NcclProto::Simple, 1ull << 28) == Approx(1.0));
  CHECK(nccl_tree_correction(NcclProto::Simple, (1ull << 28) - 1) == Approx(.9));
}

TEST_CASE("NCCL's double binary tree: trees.cc's illustration on 14 nodes, and for an even count every node inner in "
          "one tree at most")
{
  // Tree 0 (trees.cc): 0 -> 8; 8 -> 4, 12; 12 -> 10, 13; 13 -> up 12 (14 is out of bounds).
  CHECK(nccl_dtree(14, 0, 0).up == -1);
  CHECK(nccl_dtree(14, 0, 0).down0 == 8);
  CHECK(nccl_dtree(14, 8, 0).down0 == 4);
  CHECK(nccl_dtree(14, 8, 0).down1 == 12);
  CHECK(nccl_dtree(14, 12, 0).down0 == 10);
  CHECK(nccl_dtree(14, 12, 0).down1 == 13);
  CHECK(nccl_dtree(14, 13, 0).up == 12);
  // Tree 1, even count: tree 0 shifted by one: 1 is its root with child 9, 0 is a leaf under 13.
  CHECK(nccl_dtree(14, 1, 1).up == -1);
  CHECK(nccl_dtree(14, 1, 1).down0 == 9);
  CHECK(nccl_dtree(14, 0, 1).up == 13);
  CHECK(nccl_dtree(14, 0, 1).down0 == -1);
  // Odd count: mirrored, 7 nodes: tree 1's root is 6.
  CHECK(nccl_dtree(7, 6, 1).up == -1);
  for (int n = 2; n <= 16; n += 2) {
    int inner_twice = 0;
    for (int v = 0; v < n; ++v) {
      const auto a = nccl_dtree(n, v, 0), b = nccl_dtree(n, v, 1);
      inner_twice += (a.down0 != -1 || a.down1 != -1) && (b.down0 != -1 || b.down1 != -1);
    }
    INFO(n << " nodes");
    CHECK(inner_twice == 0); // the shift's guarantee (the mirror for odd counts gives none)
  }
}

TEST_CASE("NCCL's ring order avoids a slow pair inside a node, and rings visit a node's GPUs, then the next node's")
{
  // One node of 4: every pair 20 GB/s except 1 <-> 2 (5 GB/s): the cycle 0 1 3 2 uses fast hops only.
  auto route = [](int a, int b) {
    const bool slow = (a == 1 && b == 2) || (a == 2 && b == 1);
    return ddlsim::analytical::Hop{1e-6, slow ? 5e9 : 20e9};
  };
  const NcclShape one = nccl_shape({0, 0, 0, 0}, route, true, true);
  CHECK(one.ring == std::vector<int>{0, 1, 3, 2});
  CHECK(one.ring_hop.bandwidth_bytes_per_s == 20e9);
  CHECK(one.topology.ring_bus_gbps == 20);
  // Two nodes given interleaved (members 0, 2 on node 5; 1, 3 on node 7): node 5's GPUs, then node 7's.
  auto uniform = [](int, int) { return ddlsim::analytical::Hop{1e-6, 10e9}; };
  const NcclShape two = nccl_shape({5, 7, 5, 7}, uniform, false, false);
  CHECK(two.ring == std::vector<int>{0, 2, 1, 3});
  CHECK(two.topology.nodes == 2);
  // Trees: chains 0 -> 2 and 1 -> 3; tree 0's root is node 5's head (0) with node 7's head (1) below it.
  CHECK(two.trees[0].order.front() == 0);
  CHECK(two.trees[0].children[0] == std::vector<int>{1, 2});
  CHECK(two.trees[0].children[1] == std::vector<int>{3});
  CHECK(two.trees[1].order.front() == 1); // shifted: node 7 is the root of tree 1
}

TEST_CASE("nccl closed forms need NCCL's structures, and the nccl stack chooses the nccl algorithm")
{
  ClosedFormInput in;
  in.ranks = 4;
  for (const char* name : {"nccl", "nccl-ring", "nccl-tree"})
    CHECK_THROWS_AS(closed_form_s(parse_algorithm(name), 1024, in), ddlsim::ConfigError);
  const auto nccl = ddlsim::stack::load_stack("nccl");
  REQUIRE(nccl.algorithm);
  CHECK(nccl.algorithm->for_size(1, 64) == AlgorithmId::Nccl);
  CHECK(nccl.profile.ideal()); // its costs are the algorithm's: the exact wire model and closed forms hold
  CHECK_THROWS_AS(parse_algorithm("nccl<=1MiB,ring"), ddlsim::ConfigError); // not a side of a size switch
}
