// NCCL's ring, trees and choice (src/collectives/nccl.cpp) against their closed forms and bounds, and on 8 nodes x 8
// V100 over EDR against the flat algorithms.
#include "analytical/alpha_beta.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/output_file.hpp"
#include "engine/sweep.hpp"
#include "platform/cluster_spec.hpp"
#include "platform/platform_xml.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace ddlsim;

namespace {

constexpr double kBandwidth = 10e9;
const analytical::Hop kHop{1e-6, kBandwidth}; // the star: two links of 0.5 us each

engine::SweepOutput sweep_star(const std::string& algorithm, int ranks, const std::vector<std::uint64_t>& sizes,
                               const collectives::CollectiveOptions& options = {})
{
  test::StarSpec star;
  star.hosts = ranks;
  star.link_bytes_per_s = kBandwidth;
  star.link_latency_s = 0.5e-6;
  engine::SweepInput in;
  in.platform_file = test::write_star_platform(star);
  in.algorithm = collectives::parse_algorithm(algorithm);
  in.collective = options;
  in.sizes = sizes;
  return engine::run_collective_sweep(in);
}

engine::SweepOutput sweep_file(const std::string& platform, const std::string& algorithm,
                               const std::vector<std::uint64_t>& sizes)
{
  engine::SweepInput in;
  in.platform_file = platform;
  in.algorithm = collectives::parse_algorithm(algorithm);
  in.sizes = sizes;
  return engine::run_collective_sweep(in);
}

void check_exact(const engine::SweepOutput& out, const std::string& algorithm)
{
  const auto spec = collectives::parse_algorithm(algorithm);
  for (const auto& pt : out.points) {
    const double expected = collectives::closed_form_s(spec, pt.bytes, out.closed_form);
    INFO(algorithm << ", " << pt.bytes << " B: simulated " << pt.time_s << " s, closed form " << expected << " s");
    CHECK(test::relative_error(pt.time_s, expected) < 1e-9);
  }
}

/** One of the two trees alone, with M/2, at its hops (lower bound) and at half their bandwidth (upper bound). */
std::pair<double, double> tree_bounds(const collectives::NcclShape& shape, std::uint64_t bytes, std::uint64_t chunk)
{
  analytical::TreeShape slow = shape.trees[0];
  for (auto& h : slow.up)
    h.bandwidth_bytes_per_s /= 2;
  const std::uint64_t half = bytes - bytes / 2;
  return {analytical::tree_allreduce_s(shape.trees[0], half, chunk), analytical::tree_allreduce_s(slow, half, chunk)};
}

const std::uint64_t kTreeChunk = 256 << 10;

} // namespace

TEST_CASE("nccl-ring on the star, P = 8, equals the ring's closed form")
{
  const auto out = sweep_star("nccl-ring", 8, {1 << 12, 1 << 20, 48 << 20});
  CHECK(out.closed_form.nccl.ring == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}); // every hop alike: rank order
  CHECK(out.closed_form.nccl.ring_hop.alpha_s == Approx(kHop.alpha_s));
  check_exact(out, "nccl-ring");
}

TEST_CASE("nccl-ring on 2 nodes x 4 NVLink GPUs over EDR: closed form at the EDR hop, exact")
{
  const auto out = sweep_file(test::write_nvlink_ib_platform(), "nccl-ring", {1 << 12, 1 << 20, 48 << 20});
  CHECK(out.closed_form.nccl.topology.nodes == 2);
  CHECK(out.closed_form.nccl.ring_hop.alpha_s == Approx(9.6e-6));
  check_exact(out, "nccl-ring");
}

TEST_CASE("nccl-tree on 2 nodes x 4 NVLink GPUs over EDR: between one tree with M/2 at full and at half bandwidth")
{
  const std::vector<std::uint64_t> sizes{1 << 12, 1 << 20, 16 << 20};
  const auto out = sweep_file(test::write_nvlink_ib_platform(), "nccl-tree", sizes);
  const auto& shape = out.closed_form.nccl;
  REQUIRE(shape.trees[0].order.size() == 8);
  const auto spec = collectives::parse_algorithm("nccl-tree");
  for (const auto& pt : out.points) {
    const auto [lower, upper] = tree_bounds(shape, pt.bytes, kTreeChunk);
    INFO(pt.bytes << " B: " << lower << " <= " << pt.time_s << " <= " << upper);
    CHECK(collectives::closed_form_s(spec, pt.bytes, out.closed_form) == Approx(lower).epsilon(1e-12));
    CHECK(pt.time_s >= lower * (1 - 1e-9));
    CHECK(pt.time_s <= upper * (1 + 1e-9));
    CHECK(pt.rank_bytes_sent == 2 * 7 * pt.bytes); // two trees over 8 members, each edge M/2 up and down
  }
}

TEST_CASE("nccl on the star, P = 8: the ring at every size on one node, LL then Simple, exact")
{
  // One node of P40 hosts without NVLink names: PCI latencies, no LL128. The tree's 2 x 7 hops of hwLat[PCI][Tree]
  // (LL 4.4 + 14 x 1.0 us) never beat the ring's 14 (3.6 + 14 x 1.0 us), so NCCL's model picks the ring.
  const std::vector<std::uint64_t> sizes{1 << 10, 1 << 16, 1 << 20, 64 << 20};
  const auto out = sweep_star("nccl", 8, sizes);
  const auto& t = out.closed_form.nccl.topology;
  CHECK(t.nodes == 1);
  CHECK_FALSE(t.nvlink);
  CHECK_FALSE(t.ll128);
  CHECK(t.ring_bus_gbps == Approx(10));
  std::vector<collectives::NcclProto> protos;
  for (const auto& pt : out.points) {
    const auto c = collectives::nccl_choose(t, pt.bytes);
    protos.push_back(c.proto);
    const double base = collectives::nccl_base_latency_us(c.algo, c.proto) * 1e-6;
    const auto wire = collectives::nccl_wire_bytes(pt.bytes, collectives::nccl_efficiency(t, c.algo, c.proto));
    INFO(pt.bytes << " B: " << to_string(c.algo) << "/" << to_string(c.proto) << ", simulated " << pt.time_s);
    CHECK(c.algo == collectives::NcclAlgo::Ring);
    CHECK(test::relative_error(pt.time_s, base + analytical::ring_allreduce_s(8, wire, kHop)) < 1e-9);
    CHECK(test::relative_error(pt.time_s, collectives::closed_form_s(collectives::parse_algorithm("nccl"), pt.bytes,
                                                                     out.closed_form)) < 1e-9);
  }
  // LL (4 x the bytes, 3.6 us) for small messages, Simple (8.4 us) for large.
  CHECK(protos.front() == collectives::NcclProto::LL);
  CHECK(protos.back() == collectives::NcclProto::Simple);
}

TEST_CASE("nccl with --chunks 2 on the star, P = 8: two ring allreduces of half the wire bytes, as its closed form")
{
  collectives::CollectiveOptions o;
  o.chunks = 2;
  const auto out = sweep_star("nccl", 8, {1 << 10, 64 << 20}, o);
  const auto& t = out.closed_form.nccl.topology;
  for (const auto& pt : out.points) {
    const auto c = collectives::nccl_choose(t, pt.bytes);
    const double base = collectives::nccl_base_latency_us(c.algo, c.proto) * 1e-6;
    const auto wire = collectives::nccl_wire_bytes(pt.bytes, collectives::nccl_efficiency(t, c.algo, c.proto));
    INFO(pt.bytes << " B: simulated " << pt.time_s);
    CHECK(c.algo == collectives::NcclAlgo::Ring);
    CHECK(test::relative_error(pt.time_s, base + 2 * analytical::ring_allreduce_s(8, wire / 2, kHop)) < 1e-9);
    CHECK(test::relative_error(pt.time_s, collectives::closed_form_s(collectives::parse_algorithm("nccl"), pt.bytes,
                                                                     out.closed_form)) < 1e-9);
  }
}

TEST_CASE("nccl on 8 nodes x 8 V100 over EDR: never the most pessimistic of the flat ring and dbtree")
{
  const auto spec = platform::parse_cluster_string("nodes=8,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100");
  char path[] = "/tmp/ddlsim-nccl-8x8-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  write_output_file(path, platform::platform_xml(spec));
  const std::vector<std::uint64_t> sizes{8, 256 << 10, 8 << 20, 256 << 20};
  const auto out = sweep_file(path, "nccl", sizes);
  std::remove(path);
  const auto& t = out.closed_form.nccl.topology;
  CHECK(t.ranks == 64);
  CHECK(t.nodes == 8);
  CHECK(t.nvlink); // the ring inside a DGX-1 cube mesh found an NVLink-only cycle
  CHECK(t.ll128);
  // The flat ring visits the ranks node by node here, so its exact time is the ring's closed form at NCCL's ring hop
  // (EDR); dbtree: its closed form, a lower bound of its simulated time.
  for (const auto& pt : out.points) {
    const double ring = analytical::ring_allreduce_s(64, pt.bytes, out.closed_form.nccl.ring_hop);
    const double dbtree = collectives::closed_form_s(collectives::parse_algorithm("dbtree"), pt.bytes, out.closed_form);
    const double worst = std::max(ring, dbtree);
    INFO(pt.bytes << " B: nccl " << pt.time_s * 1e6 << " us, ring " << ring * 1e6 << " us, dbtree >= " << dbtree * 1e6
                  << " us");
    CHECK(pt.time_s < worst);
  }
  // 8 B: NCCL's tree (LL) instead of the ring's 126 network latencies: over 5 times faster than the ring, and within
  // the tree's bounds (3 x 8 / 0.9 = 27 bytes on the wire).
  const auto c = collectives::nccl_choose(t, 8);
  REQUIRE(c.algo == collectives::NcclAlgo::Tree);
  REQUIRE(c.proto == collectives::NcclProto::LL);
  const auto [lower, upper] = tree_bounds(out.closed_form.nccl, 27, kTreeChunk);
  CHECK(out.points[0].time_s >= 4.4e-6 + lower * (1 - 1e-9));
  CHECK(out.points[0].time_s <= 4.4e-6 + upper * (1 + 1e-9));
  CHECK(out.points[0].time_s * 5 < analytical::ring_allreduce_s(64, 8, out.closed_form.nccl.ring_hop));
  // 256 MiB: NCCL's ring with the Simple protocol, the ring's exact time plus baseLat 8.4 us.
  CHECK(test::relative_error(out.points[3].time_s, 8.4e-6 + analytical::ring_allreduce_s(
                                                                64, 256 << 20, out.closed_form.nccl.ring_hop)) < 1e-9);
}
