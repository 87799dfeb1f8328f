// Unit tests: closed forms (ring allreduce, DAG longest path) on hand-checked numbers.
#include "analytical/alpha_beta.hpp"
#include "analytical/critical_path.hpp"
#include "analytical/processor_sharing.hpp"
#include "collectives/collective.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("ring allreduce closed form: 2(P-1)(alpha + M/(P B))")
{
  const analytical::Hop hop{1e-6, 1e9};
  CHECK(analytical::ring_allreduce_s(4, 4000000, hop) == Approx(6 * (1e-6 + 1e-3)).epsilon(1e-15));
  CHECK(analytical::ring_allreduce_s(1, 4000000, hop) == 0.0);
  // With different hops the lock-step ring runs at the slowest one.
  const analytical::Hop hops[] = {{1e-6, 1e9}, {5e-6, 0.5e9}};
  CHECK(analytical::ring_allreduce_s(4, 4000000, hops, 2) == Approx(6 * (5e-6 + 2e-3)).epsilon(1e-15));
}

TEST_CASE("pipelined tree recurrence from each member's own start: each member's end")
{
  // Root 0 with children 1 and 2, one chunk; every transfer alpha + M/B = 1 s + 1 s. Member 1 starts at 5 s, the others
  // at 0. Reduce: 1 -> 0 over [5, 7], then 2 -> 0 over [7, 9] (the root takes its children in order); broadcast:
  // 0 -> 1 over [9, 11], 0 -> 2 over [11, 13]. Member 1 is done at 11 s, the root and member 2 at 13 s.
  analytical::TreeShape tree = analytical::binary_heap(3);
  tree.up.assign(3, analytical::Hop{1.0, 1e6});
  std::vector<double> clocks = {0.0, 5.0, 0.0};
  const double end = analytical::tree_allreduce_s(
      tree, 1000000, 0, {}, [&](int child, bool, std::uint64_t, double s) { return tree.up[child].alpha_s + s / 1e6; },
      {}, &clocks);
  CHECK(end == 13.0);
  CHECK(clocks == std::vector<double>{13.0, 11.0, 13.0});
  // From one start the ends are the plain recurrence's: [0, 2], [2, 4], [4, 6], [6, 8].
  clocks = {0.0, 0.0, 0.0};
  CHECK(analytical::tree_allreduce_s(
            tree, 1000000, 0, {},
            [&](int child, bool, std::uint64_t, double s) { return tree.up[child].alpha_s + s / 1e6; }, {},
            &clocks) == analytical::tree_allreduce_s(tree, 1000000, 0));
  CHECK(clocks == std::vector<double>{8.0, 6.0, 8.0});
  std::vector<double> wrong = {0.0};
  CHECK_THROWS_WITH(analytical::tree_allreduce_s(
                        tree, 1000000, 0, {}, [](int, bool, std::uint64_t, double) { return 1.0; }, {}, &wrong),
                    Catch::Contains("one start time per member"));
}

TEST_CASE("pipelined tree floor: the busiest member's transfers back to back, never above the recurrence")
{
  // Two members, one chunk: 1 -> 0, then 0 -> 1, each alpha + M/B = 1 s + 1 s: the recurrence's 4 s, and the floor's
  // 2 d (n alpha + M/B) with d = 1, less a few units of rounding.
  const analytical::Hop hop{1.0, 1e6};
  CHECK(analytical::tree_allreduce_s(2, 1000000, 0, hop) == 4.0);
  CHECK(analytical::tree_allreduce_floor_s(2, 1000000, 0, hop) < 4.0);
  CHECK(analytical::tree_allreduce_floor_s(2, 1000000, 0, hop) == Approx(4.0).epsilon(1e-14));
  // Five members: member 1 has a parent and two children, d = 3; four chunks: 2 * 3 * (4 alpha + M/B).
  CHECK(analytical::tree_allreduce_floor_s(5, 4000000, 1000000, hop) == Approx(6.0 * (4.0 + 4.0)).epsilon(1e-8));
  CHECK(analytical::tree_allreduce_floor_s(1, 4000000, 1000000, hop) == 0.0);
  // Below the recurrence for every shape and size tried, with costs too, and within 2x of it for long pipelines
  // (so that it prunes: a floor of 0 would pass the first check).
  const analytical::Hop ib{1.7e-6, 12.5e9};
  for (int ranks : {2, 3, 4, 5, 6, 7, 8, 31, 128, 1024})
    for (std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{100000}, std::uint64_t{1} << 20,
                                std::uint64_t{3} << 20, std::uint64_t{97} << 20}) {
      const double floor = analytical::tree_allreduce_floor_s(ranks, bytes, 1 << 20, ib);
      const double full = analytical::tree_allreduce_s(ranks, bytes, 1 << 20, ib, {2e-6, 1e-12});
      CHECK(floor <= full);
      if (bytes >= (std::uint64_t{97} << 20))
        CHECK(floor > 0.5 * full);
    }
  // 1e8 one-byte chunks: the recurrence's 2e8 sums each round, here by 1.9e-9 in all (a slack of 1e-9 was too little).
  const analytical::Hop fast{0.0, 1e11};
  CHECK(analytical::tree_allreduce_floor_s(2, 100000000, 1, fast) <=
        analytical::tree_allreduce_s(2, 100000000, 1, fast));
}

TEST_CASE("pipelined tree: chunk counts to 2^64 bytes, a hop per member required")
{
  // ceil(bytes / chunk) without overflow near 2^64; 0: one piece; an empty message is one chunk.
  const std::uint64_t most = ~std::uint64_t{0};
  CHECK(analytical::pipeline_chunks(most, 0) == 1);
  CHECK(analytical::pipeline_chunks(most, 2) == (std::uint64_t{1} << 63));
  CHECK(analytical::pipeline_chunks(most - 1, 2) == (std::uint64_t{1} << 63) - 1);
  CHECK(analytical::pipeline_chunks(1000, 300) == 4);
  CHECK(analytical::pipeline_chunks(0, 300) == 1);
  // The closed form reads every member's hop: a shape without them (binary_heap leaves `up` empty) is refused.
  CHECK_THROWS_WITH(analytical::tree_allreduce_s(analytical::binary_heap(3), 1000, 0),
                    Catch::Contains("a hop per member"));
}

TEST_CASE("chunks split the tensor exactly")
{
  std::uint64_t sum = 0;
  for (int i = 0; i < 7; ++i)
    sum += collectives::chunk_bytes(1000, 7, i);
  CHECK(sum == 1000);
  CHECK(collectives::chunk_bytes(1000, 7, 0) == 143); // 1000 = 6 x 143 + 142
  CHECK(collectives::chunk_bytes(1000, 7, 6) == 142);
}

TEST_CASE("longest path of a diamond")
{
  dag::IterationDag d;
  auto task = [](int id, dag::TaskKind kind, double duration, std::vector<int> deps) {
    dag::Task t;
    t.id = id;
    t.kind = kind;
    t.duration_s = duration;
    t.deps = std::move(deps);
    return t;
  };
  d.tasks = {task(0, dag::TaskKind::Io, 1, {}), task(1, dag::TaskKind::Forward, 5, {0}),
             task(2, dag::TaskKind::Aggregation, 0, {0}), task(3, dag::TaskKind::Update, 2, {1, 2})};
  auto duration = [](const dag::Task& t) { return t.kind == dag::TaskKind::Aggregation ? 7.0 : t.duration_s; };
  CHECK(analytical::critical_path_s(d, duration) == 1 + 7 + 2);
  const auto finish = analytical::finish_times(d, duration);
  CHECK(finish[1] == 6);
}

TEST_CASE("processor sharing: transfers on one link share it equally from their arrivals")
{
  // Link of 10 B/s, 10 B each. Arrivals 0, 0.5, 3: alone until 0.5 (5 B given), then 5 B/s each: the first ends at
  // 1.5, the second has 5 B left and ends alone at 2.0; the third runs alone from 3 to 4.
  const auto ends = analytical::processor_sharing_ends({0, 0.5, 3}, 10, 10);
  REQUIRE(ends.size() == 3);
  CHECK(ends[0] == Approx(1.5).epsilon(1e-15));
  CHECK(ends[1] == Approx(2.0).epsilon(1e-15));
  CHECK(ends[2] == Approx(4.0).epsilon(1e-15));
  // Three together at 10/3 B/s each until a fourth arrives at 1 (20/3 B left each); then 2.5 B/s each: the three end
  // together at 1 + (20/3) / 2.5 = 11/3, when the fourth has been given 20/3 B; its last 10/3 B alone take 1/3 s.
  const auto four = analytical::processor_sharing_ends({0, 0, 0, 1}, 10, 10);
  CHECK(four[0] == Approx(11.0 / 3).epsilon(1e-14));
  CHECK(four[1] == Approx(11.0 / 3).epsilon(1e-14));
  CHECK(four[2] == Approx(11.0 / 3).epsilon(1e-14));
  CHECK(four[3] == Approx(11.0 / 3 + 1.0 / 3).epsilon(1e-14));
  CHECK(analytical::processor_sharing_ends({}, 10, 10).empty());
  CHECK_THROWS_WITH(analytical::processor_sharing_ends({1, 0}, 10, 10), Catch::Contains("in order of time"));
  CHECK_THROWS_WITH(analytical::processor_sharing_ends({0}, 10, 0), Catch::Contains("capacity > 0"));
}
