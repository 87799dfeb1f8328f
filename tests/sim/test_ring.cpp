// Simulation tests: message-level ring allreduce against 2(P-1)(alpha + M/(P B)), and its byte counts.
#include "analytical/alpha_beta.hpp"
#include "engine/setup.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

void check_ring(int p, std::uint64_t bytes)
{
  test::StarSpec star;
  star.hosts = p;
  star.link_bytes_per_s = 12.5e9; // route: two links of 12.5 GB/s, 0.5 us each
  star.link_latency_s = 0.5e-6;
  const auto out = test::run(test::write_star_platform(star), test::single_tensor_workload(bytes), dag::Schedule::Wfbp);
  const auto summary = report::summarize_phase(out.dag, out.multi);

  const double alpha = 2 * 0.5e-6;
  const double expected = 2.0 * (p - 1) * (alpha + double(bytes) / (p * 12.5e9));
  INFO("P = " << p << ", simulated " << summary.iteration_time_s << " s, closed form " << expected << " s");
  CHECK(test::relative_error(summary.iteration_time_s, expected) < 1e-9);
  CHECK(test::relative_error(analytical::ring_allreduce_s(p, bytes, {alpha, 12.5e9}), expected) < 1e-12);
  CHECK(summary.breakdown.communication_s() == Approx(expected).epsilon(1e-9));

  // Every rank sends and receives 2(P-1) chunks of M/P bytes.
  for (int r = 0; r < p; ++r) {
    CHECK(out.multi.bytes_sent[r] == 2 * (p - 1) * (bytes / p));
    CHECK(out.multi.bytes_received[r] == 2 * (p - 1) * (bytes / p));
  }
}

} // namespace

TEST_CASE("ring allreduce, P = 2, 100 MB: simulated time equals the closed form to 1e-9")
{
  check_ring(2, 100000000);
}
TEST_CASE("ring allreduce, P = 4, 100 MB: simulated time equals the closed form to 1e-9")
{
  check_ring(4, 100000000);
}
TEST_CASE("ring allreduce, P = 8, 100 MB: simulated time equals the closed form to 1e-9")
{
  check_ring(8, 100000000);
}
TEST_CASE("ring allreduce, P = 16, 100 MB: simulated time equals the closed form to 1e-9")
{
  check_ring(16, 100000000);
}
TEST_CASE("ring allreduce, P = 3, 3 MB: simulated time equals the closed form to 1e-9")
{
  check_ring(3, 3000000);
}
TEST_CASE("ring allreduce, P = 16, 4 KiB (latency-bound): simulated time equals the closed form to 1e-9")
{
  check_ring(16, 4096);
}

TEST_CASE("ring allreduce of a size P does not divide: every byte is sent, 2(P-1)M in total")
{
  test::StarSpec star;
  star.hosts = 7;
  const std::uint64_t bytes = 1000003;
  const auto out = test::run(test::write_star_platform(star), test::single_tensor_workload(bytes), dag::Schedule::Wfbp);
  std::uint64_t sent = 0, received = 0;
  for (int r = 0; r < 7; ++r) {
    sent += out.multi.bytes_sent[r];
    received += out.multi.bytes_received[r];
  }
  CHECK(sent == 2 * 6 * bytes);
  CHECK(received == sent);
}

TEST_CASE("ring allreduce, P = 4, over links whose latency a profile changes: the times follow the profile")
{
  // Every link's latency jumps from 0.5 us to 0.5 ms 1 us after the start: the first of iteration 1's 2(P - 1) steps,
  // started at 0, pays alpha = 1 us, every later step 1 ms (SimGrid reads a route's latency when a message starts).
  // Iteration 2, the one the summary reports, pays 1 ms at every step. A platform with a profile is not a static
  // network (Setup::static_links, engine/setup.cpp): iteration 2 is simulated, not copied from iteration 1 (which
  // would give it 1 us at its first step), and no form reads each route's latency once, before the run (1 us at
  // every step).
  const int p = 4;
  const std::uint64_t bytes = 4000000;
  test::StarSpec star;
  star.hosts = p;
  star.link_bytes_per_s = 12.5e9;
  star.link_latency_s = 0.5e-6;
  star.latency_profile = "0 0.5e-6\n1e-6 0.5e-3\n";
  const auto out =
      test::run(test::write_star_platform(star), test::single_tensor_workload(bytes), dag::Schedule::Wfbp, 2);
  const auto summary = report::summarize_phase(out.dag, out.multi);
  const double step_s = double(bytes) / (p * 12.5e9);
  CHECK(out.multi.iterations_simulated == 2);
  CHECK(test::relative_error(summary.iteration_time_s, 2.0 * (p - 1) * (1e-3 + step_s)) < 1e-9);
}

TEST_CASE("ring allreduce, P = 4, a link's latency changes while a step waits its latency: the run stops, saying why")
{
  // As above, but the latency jumps 0.5 us after the start, while the first step waits its 1 us. SimGrid 3.32 starts
  // such a transfer's sharing at the change and, when its latency ends, leaves it with no event: it never ends, every
  // rank waits, SimGrid finds a deadlock. The message names that defect (engine::stalled_message).
  const int p = 4;
  test::StarSpec star;
  star.hosts = p;
  star.link_bytes_per_s = 12.5e9;
  star.link_latency_s = 0.5e-6;
  star.latency_profile = "0 0.5e-6\n0.5e-6 0.5e-3\n";
  const std::string platform = test::write_star_platform(star);
  CHECK_THROWS_WITH(test::run(platform, test::single_tensor_workload(4000000), dag::Schedule::Wfbp, 2),
                    Catch::Contains("SimGrid found a deadlock. The platform changes link latencies over time") &&
                        Catch::Contains("never ends a transfer that waits its latency"));
}

TEST_CASE("a stalled run names SimGrid's latency-change defect only on a platform whose latencies may change")
{
  engine::Setup plain;
  CHECK(engine::stalled_message(plain, "the run stopped") == "the run stopped: SimGrid found a deadlock");
  engine::Setup profiled;
  profiled.latency_profiles = true;
  CHECK_THAT(engine::stalled_message(profiled, "the run stopped"),
             Catch::StartsWith("the run stopped: SimGrid found a deadlock. The platform changes link latencies") &&
                 Catch::Contains("never ends a transfer that waits its latency"));
}
