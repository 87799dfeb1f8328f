// Simulation tests of the stack mechanisms: a toy profile (tests/data/stacks/toy.textproto) whose times are worked
// out by hand below and above its breakpoints and rendezvous threshold, with its rule choosing by rank count.
#include "engine/sweep.hpp"
#include "sim/sim_helpers.hpp"
#include "stack/stack_io.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;

namespace {

// Star: every route crosses two links of 0.5 us and 10 GB/s: alpha = 1 us, B = 10 GB/s.
constexpr double kAlpha = 1e-6;
constexpr double kB = 10e9;

// The toy profile's values, as its file sets them.
constexpr double kSend = 2e-6, kRecv = 1e-6, kCopy = 0.1e-9, kCall = 5e-6, kCallCopy = 0.01e-9;

engine::SweepOutput sweep_toy(int ranks, const std::vector<std::uint64_t>& sizes,
                              const std::string& latency_profile = "")
{
  const stack::Stack toy = stack::load_stack(std::string(DDLSIM_SOURCE_DIR) + "/tests/data/stacks/toy.textproto");
  test::StarSpec star;
  star.hosts = ranks;
  star.link_bytes_per_s = kB;
  star.link_latency_s = kAlpha / 2;
  star.latency_profile = latency_profile;
  engine::SweepInput in;
  in.platform_file = test::write_star_platform(star);
  in.algorithm = *toy.algorithm;
  in.collective.stack = toy.profile;
  in.sizes = sizes;
  return engine::run_collective_sweep(in);
}

/** Both control messages of the rendezvous: overheads of both ends and the latency at the 1-byte factor (2). */
constexpr double kHandshake = 2 * (kSend + kRecv + 2 * kAlpha);

/** One exchange of 16 KiB at P = 2 (recursive doubling) over routes of latency `alpha`: the call, the send's
 *  overhead and copy, the rendezvous round trip (latency factor 2), the message (latency factor 3, bandwidth factor
 *  0.8), the receive's overhead. */
double exchange_16k(double alpha)
{
  return kCall + kCallCopy * 16384 + kSend + kCopy * 16384 + 2 * (kSend + kRecv + 2 * alpha) + 3 * alpha +
         16384 / (0.8 * kB) + kRecv;
}

} // namespace

TEST_CASE("toy stack, P = 2 (rule: rd): one exchange, below and above the breakpoints and the rendezvous")
{
  const auto out = sweep_toy(2, {1024, 16384});
  // 1 KiB: eager, latency factor 2, bandwidth factor 0.5.
  const double small = kCall + kCallCopy * 1024 + kSend + kCopy * 1024 + 2 * kAlpha + 1024 / (0.5 * kB) + kRecv;
  // 16 KiB: rendezvous round trip first, latency factor 3, bandwidth factor 0.8.
  const double large =
      kCall + kCallCopy * 16384 + kSend + kCopy * 16384 + kHandshake + 3 * kAlpha + 16384 / (0.8 * kB) + kRecv;
  CHECK(test::relative_error(out.points[0].time_s, small) < 1e-9);
  CHECK(test::relative_error(out.points[1].time_s, large) < 1e-9);
  CHECK(out.points[0].rank_messages == 2); // recursive doubling: one message each way
}

TEST_CASE("toy stack, P = 4 (rule: ring): 6 steps of M/4, eager below and rendezvous above 8 KiB")
{
  const auto out = sweep_toy(4, {4096, 65536});
  auto step = [](double s, double lat_factor, double bw_factor, bool rendezvous) {
    return kSend + kCopy * s + (rendezvous ? kHandshake : 0.0) + lat_factor * kAlpha + s / (bw_factor * kB) + kRecv;
  };
  const double small = kCall + kCallCopy * 4096 + 6 * step(1024, 2, 0.5, false);
  const double large = kCall + kCallCopy * 65536 + 6 * step(16384, 3, 0.8, true);
  CHECK(test::relative_error(out.points[0].time_s, small) < 1e-9);
  CHECK(test::relative_error(out.points[1].time_s, large) < 1e-9);
  CHECK(out.points[0].rank_messages == 4 * 6); // the ring, not recursive doubling
}

TEST_CASE("toy stack: a rendezvous reads the route's latency afresh where a profile changes it")
{
  // Every link's latency doubles (0.5 to 1 us: alpha 1 to 2 us) in the middle of the second of three exchanges. The
  // collective's world is not told its links are static (CommWorld::set_static_links), so the third exchange's
  // rendezvous pays the new latency as its message does; a latency read once per pair would keep the old one.
  const double first = exchange_16k(kAlpha);
  std::ostringstream profile;
  profile.precision(17);
  profile << "0 " << kAlpha / 2 << "\n" << 1.5 * first << " " << kAlpha << "\n";
  const auto out = sweep_toy(2, {16384, 16384, 16384}, profile.str());
  REQUIRE(out.points.size() == 3);
  CHECK(test::relative_error(out.points[0].time_s, first) < 1e-9);
  CHECK(test::relative_error(out.points[2].time_s, exchange_16k(2 * kAlpha)) < 1e-9);
}

TEST_CASE("toy stack, two streams, a run over links whose latency a profile changes: each rendezvous pays it afresh")
{
  // P = 2, one 16 KiB tensor, two iterations, two communication streams (so the run's world is not solo), after the
  // single-GPU baseline (no time here: no compute). Every link's latency doubles (alpha 1 to 2 us) 20 us after the
  // start: after iteration 1's rendezvous, during its message. The
  // platform has a profile, so the phase does not tell its world its links are static (CommWorld::set_static_links)
  // and does not copy iteration 2 from iteration 1: iteration 2, the one the summary reports, pays the new latency in
  // its rendezvous as in its message. A latency read once per pair would keep iteration 1's for the rendezvous.
  const stack::Stack toy = stack::load_stack(std::string(DDLSIM_SOURCE_DIR) + "/tests/data/stacks/toy.textproto");
  test::StarSpec star;
  star.hosts = 2;
  star.link_bytes_per_s = kB;
  star.link_latency_s = kAlpha / 2;
  std::ostringstream profile;
  profile.precision(17);
  profile << "0 " << kAlpha / 2 << "\n" << 20e-6 << " " << kAlpha << "\n";
  star.latency_profile = profile.str();
  const auto w = test::single_tensor_workload(16384);
  engine::SimulationInput in = test::input(test::write_star_platform(star), w);
  in.iterations = 2;
  in.algorithm = *toy.algorithm;
  in.collective.stack = toy.profile;
  dag::ScheduleOptions o;
  o.comm_streams = 2;
  const auto dag = dag::build_dag(w, o);
  const auto out = engine::simulate(in, dag);
  const auto summary = report::summarize_phase(dag, out.multi);
  CHECK(out.multi.iterations_simulated == 2);
  CHECK(test::relative_error(summary.iteration_time_s, exchange_16k(2 * kAlpha)) < 1e-9);
}
