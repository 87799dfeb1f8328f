// Unit tests: the iteration DAG of both schedules on a 3-layer toy model.
#include "common/error.hpp"
#include "dag/dag.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using dag::TaskKind;

namespace {

proto::Workload toy()
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("toy");
  w.set_batch_size_per_gpu(1);
  w.set_reference_gpu("P40");
  w.set_io_s(1);
  w.set_h2d_s(2);
  w.set_update_s(3);
  const char* names[] = {"l0", "l1", "l2"};
  for (int i = 0; i < 3; ++i) {
    auto* l = w.add_layers();
    l->set_name(names[i]);
    l->set_forward_s(10 + i);
    l->set_backward_s(20 + i);
    l->set_gradient_bytes(i == 1 ? 0 : 100 * (i + 1)); // l1 has no parameters
  }
  return w;
}

std::vector<std::string> names(const dag::IterationDag& d, const std::vector<int>& ids)
{
  std::vector<std::string> out;
  for (int id : ids)
    out.push_back(d.tasks[id].name);
  return out;
}

std::vector<std::string> dep_names(const dag::IterationDag& d, const std::string& name)
{
  for (const auto& t : d.tasks)
    if (t.name == name)
      return names(d, t.deps);
  FAIL("no task " << name);
  return {};
}

} // namespace

TEST_CASE("both schedules put the same compute chain on the compute stream")
{
  for (auto s : {dag::Schedule::Sequential, dag::Schedule::Wfbp}) {
    const auto d = dag::build_iteration_dag(toy(), s);
    CHECK(names(d, d.stream_tasks(dag::Stream::Compute)) ==
          std::vector<std::string>{"io", "h2d", "fwd:l0", "fwd:l1", "fwd:l2", "bwd:l2", "bwd:l1", "bwd:l0", "update"});
    // Layers with gradient only, in the order backward produces them.
    CHECK(names(d, d.stream_tasks(dag::Stream::Communication)) == std::vector<std::string>{"agg:l2", "agg:l0"});
    CHECK(d.aggregations() == 2);
    CHECK(dep_names(d, "bwd:l2") == std::vector<std::string>{"fwd:l2"});
    CHECK(dep_names(d, "update") == std::vector<std::string>{"bwd:l0", "agg:l0"});
  }
}

TEST_CASE("wfbp: an aggregation waits for its own layer's gradient and the previous aggregation")
{
  const auto d = dag::build_iteration_dag(toy(), dag::Schedule::Wfbp);
  CHECK(dep_names(d, "agg:l2") == std::vector<std::string>{"bwd:l2"});
  CHECK(dep_names(d, "agg:l0") == std::vector<std::string>{"bwd:l0", "agg:l2"});
}

TEST_CASE("sequential: every aggregation waits for the whole backward pass")
{
  const auto d = dag::build_iteration_dag(toy(), dag::Schedule::Sequential);
  CHECK(dep_names(d, "agg:l2") == std::vector<std::string>{"bwd:l0"});
  CHECK(dep_names(d, "agg:l0") == std::vector<std::string>{"bwd:l0", "agg:l2"});
}

TEST_CASE("task fields carry the workload durations and bytes, and ids are a topological order")
{
  const auto d = dag::build_iteration_dag(toy(), dag::Schedule::Wfbp);
  for (const auto& t : d.tasks) {
    for (int dep : t.deps)
      CHECK(dep < t.id);
    if (t.name == "bwd:l1") {
      CHECK(t.duration_s == 21);
      CHECK(t.layer == 1);
      CHECK(t.kind == TaskKind::Backward);
    }
    if (t.name == "agg:l2") {
      CHECK(t.bytes == 300);
      CHECK(t.stream == dag::Stream::Communication);
    }
  }
}

TEST_CASE("schedule names parse and unknown ones are rejected")
{
  CHECK(dag::parse_schedule("wfbp") == dag::Schedule::Wfbp);
  CHECK(dag::parse_schedule("sequential") == dag::Schedule::Sequential);
  CHECK_THROWS_WITH(dag::parse_schedule("WFBP"),
                    "schedule must be one of: sequential, wfbp, fusion, buckets, mgwfbp, priority (got 'WFBP')");
}

TEST_CASE("iteration_barrier: the global update closes every iteration of the in-order and fusion schedules")
{
  for (auto schedule :
       {dag::Schedule::Sequential, dag::Schedule::Wfbp, dag::Schedule::Fusion, dag::Schedule::Buckets}) {
    dag::ScheduleOptions o;
    o.schedule = schedule;
    o.comm_streams = 2;
    const auto g = dag::build_dag(toy(), o);
    const int barrier = dag::iteration_barrier(g);
    INFO(dag::to_string(schedule));
    REQUIRE(barrier >= 0);
    CHECK(g.tasks[barrier].kind == TaskKind::Update);
    CHECK(g.tasks[barrier].name == "update");
  }
}

TEST_CASE("iteration_barrier: a per-layer update, an I/O prefetch or a second sink mean no barrier")
{
  dag::ScheduleOptions per_layer;
  per_layer.update = dag::Update::PerLayer; // updates shifted into the next iteration's slot
  CHECK(dag::iteration_barrier(dag::build_dag(toy(), per_layer)) == -1);
  dag::ScheduleOptions prefetch;
  prefetch.io_prefetch = 2; // the input stream starts iteration i + 1 before iteration i ends
  CHECK(dag::iteration_barrier(dag::build_dag(toy(), prefetch)) == -1);
  auto g = dag::build_iteration_dag(toy(), dag::Schedule::Wfbp);
  const int update = dag::iteration_barrier(g);
  REQUIRE(update >= 0);
  auto two_sinks = g; // a task nothing waits for besides the update
  dag::Task extra;
  extra.id = static_cast<int>(two_sinks.tasks.size());
  extra.deps = {0};
  two_sinks.tasks.push_back(extra);
  CHECK(dag::iteration_barrier(two_sinks) == -1);
  auto unguarded_root = g; // the first compute task no longer waits for the previous iteration's update
  unguarded_root.tasks[0].other.clear();
  CHECK(dag::iteration_barrier(unguarded_root) == -1);
  auto forward_dep = g; // a dependency on a later iteration
  forward_dep.tasks[update].other.push_back({0, 1});
  CHECK(dag::iteration_barrier(forward_dep) == -1);
}

TEST_CASE("mgwfbp: a cost floor skips groups that cannot win, and the plan stays the same")
{
  // 40 layers of 1 MB, backward 1 ms each; an aggregation costs 0.5 ms + 1 ms per MB. The floor (the bandwidth term
  // alone) lets the planner skip the long groups, which end too late once a short one is known.
  proto::Workload w = toy();
  w.clear_layers();
  for (int i = 0; i < 40; ++i) {
    auto* l = w.add_layers();
    l->set_name("l" + std::to_string(i));
    l->set_forward_s(1e-3);
    l->set_backward_s(1e-3);
    l->set_gradient_bytes(1000000);
  }
  dag::ScheduleOptions o;
  o.schedule = dag::Schedule::Mgwfbp;
  int costed = 0;
  o.aggregation_cost_s = [&](std::uint64_t b) {
    ++costed;
    return 0.5e-3 + double(b) * 1e-9;
  };
  const auto groups = [](const dag::IterationDag& d) {
    std::vector<std::vector<int>> out;
    for (const auto& slot : d.communication)
      out.push_back(d.tasks[slot.task].layers);
    return out;
  };
  const auto plain = groups(dag::build_dag(w, o));
  CHECK(costed == 40 * 41 / 2); // every group g_i..g_j
  costed = 0;
  o.aggregation_floor_s = [](std::uint64_t b) { return double(b) * 1e-9; };
  CHECK(groups(dag::build_dag(w, o)) == plain);
  CHECK(costed < 40 * 41 / 4);
}
