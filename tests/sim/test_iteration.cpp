// Simulation tests: whole iterations of a 3-layer toy model against hand-computed times.
#include "analytical/alpha_beta.hpp"
#include "analytical/critical_path.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

// Toy model, times in ms on a P40: io 1, h2d 0.5, forward 1/2/3, backward 2/4/6, update 0.5;
// gradients 4, 8, 2 MB. Platform: 4 P40s on a star, route alpha = 5 us, B = 1 GB/s.
proto::Workload toy()
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("toy");
  w.set_batch_size_per_gpu(8);
  w.set_reference_gpu("P40");
  w.set_io_s(1e-3);
  w.set_h2d_s(0.5e-3);
  w.set_update_s(0.5e-3);
  const double fwd[] = {1e-3, 2e-3, 3e-3};
  const std::int64_t grad[] = {4000000, 8000000, 2000000};
  for (int i = 0; i < 3; ++i) {
    auto* l = w.add_layers();
    l->set_name("l" + std::to_string(i));
    l->set_forward_s(fwd[i]);
    l->set_backward_s(2 * fwd[i]);
    l->set_gradient_bytes(grad[i]);
  }
  return w;
}

std::string toy_platform(int hosts, double speed = 12e12, const std::string& gpu = "P40")
{
  test::StarSpec star;
  star.hosts = hosts;
  star.link_bytes_per_s = 1e9;
  star.link_latency_s = 2.5e-6;
  star.speed_flops = speed;
  star.gpu = gpu;
  return test::write_star_platform(star);
}

// Ring allreduce on 4 ranks by hand: 6 steps of (5 us + M/4 / 1 GB/s).
const double kT0 = 6 * (5e-6 + 1e-3);   // l0, 4 MB
const double kT1 = 6 * (5e-6 + 2e-3);   // l1, 8 MB
const double kT2 = 6 * (5e-6 + 0.5e-3); // l2, 2 MB

} // namespace

TEST_CASE("sequential schedule: iteration = compute + every aggregation, none hidden")
{
  const auto out = test::run(toy_platform(4), toy(), dag::Schedule::Sequential);
  const auto s = report::summarize_phase(out.dag, out.multi);
  const double compute = 1e-3 + 0.5e-3 + (1e-3 + 2e-3 + 3e-3) + (2e-3 + 4e-3 + 6e-3) + 0.5e-3;
  const double expected = compute + kT2 + kT1 + kT0;
  INFO("simulated " << s.iteration_time_s << " s, hand-computed " << expected << " s");
  CHECK(test::relative_error(s.iteration_time_s, expected) < 1e-9);
  CHECK(s.breakdown.communication_s() == Approx(kT0 + kT1 + kT2).epsilon(1e-9));
  CHECK(s.breakdown.exposed_communication_s() == Approx(kT0 + kT1 + kT2).epsilon(1e-9));
  CHECK(s.breakdown.backward_s() == Approx(12e-3).epsilon(1e-12));
}

TEST_CASE("wfbp schedule: iteration = the hand-computed overlapped critical path")
{
  const auto out = test::run(toy_platform(4), toy(), dag::Schedule::Wfbp);
  const auto s = report::summarize_phase(out.dag, out.multi);
  // Backward runs l2, l1, l0; each aggregation starts when its gradient is ready and the previous one is done.
  const double fwd_end = 1e-3 + 0.5e-3 + 6e-3;
  const double b2 = fwd_end + 6e-3, b1 = b2 + 4e-3, b0 = b1 + 2e-3;
  const double a2 = b2 + kT2;
  const double a1 = std::max(a2, b1) + kT1;
  const double a0 = std::max(a1, b0) + kT0;
  const double expected = std::max(b0, a0) + 0.5e-3;
  INFO("simulated " << s.iteration_time_s << " s, hand-computed " << expected << " s");
  CHECK(test::relative_error(s.iteration_time_s, expected) < 1e-9);
  // The analytical longest path of the same DAG agrees.
  const auto cp = analytical::critical_path_s(out.dag, [](const dag::Task& t) {
    return t.kind == dag::TaskKind::Aggregation ? analytical::ring_allreduce_s(4, t.bytes, {5e-6, 1e9}) : t.duration_s;
  });
  CHECK(test::relative_error(cp, expected) < 1e-12);
  // Only what sticks out past the backward pass is exposed.
  CHECK(s.breakdown.exposed_communication_s() == Approx(a0 - b0).epsilon(1e-9));
}

TEST_CASE("one GPU: no communication, iteration = sum of compute, and 3 iterations repeat exactly")
{
  const auto out = test::run(toy_platform(1), toy(), dag::Schedule::Wfbp, 3);
  const auto s = report::summarize_phase(out.dag, out.multi);
  const double compute = 1e-3 + 0.5e-3 + 6e-3 + 12e-3 + 0.5e-3;
  CHECK(out.multi.bytes_sent == std::vector<std::uint64_t>{0});
  CHECK(s.breakdown.communication_s() == 0.0);
  CHECK(std::fabs(s.breakdown.exposed_communication_s()) < 1e-15);
  REQUIRE(s.iteration_times_s.size() == 3);
  for (double t : s.iteration_times_s)
    CHECK(test::relative_error(t, compute) < 1e-9);
  CHECK(test::relative_error(s.iteration_time_s, compute) < 1e-9);
}

TEST_CASE("a GPU twice as fast as the reference halves forward, backward and update, not I/O or H2D")
{
  const auto out = test::run(toy_platform(1, 24e12, "P40x2"), toy(), dag::Schedule::Wfbp);
  const auto s = report::summarize_phase(out.dag, out.multi);
  CHECK(s.breakdown.io_s() == Approx(1e-3).epsilon(1e-12));
  CHECK(s.breakdown.h2d_s() == Approx(0.5e-3).epsilon(1e-12));
  CHECK(s.breakdown.forward_s() == Approx(3e-3).epsilon(1e-9));
  CHECK(s.breakdown.backward_s() == Approx(6e-3).epsilon(1e-9));
  CHECK(s.breakdown.update_s() == Approx(0.25e-3).epsilon(1e-9));
}

TEST_CASE("the single-GPU baseline runs first on rank 0's host and sees the compute sum")
{
  engine::SimulationInput in = test::input(toy_platform(4), toy());
  in.iterations = 2;
  const auto out = test::simulate(in, toy(), dag::Schedule::Wfbp);
  REQUIRE(out.single.has_value());
  CHECK(out.single->hosts == std::vector<std::string>{"gpu0"});
  const auto single = report::summarize_phase(out.dag, *out.single);
  CHECK(test::relative_error(single.iteration_time_s, 20e-3) < 1e-9); // 1 + 0.5 + 6 + 12 + 0.5 ms
  // The multi-GPU phase is measured from its own start: both iterations take the wfbp critical path.
  const auto multi = report::summarize_phase(out.dag, out.multi);
  CHECK(test::relative_error(multi.iteration_times_s[0], multi.iteration_times_s[1]) < 1e-9);
  CHECK(multi.iteration_time_s > single.iteration_time_s);
}

TEST_CASE("a platform host whose speed contradicts the GPU catalogue is rejected")
{
  CHECK_THROWS_WITH(
      test::run(toy_platform(2, 11e12, "P40"), toy(), dag::Schedule::Wfbp),
      Catch::Matchers::Contains("host 'gpu0': speed 1.1e+13 flop/s differs from the P40 catalogue speed"));
}

TEST_CASE("the reduction cost delays aggregation only: backward keeps its time under wfbp")
{
  engine::SimulationInput in = test::input(toy_platform(4), toy());
  in.single_gpu_baseline = false;
  in.collective.reduce_s_per_byte = 1e-9;
  const auto out = test::simulate(in, toy(), dag::Schedule::Wfbp);
  const auto s = report::summarize_phase(out.dag, out.multi);
  CHECK(s.breakdown.backward_s() == Approx(12e-3).epsilon(1e-12));
  CHECK(s.breakdown.forward_s() == Approx(6e-3).epsilon(1e-12));
  // Each ring adds (P-1) x M/P x gamma of reduction: 3/4 x (4 + 8 + 2) MB x 1 ns.
  CHECK(s.breakdown.communication_s() == Approx(kT0 + kT1 + kT2 + 0.75 * 14e6 * 1e-9).epsilon(1e-9));
}
