// Unit tests: closed forms (ring allreduce, DAG longest path) on hand-checked numbers.
#include "analytical/alpha_beta.hpp"
#include "analytical/critical_path.hpp"
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
