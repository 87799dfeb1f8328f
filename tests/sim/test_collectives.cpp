// Simulation tests: every allreduce algorithm against its closed form on contention-free platforms, and
// its byte counts (docs/collectives.md has the derivations).
#include "analytical/alpha_beta.hpp"
#include "collectives/algorithm_table.hpp"
#include "engine/sweep.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

// Star: every route crosses two links of 0.5 us and 10 GB/s: alpha = 1 us, B = 10 GB/s.
constexpr double kLinkLatency = 0.5e-6;
constexpr double kBandwidth = 10e9;
const analytical::Hop kHop{2 * kLinkLatency, kBandwidth};

engine::SweepOutput sweep(const std::string& algorithm, int ranks, const std::vector<std::uint64_t>& sizes,
                          const collectives::CollectiveOptions& options = {}, int extra_hosts = 0)
{
  test::StarSpec star;
  star.hosts = ranks;
  star.link_bytes_per_s = kBandwidth;
  star.link_latency_s = kLinkLatency;
  star.extra_hosts = extra_hosts;
  engine::SweepInput in;
  in.platform_file = test::write_star_platform(star);
  in.algorithm = collectives::parse_algorithm(algorithm);
  in.collective = options;
  in.sizes = sizes;
  return engine::run_collective_sweep(in);
}

/** Sizes divisible by every p' <= 16 and by the tree chunk count: small (latency-bound) to large. */
const std::vector<std::uint64_t> kSizes{1 << 12, 1 << 20, 48 << 20};

void check(const std::string& algorithm, int ranks, const collectives::CollectiveOptions& options = {},
           const std::vector<std::uint64_t>& sizes = kSizes)
{
  const auto out = sweep(algorithm, ranks, sizes, options);
  CHECK(out.closed_form.hops.flat.alpha_s == Approx(kHop.alpha_s).epsilon(1e-12));
  CHECK(out.closed_form.ranks == ranks);
  const auto spec = collectives::parse_algorithm(algorithm);
  for (const auto& pt : out.points) {
    const double expected = collectives::closed_form_s(spec, pt.bytes, out.closed_form);
    INFO(algorithm << ", P = " << ranks << ", " << pt.bytes << " B: simulated " << pt.time_s << " s, closed form "
                   << expected << " s");
    CHECK(test::relative_error(pt.time_s, expected) < 1e-9);
  }
}

collectives::CollectiveOptions costly()
{
  collectives::CollectiveOptions o;
  o.msg_overhead_s = 2e-6;
  o.reduce_s_per_byte = 0.05e-9;
  return o;
}

} // namespace

TEST_CASE("ring with per-message overhead and reduction cost, P = 8, equals its closed form")
{
  check("ring", 8, costly());
}
TEST_CASE("ring, P = 5 (any P, no fold), equals its closed form")
{
  check("ring", 5, {}, {5000, 5 << 20, 60 << 20});
}

TEST_CASE("recursive doubling, P = 2, equals its closed form")
{
  check("rd", 2);
}
TEST_CASE("recursive doubling, P = 8, with overhead and reduction cost, equals its closed form")
{
  check("rd", 8, costly());
}
TEST_CASE("recursive doubling, P = 16, equals its closed form")
{
  check("rd", 16);
}
TEST_CASE("recursive doubling, P = 6 (not a power of two), equals its closed form")
{
  check("rd", 6, costly());
}

TEST_CASE("halving-doubling, P = 2, equals its closed form")
{
  check("hd", 2);
}
TEST_CASE("halving-doubling, P = 4, equals its closed form")
{
  check("hd", 4);
}
TEST_CASE("halving-doubling, P = 16, with overhead and reduction cost, equals its closed form")
{
  check("hd", 16, costly());
}
TEST_CASE("halving-doubling, P = 12 (not a power of two), equals its closed form")
{
  check("hd", 12, costly());
}

TEST_CASE("pipelined tree, P = 2, equals its recurrence")
{
  check("tree", 2);
}
TEST_CASE("pipelined tree, P = 7 (full tree), 256 KiB chunks, equals its recurrence")
{
  collectives::CollectiveOptions o = costly();
  o.chunk_bytes = 256 << 10;
  check("tree", 7, o);
}
TEST_CASE("tree with --chunks: P = 2, 2 chunks of 1000 B, worked out by hand")
{
  // The child sends its 2 chunks up one after the other (1 us + 1000 B / 10 GB/s = 1.1 us each), then the root sends
  // them down the same way: 4 x 1.1 us = 4.4 us. One chunk (the 1 MiB default) would take 2 x 1.2 us = 2.4 us.
  collectives::CollectiveOptions o;
  o.chunks = 2;
  const auto chunked = sweep("tree", 2, {2000}, o);
  CHECK(test::relative_error(chunked.points[0].time_s, 4.4e-6) < 1e-9);
}
TEST_CASE("tree with --chunks 4, P = 7, equals its recurrence with chunks of ceil(M/4) bytes")
{
  collectives::CollectiveOptions o = costly();
  o.chunks = 4;
  const auto out = sweep("tree", 7, {4000, 3 << 20}, o);
  const analytical::Costs c{2e-6, 0.05e-9};
  CHECK(test::relative_error(out.points[0].time_s, analytical::tree_allreduce_s(7, 4000, 1000, kHop, c)) < 1e-9);
  CHECK(test::relative_error(out.points[1].time_s, analytical::tree_allreduce_s(7, 3 << 20, 3 << 18, kHop, c)) < 1e-9);
  const auto spec = collectives::parse_algorithm("tree");
  for (const auto& pt : out.points) // the closed form the CLI prints reads --chunks too
    CHECK(test::relative_error(pt.time_s, collectives::closed_form_s(spec, pt.bytes, out.closed_form)) < 1e-9);
}
TEST_CASE("ring with --chunks 3, P = 4: three ring allreduces of M/3 one after the other")
{
  collectives::CollectiveOptions o = costly();
  o.chunks = 3;
  const auto out = sweep("ring", 4, {12000, 12 << 20}, o);
  const auto spec = collectives::parse_algorithm("ring");
  for (const auto& pt : out.points) {
    const double expected = 3 * analytical::ring_allreduce_s(4, pt.bytes / 3, kHop, {2e-6, 0.05e-9});
    CHECK(test::relative_error(pt.time_s, expected) < 1e-9);
    CHECK(test::relative_error(pt.time_s, collectives::closed_form_s(spec, pt.bytes, out.closed_form)) < 1e-9);
  }
}
TEST_CASE("pipelined tree, P = 16, equals its recurrence")
{
  check("tree", 16);
}

TEST_CASE("the size switch runs the small algorithm up to its threshold and the large one above")
{
  check("rd<=1MiB,hd", 8, costly());
  // 1 MiB is at the threshold (rd), 48 MiB above (hd): the closed forms differ, so the check above tells.
  CHECK(analytical::rd_allreduce_s(8, 48 << 20, kHop) != Approx(analytical::hd_allreduce_s(8, 48 << 20, kHop)));
}

TEST_CASE("halving-doubling moves 2(P-1)M bytes, like the ring")
{
  const std::uint64_t m = 16 << 20;
  const auto out = sweep("hd", 8, {m});
  CHECK(out.points[0].rank_bytes_sent == 2 * 7 * m); // each of 8 ranks sends 2 (1 - 1/8) M
}

TEST_CASE("recursive doubling moves P log2(P) M bytes")
{
  const std::uint64_t m = 1 << 20;
  const auto out = sweep("rd", 8, {m});
  CHECK(out.points[0].rank_bytes_sent == 8 * 3 * m);
}

TEST_CASE("recursive doubling on 6 ranks moves the fold's 2 x 2 M plus 4 x 2 M")
{
  const std::uint64_t m = 1 << 20;
  const auto out = sweep("rd", 6, {m});
  CHECK(out.points[0].rank_bytes_sent == 2 * 2 * m + 4 * 2 * m);
}

TEST_CASE("tree moves 2(P-1)M bytes: every non-root sends M up and every edge carries M down")
{
  const std::uint64_t m = 3 << 20;
  const auto out = sweep("tree", 11, {m});
  CHECK(out.points[0].rank_bytes_sent == 2 * 10 * m);
}

TEST_CASE("parameter server, 1 dedicated server: incast makes the time grow linearly with P")
{
  collectives::CollectiveOptions o;
  o.ps_hosts = {"srv0"};
  o.reduce_s_per_byte = 0.02e-9;
  const std::uint64_t m = 8 << 20;
  // One engine per process: P = 8 here; the closed form, checked exactly, is linear in P.
  const auto out = sweep("ps", 8, {m}, o, 1);
  const double expected = analytical::ps_allreduce_s(8, 1, m, kHop, {0, o.reduce_s_per_byte});
  CHECK(expected == Approx(2 * (1e-6 + 8.0 * m / kBandwidth) + 0.02e-9 * 8 * m).epsilon(1e-12));
  CHECK(test::relative_error(out.points[0].time_s, expected) < 1e-9);
  CHECK(out.points[0].rank_bytes_sent == 8 * m); // every worker pushes its whole vector
}

TEST_CASE("parameter server, 2 dedicated servers, split shards, 4 workers: server links are the bottleneck")
{
  collectives::CollectiveOptions o;
  o.ps_servers = 2;
  o.ps_hosts = {"srv0", "srv1"};
  const std::uint64_t m = 8 << 20;
  const auto out = sweep("ps", 4, {m}, o, 2);
  CHECK(test::relative_error(out.points[0].time_s, 2 * (1e-6 + 2.0 * m / kBandwidth)) < 1e-9);
}

TEST_CASE("parameter server, round-robin tensors over 2 servers: each tensor goes whole to one server")
{
  collectives::CollectiveOptions o;
  o.ps_servers = 2;
  o.ps_hosts = {"srv0", "srv1"};
  o.ps_sharding = collectives::PsSharding::RoundRobin;
  const std::uint64_t m = 4 << 20;
  const auto out = sweep("ps", 4, {m, m}, o, 2);
  for (const auto& pt : out.points)
    CHECK(test::relative_error(pt.time_s, 2 * (1e-6 + 4.0 * m / kBandwidth)) < 1e-9);
}

TEST_CASE("hierarchical on 2 nodes x 4 NVLink GPUs over EDR equals its closed form and beats the flat ring by 10 %")
{
  engine::SweepInput in;
  in.platform_file = test::write_nvlink_ib_platform();
  in.algorithm = collectives::parse_algorithm("hier");
  const std::uint64_t m = 256 << 20;
  in.sizes = {1 << 20, m};
  const auto out = engine::run_collective_sweep(in);
  REQUIRE(out.node_of_rank == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  const analytical::Hop nvlink{3.4e-6, 47.9e9}, edr{9.6e-6, 12.2e9};
  for (const auto& pt : out.points) {
    const double inter = analytical::ring_allreduce_s(2, pt.bytes, edr);
    const double expected = analytical::hier_allreduce_s(4, pt.bytes, nvlink, inter);
    INFO(pt.bytes << " B: simulated " << pt.time_s << " s, closed form " << expected << " s");
    CHECK(test::relative_error(pt.time_s, expected) < 1e-9);
  }
  // The flat ring on the same 8 GPUs crosses the EDR link on 2 of its 8 hops and runs at that hop.
  const analytical::Hop hops[] = {nvlink, edr};
  const double ring = analytical::ring_allreduce_s(8, m, hops, 2);
  INFO("256 MiB: hier " << out.points[1].time_s << " s, flat ring " << ring << " s");
  CHECK(out.points[1].time_s < 0.9 * ring);
}

TEST_CASE("flow-level ring equals the closed form (and so the message-level ring) on a uniform platform")
{
  collectives::CollectiveOptions o = costly();
  o.fidelity = collectives::Fidelity::Flow;
  check("ring", 16, o);
}

TEST_CASE("flow-level halving-doubling equals the closed form on a uniform platform")
{
  collectives::CollectiveOptions o = costly();
  o.fidelity = collectives::Fidelity::Flow;
  check("hd", 16, o);
}

TEST_CASE("double binary tree, P = 8: between one tree with half the data at full and at half bandwidth")
{
  // Each tree does one transfer at a time per member, so a link direction carries at most two transfers
  // (one per tree): every transfer gets between B/2 and B, which bounds the time on both sides.
  const auto out = sweep("dbtree", 8, kSizes);
  const std::uint64_t tree_chunk = collectives::effective_chunk_bytes(collectives::AlgorithmId::Dbtree, {});
  const analytical::Hop half{kHop.alpha_s, kHop.bandwidth_bytes_per_s / 2};
  for (const auto& pt : out.points) {
    const double lower = analytical::tree_allreduce_s(8, pt.bytes / 2, tree_chunk, kHop);
    const double upper = analytical::tree_allreduce_s(8, pt.bytes / 2, tree_chunk, half);
    INFO(pt.bytes << " B: " << lower << " <= " << pt.time_s << " <= " << upper);
    CHECK(pt.time_s >= lower * (1 - 1e-9));
    CHECK(pt.time_s <= upper * (1 + 1e-9));
    CHECK(pt.rank_bytes_sent == 2 * 7 * pt.bytes); // two trees, each 2(P-1) x M/2
  }
}

TEST_CASE("ring in slices of P x chunk bytes, P = 4, 48 MiB in 1 MiB messages: 12 ring allreduces back to back")
{
  collectives::CollectiveOptions o;
  o.chunk_bytes = 1 << 20;
  const auto out = sweep("ring", 4, {48 << 20}, o);
  const double expected = 12 * analytical::ring_allreduce_s(4, 4 << 20, kHop);
  CHECK(test::relative_error(out.points[0].time_s, expected) < 1e-9);
  CHECK(out.points[0].rank_bytes_sent == 2 * 3 * (48ULL << 20)); // slicing moves the same bytes
}

namespace {

/** P workers, one server on its own host: push and pull each take alpha + P M / B (incast). */
void check_ps_incast(int workers)
{
  collectives::CollectiveOptions o;
  o.ps_hosts = {"srv0"};
  const std::uint64_t m = 8 << 20;
  const auto out = sweep("ps", workers, {m}, o, 1);
  CHECK(test::relative_error(out.points[0].time_s, 2 * (1e-6 + double(workers) * m / kBandwidth)) < 1e-9);
}

} // namespace

TEST_CASE("parameter server, 1 dedicated server, P = 2: the same linear closed form")
{
  check_ps_incast(2);
}
TEST_CASE("parameter server, 1 dedicated server, P = 16: the same linear closed form")
{
  check_ps_incast(16);
}

TEST_CASE("double binary tree, P = 7 (odd): still between the two bounds, every byte moved")
{
  const auto out = sweep("dbtree", 7, {7 << 20});
  const analytical::Hop half{kHop.alpha_s, kHop.bandwidth_bytes_per_s / 2};
  const auto& pt = out.points[0];
  const std::uint64_t chunk = collectives::effective_chunk_bytes(collectives::AlgorithmId::Dbtree, {});
  CHECK(pt.time_s >= analytical::tree_allreduce_s(7, pt.bytes / 2, chunk, kHop) * (1 - 1e-9));
  CHECK(pt.time_s <= analytical::tree_allreduce_s(7, pt.bytes / 2, chunk, half) * (1 + 1e-9));
  CHECK(pt.rank_bytes_sent == 2 * 6 * pt.bytes);
}

TEST_CASE("hierarchical on one node whose ranks share the leader's link: 2(alpha + (G-1) M / B)")
{
  // On the star every rank reaches the leader through the leader's own link, so the G-1 transfers of the
  // gather (and of the broadcast) share it: the shared-link form of docs/collectives.md.
  const std::uint64_t m = 4 << 20;
  const auto out = sweep("hier", 4, {m});
  CHECK(test::relative_error(out.points[0].time_s, 2 * (kHop.alpha_s + 3.0 * m / kBandwidth)) < 1e-9);
  CHECK(out.points[0].rank_bytes_sent == 2 * 3 * m);
}
