// Simulation tests of the schedules: a 4-layer toy on 2 GPUs whose every iteration is worked out by hand, and the
// closed-form critical path of the same DAG beside it.
#include "analytical/critical_path.hpp"
#include "dag/plans.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

constexpr double ms = 1e-3;

// Toy: forward 4, 1, 1, 1 ms (a long first layer), backward `bwd` ms each, 1 MB of gradient per layer, update
// 0.4 ms (0.1 ms per layer when per layer), no input time unless asked.
proto::Workload toy(double bwd = 1 * ms, double io = 0, double h2d = 0)
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("toy");
  w.set_batch_size_per_gpu(8);
  w.set_reference_gpu("P40");
  w.set_io_s(io);
  w.set_h2d_s(h2d);
  w.set_update_s(0.4 * ms);
  const double fwd[] = {4 * ms, 1 * ms, 1 * ms, 1 * ms};
  for (int i = 0; i < 4; ++i) {
    auto* l = w.add_layers();
    l->set_name("L" + std::to_string(i));
    l->set_forward_s(fwd[i]);
    l->set_backward_s(bwd);
    l->set_gradient_bytes(1000000);
  }
  return w;
}

// 2 P40s on a star: a route crosses two links of 0.25 ms and 1 GB/s, so alpha = 0.5 ms, and a ring allreduce of
// M bytes on 2 ranks is 2 steps of (alpha + M/2 / B): A(M) = 1 ms + M x 1 ns. A(1 MB) = 2 ms, A(2 MB) = 3 ms.
std::string star2()
{
  test::StarSpec star;
  star.hosts = 2;
  star.link_bytes_per_s = 1e9;
  star.link_latency_s = 0.25 * ms;
  return test::write_star_platform(star);
}

double cost(std::uint64_t bytes)
{
  return 1 * ms + double(bytes) * 1e-9;
}

dag::ScheduleOptions options(dag::Schedule s, dag::Update u = dag::Update::Global)
{
  dag::ScheduleOptions o;
  o.schedule = s;
  o.update = u;
  return o;
}

/** Simulates 2 iterations; checks the second (the measured one) against `expected`, and the closed-form critical
 *  path of the same DAG against the simulation. */
report::PhaseSummary check(const dag::ScheduleOptions& o, double expected, const proto::Workload& w = toy(),
                           unsigned iterations = 2)
{
  const auto out = test::run_schedule(star2(), w, o, iterations);
  const auto s = report::summarize_phase(out.dag, out.multi);
  INFO(dag::to_string(o.schedule) << ": simulated " << s.iteration_time_s << " s, by hand " << expected << " s");
  CHECK(test::relative_error(s.iteration_time_s, expected) < 1e-9);
  const auto ends = analytical::iteration_ends_s(out.dag, iterations, [](const dag::Task& t) {
    return t.kind == dag::TaskKind::Aggregation ? cost(t.bytes) : t.duration_s;
  });
  const double closed = ends[iterations - 1] - ends[0];
  INFO("closed-form critical path " << closed / (iterations - 1) << " s");
  CHECK(test::relative_error(closed / (iterations - 1), s.iteration_time_s) < 1e-9);
  return s;
}

/** The toy's sequential schedule on two communication streams at flow level, 2 iterations, with `algorithm` (default:
 *  the ring) and a stack's per-call cost of `call_overhead_s`: the run and its summary. */
std::pair<test::RunResult, report::PhaseSummary> flow_streams(collectives::AlgorithmSpec algorithm = {},
                                                              double call_overhead_s = 0,
                                                              const std::string& platform = star2())
{
  auto o = options(dag::Schedule::Sequential);
  o.comm_streams = 2;
  const auto w = toy();
  engine::SimulationInput in = test::input(platform, w);
  in.iterations = 2;
  in.single_gpu_baseline = false;
  in.algorithm = std::move(algorithm);
  in.collective.fidelity = collectives::Fidelity::Flow;
  in.collective.stack.call_overhead_s = call_overhead_s;
  engine::Simulation sim(in);
  test::RunResult out;
  out.dag = dag::build_dag(w, o);
  static_cast<engine::SimulationOutput&>(out) = sim.run(out.dag);
  auto s = report::summarize_phase(out.dag, out.multi);
  return {std::move(out), std::move(s)};
}

// Forward ends at 7 ms; with 1 ms backward per layer the gradients of L3, L2, L1, L0 exist at 8, 9, 10, 11 ms.

} // namespace

TEST_CASE("schedules by hand: sequential aggregates after backward, 4 x 2 ms")
{
  // 11 + 4 x A(1 MB) = 19, update 0.4.
  check(options(dag::Schedule::Sequential), 19.4 * ms);
}

TEST_CASE("schedules by hand: wfbp overlaps each aggregation with the rest of backward")
{
  // L3 8-10, L2 10-12, L1 12-14, L0 14-16, update 16-16.4.
  check(options(dag::Schedule::Wfbp), 16.4 * ms);
}

TEST_CASE("schedules by hand: fusion flushes its buffer a cycle after its first gradient")
{
  // Cycle 1.5 ms: {L3, L2} opens at 8, flushed at 9.5, A(2 MB) 9.5-12.5; {L1, L0} opens at 10, flushed at 11.5,
  // runs 12.5-15.5; update 15.5-15.9.
  auto o = options(dag::Schedule::Fusion);
  o.fusion_cycle_s = 1.5 * ms;
  CHECK(dag::build_dag(toy(), o).aggregations() == 2);
  check(o, 15.9 * ms);
}

TEST_CASE("schedules by hand: fusion flushes a full buffer when the next gradient does not fit")
{
  // 1.5 MB buffer: L3 flushed at 9 when L2 arrives (9-11), L2 at 10 (11-13), L1 at 11 (13-15); L0 waits for the
  // cycle, 11 + 1.5 = 12.5, and the link: 15-17; update 17-17.4.
  auto o = options(dag::Schedule::Fusion);
  o.fusion_cycle_s = 1.5 * ms;
  o.fusion_bytes = 1500000;
  check(o, 17.4 * ms);
}

TEST_CASE("schedules by hand: DDP buckets, first 1 MiB, then 25 MiB, in reverse layer order")
{
  // 1 MB < 1 MiB, so the first bucket closes at 2 MB: {L3, L2} ready at 9, 9-12; {L1, L0} ready at 11, 12-15;
  // update 15-15.4.
  CHECK(dag::build_dag(toy(), options(dag::Schedule::Buckets)).aggregations() == 2);
  check(options(dag::Schedule::Buckets), 15.4 * ms);
}

TEST_CASE("schedules by hand: mgwfbp merges L2 and L1 and beats wfbp and one bucket")
{
  // Best end of the last aggregation, F(j) = min_i max(ready_j, F(i-1)) + A(bytes i..j), over L3, L2, L1, L0
  // ready at 8, 9, 10, 11: F = 10, 12, 13 ({L2, L1}: max(10, 10) + 3), 15 ({L0}: max(11, 13) + 2).
  // wfbp ends at 16, one bucket at 11 + A(4 MB) = 16: mgwfbp's iteration is 15.4 ms.
  auto o = options(dag::Schedule::Mgwfbp);
  o.aggregation_cost_s = cost;
  const auto d = dag::build_dag(toy(), o);
  std::vector<std::vector<int>> groups;
  for (const auto& slot : d.communication)
    groups.push_back(d.tasks[slot.task].layers);
  CHECK(groups == std::vector<std::vector<int>>{{3}, {2, 1}, {0}});
  check(options(dag::Schedule::Mgwfbp), 15.4 * ms);
}

TEST_CASE("schedules by hand: two communication streams run two aggregations at once, sharing the links")
{
  // Sequential, K = 2: L3 and L2 start together at 11 on the same links: each step is alpha + 0.5 MB at half of
  // 1 GB/s = 1.5 ms, both end at 14; L1 and L0 the same, 14-17; update 17-17.4 (19.4 with one stream).
  auto o = options(dag::Schedule::Sequential);
  o.comm_streams = 2;
  const auto out = test::run_schedule(star2(), toy(), o);
  const auto s = report::summarize_phase(out.dag, out.multi);
  CHECK(test::relative_error(s.iteration_time_s, 17.4 * ms) < 1e-9);
}

TEST_CASE("schedules by hand: two streams of the ring's flow form, mirrored lanes: one computed flow per aggregation")
{
  // The same at flow level: an aggregation is a sleep of alpha, then the two ranks' flows of M bytes each (0 -> 1,
  // 1 -> 0): A(1 MB) = 0.5 + 0.5 + 1 ms alone; L3's and L2's flows share both links: 0.5 + 0.5 + 2 ms = 3 ms, as the
  // message level's steps. The two flows of every aggregation of both lanes are alike (mirrored lanes,
  // CommWorld::set_mirror): one of them per aggregation runs, in ddlsim's own network (CommWorld::run_fluid: the
  // lanes' flows are all the network carries), none in SimGrid.
  const auto [out, s] = flow_streams();
  CHECK(test::relative_error(s.iteration_time_s, 17.4 * ms) < 1e-9);
  CHECK(out.multi.flows == 0); // computed (CommWorld::run_fluid); every flow in SimGrid: 8 per iteration
  CHECK(out.multi.computed == 4 * out.multi.iterations_simulated);
}

TEST_CASE("schedules by hand: two streams through a size switch and a stack's call cost, still mirrored lanes")
{
  // The same with every aggregation behind a size switch between two rings (the first takes every 1 MB tensor) and a
  // stack's per-call cost of 0.1 ms, slept before the plan: L3 and L2 11.1-14.1, L1 and L0 14.2-17.2, update
  // 17.2-17.6. The wrappers pass the ring's calls on: still one computed flow per aggregation.
  const auto [out, s] = flow_streams(collectives::parse_algorithm("ring<=2MB,ring"), 0.1 * ms);
  CHECK(test::relative_error(s.iteration_time_s, 17.6 * ms) < 1e-9);
  CHECK(out.multi.flows == 0);
  CHECK(out.multi.computed == 4 * out.multi.iterations_simulated);
}

TEST_CASE("schedules by hand: two streams through a stack's rules by group size, still mirrored lanes")
{
  // A stack's rules (RankSwitch): rd up to one rank, then a size switch between two rings for any group: the 2 ranks
  // take the rings, and the times of the first case, 17.4 ms; one computed flow per aggregation.
  const auto [out, s] = flow_streams(collectives::rank_rules({{1, "rd"}, {0, "ring<=2MB,ring"}}, "test rules"));
  CHECK(test::relative_error(s.iteration_time_s, 17.4 * ms) < 1e-9);
  CHECK(out.multi.flows == 0);
  CHECK(out.multi.computed == 4 * out.multi.iterations_simulated);
}

TEST_CASE("two streams of hier's flow form over two nodes of four GPUs: mirrored lanes, a flow per class")
{
  // hier over the ring on test::write_nvlink_ib_platform (every link split-duplex): an aggregation's gather is six
  // flows, each alone on its NVLink (one class), the leaders' ring two flows over the nodes' EDR links, one each way
  // (one class), the scatter six flows like the gather's: 14 flows, of which 3 run with mirrored lanes (hier
  // passes on its calls and its leaders', Hierarchical::flow_calls). Equal reports: golden test "one actor per
  // communication stream equals one per rank (streams-hier)".
  const auto [out, s] = flow_streams(collectives::parse_algorithm("hier"), 0, test::write_nvlink_ib_platform());
  CHECK(out.dag.aggregations() == 4);
  CHECK(out.multi.flows == 0);
  CHECK(out.multi.computed == 4 * 3 * out.multi.iterations_simulated);
}

TEST_CASE("schedules by hand: per-layer updates let the next forward of a layer wait only for its update")
{
  // 0.9 ms backward: gradients at 7.9, 8.8, 9.7, 10.6. wfbp: L3 7.9-9.9, L2 -11.9, L1 -13.9, L0 -15.9; iteration 2
  // starts with update L0 15.9-16.0, forward L0 16.0-20.0, then update/forward pairs to 23.3, backward to 26.9,
  // L3 24.2-26.2, L2, L1, L0 to 32.2: the second iteration ends 32.2 - 15.9 = 16.3 ms after the first.
  check(options(dag::Schedule::Wfbp, dag::Update::PerLayer), 16.3 * ms, toy(0.9 * ms));
}

TEST_CASE("schedules by hand: priority sends front layers first and the next forward starts early")
{
  // One 1 MB partition per layer, credit 1 MB: one in flight. L3 7.9-9.9; at 9.9 L2 and L1 are ready, L1 first:
  // 9.9-11.9; at 11.9 L0: 11.9-13.9; L2 13.9-15.9. Update L0 13.9-14.0, forward L0 14.0-18.0, ..., forward L3
  // 20.3-21.3, backward 21.3-24.9 (gradients at 22.2, 23.1, 24.0, 24.9); L3 22.2-24.2, L1 24.2-26.2, L0 26.2-28.2,
  // L2 28.2-30.2: 30.2 - 15.9 = 14.3 ms, 2 ms less than wfbp.
  auto o = options(dag::Schedule::Priority, dag::Update::PerLayer);
  o.partition_bytes = 1000000;
  o.credit_bytes = 1000000;
  check(o, 14.3 * ms, toy(0.9 * ms));
}

TEST_CASE("schedules by hand: under a global update priority changes nothing, as ByteScheduler predicts")
{
  // The update waits for every aggregation: 15.9 + 0.4, the period of wfbp too.
  auto o = options(dag::Schedule::Priority, dag::Update::Global);
  o.partition_bytes = 1000000;
  o.credit_bytes = 1000000;
  check(o, 16.3 * ms, toy(0.9 * ms));
}

TEST_CASE("schedules by hand: wfbp under a global update has the same period as priority")
{
  check(options(dag::Schedule::Wfbp, dag::Update::Global), 16.3 * ms, toy(0.9 * ms));
}

TEST_CASE("schedules by hand: input on the compute stream adds to every iteration")
{
  check(options(dag::Schedule::Wfbp), 20.4 * ms, toy(1 * ms, 3 * ms, 1 * ms));
}

TEST_CASE("schedules by hand: prefetched input hides loading behind the previous iteration")
{
  // io 3 ms + h2d 1 ms. On the compute stream: 16.4 + 4 ms. Prefetched one batch ahead: iteration 2's input loads
  // from 8 ms (after the first forward of iteration 1) to 12 ms, long before the update ends at 20.4.
  auto o = options(dag::Schedule::Wfbp);
  o.io_prefetch = 1;
  const auto s = check(o, 16.4 * ms, toy(1 * ms, 3 * ms, 1 * ms));
  CHECK(s.breakdown.exposed_input_s() == 0.0);
  CHECK(s.breakdown.io_s() == Approx(3 * ms).epsilon(1e-12));
}

TEST_CASE("schedules by hand: input slower than an iteration is exposed, and prefetch depth helps")
{
  // io 20 ms: with one batch ahead, batch i + 1 loads after the first forward of i: period io + h2d + forward L0
  // = 25 ms, of which the first forward of each iteration waits 25 - 16.4 = 8.6 ms. Two batches ahead keep the
  // loader busy: period io + h2d = 21 ms.
  auto o = options(dag::Schedule::Wfbp);
  o.io_prefetch = 1;
  const auto one = test::run_schedule(star2(), toy(1 * ms, 20 * ms, 1 * ms), o, 4);
  const auto s1 = report::summarize_phase(one.dag, one.multi);
  CHECK(test::relative_error(s1.iteration_times_s[3], 25 * ms) < 1e-9);
  CHECK(s1.breakdown.exposed_input_s() == Approx(8.6 * ms).epsilon(1e-9));
}

TEST_CASE("schedules by hand: two batches ahead keep a slow loader busy")
{
  auto o = options(dag::Schedule::Wfbp);
  o.io_prefetch = 2;
  const auto two = test::run_schedule(star2(), toy(1 * ms, 20 * ms, 1 * ms), o, 5);
  const auto s2 = report::summarize_phase(two.dag, two.multi);
  CHECK(test::relative_error(s2.iteration_times_s[4], 21 * ms) < 1e-9);
}

TEST_CASE("links: on a star every transfer crosses two links, so they carry twice the bytes sent")
{
  // Each route is the sender's link up and the receiver's link down (split duplex): 2 link records per transfer.
  const auto out = test::run_schedule(star2(), toy(), options(dag::Schedule::Wfbp));
  std::uint64_t sent = 0, carried = 0;
  for (auto b : out.multi.bytes_sent)
    sent += b;
  for (const auto& l : out.multi.links) {
    carried += l.bytes;
    CHECK(l.busy_s <= out.multi.duration_s + 1e-12);
    CHECK(l.bandwidth_bytes_per_s == 1e9);
  }
  CHECK(out.multi.links.size() == 4); // gpu0 and gpu1, up and down
  CHECK(carried == 2 * sent);
  // One 1 MB aggregation moves 0.5 MB each way per step for 2 steps: each link is busy for the bandwidth part
  // and the latency of every transfer over it, 4 aggregations x 2 steps x (0.5 ms + 0.5 ms) per iteration.
  CHECK(out.multi.links[0].busy_s == Approx(2 * 4 * 2 * 1e-3).epsilon(1e-9));
}

// Interference (--gpu-interference F). Toy with backward 3 ms per layer: forward ends at 7, gradients at 10, 13, 16,
// 19 ms; each aggregation A(1 MB) = 2 ms. Sequential: 19 + 4 x 2 + 0.4 = 27.4 ms, with or without interference
// (nothing overlaps). wfbp without interference: L3 10-12, L2 13-15, L1 16-18, L0 19-21, update: 21.4 ms, 6 ms
// gained by overlap. With F = 0.5 the backward that overlaps an aggregation runs at half speed: L2's 3 ms of work
// do 1 ms in 10-12 and end at 14; L2's aggregation 14-16 overlaps L1 (ends 18), L1's 18-20 overlaps L0 (ends 22),
// L0's 22-24, update: 24.4 ms, only 3 ms gained. One simulation per process: one case per run.
namespace {

double interference_iteration_s(dag::Schedule s, double f, bool automatic = false)
{
  const proto::Workload w = toy(3 * ms);
  engine::SimulationInput in = test::input(star2(), w);
  in.iterations = 2;
  in.single_gpu_baseline = false;
  in.collective.gpu_interference = f;
  in.collective.gpu_interference_auto = automatic;
  engine::Simulation sim(in);
  dag::ScheduleOptions o = options(s);
  o.compute_scale = sim.compute_scale();
  const dag::IterationDag d = dag::build_dag(w, o);
  return report::summarize_phase(d, sim.run(d).multi).iteration_time_s;
}

} // namespace

TEST_CASE("interference: sequential is unchanged by F = 0.5, as nothing overlaps")
{
  CHECK(test::relative_error(interference_iteration_s(dag::Schedule::Sequential, 0.5), 27.4 * ms) < 1e-9);
}

TEST_CASE("interference: without it, wfbp gains 6 ms over sequential on the 3 ms toy")
{
  CHECK(test::relative_error(interference_iteration_s(dag::Schedule::Wfbp, 0), 21.4 * ms) < 1e-9);
}

// With a share F, each of L2, L1, L0's backward does 2 (1 - F) ms of work during the 2 ms aggregation it overlaps and
// ends 2F ms later: 21.4 + 3 x 2F ms. auto on a P40: NCCL 2.3's 1 ring over 30 SMs, F = 1/30: 21.6 ms.
TEST_CASE("interference: auto on P40s takes 1 ring / 30 SMs of the GPU, wfbp 21.6 ms")
{
  CHECK(test::relative_error(interference_iteration_s(dag::Schedule::Wfbp, 0, true), 21.6 * ms) < 1e-9);
}

TEST_CASE("interference: with F = 0.5, wfbp gains only 3 ms over sequential")
{
  CHECK(test::relative_error(interference_iteration_s(dag::Schedule::Wfbp, 0.5), 24.4 * ms) < 1e-9);
}
