// Simulation tests: parameter servers as machines (sum and update on their host, lanes, sharding) by hand.
#include "collectives/algorithm_table.hpp"
#include "hardware/cpu_catalog.hpp"
#include "report/summary.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

// 4 P40 workers and CPU servers srv0, srv1 (2 x Xeon E5-2698 v4: 2.816 TFLOP/s, 153.6 GB/s) on a star:
// every route 2 x 1 us, 1 GB/s per direction.
constexpr double kAlpha = 2e-6;
constexpr double kB = 1e9;
constexpr double kMem = 153.6e9;
constexpr double kM = 64e6; // bytes per layer

std::string star(int servers, const std::string& cpu = "2x-Xeon-E5-2698-v4", double speed = 2.816e12)
{
  test::StarSpec s;
  s.hosts = 4;
  s.link_bytes_per_s = kB;
  s.link_latency_s = 1e-6;
  s.extra_hosts = servers;
  s.server_cpu = cpu;
  s.server_speed_flops = speed;
  return test::write_star_platform(s);
}

/** Layers l0 (forward 1 ms, backward `b0`) and l1 (forward 1 ms, backward 2 ms), `layers` of them, 64 MB each;
 *  the workers' own update takes 0.5 ms. */
proto::Workload model(int layers, double b0 = 2e-3)
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("ps-toy");
  w.set_batch_size_per_gpu(8);
  w.set_reference_gpu("P40");
  w.set_update_s(0.5e-3);
  for (int i = 0; i < layers; ++i) {
    auto* l = w.add_layers();
    l->set_name("l" + std::to_string(i));
    l->set_forward_s(1e-3);
    l->set_backward_s(i == 0 ? b0 : 2e-3);
    l->set_gradient_bytes(static_cast<std::int64_t>(kM));
  }
  return w;
}

/** The server's sum of 4 pushes of `bytes` and a momentum update, by hand: memory bound, (4 + 1) x bytes for the
 *  sum (read 4 pushes, write 1) and 5 x bytes for the update (read w, g, v; write w, v). The arithmetic,
 *  (3 + 4) FLOP per 4 bytes at 2.816 TFLOP/s, takes 36 times less. */
double update_by_hand(double bytes)
{
  return 10 * bytes / kMem;
}

struct Run {
  report::PhaseSummary summary;
  double closed_form_s = 0;
  dag::IterationDag dag;
  dag::PhaseResult multi;
};

Run run(const std::string& platform, const proto::Workload& w, collectives::CollectiveOptions o, int streams)
{
  engine::SimulationInput in = test::input(platform, w);
  in.algorithm = collectives::parse_algorithm("ps");
  in.collective = o;
  in.single_gpu_baseline = false;
  engine::Simulation sim(in);
  dag::ScheduleOptions s;
  s.comm_streams = streams;
  s.update_on_server = o.ps_update == collectives::PsUpdate::Server;
  Run r;
  r.dag = dag::build_dag(w, s);
  r.closed_form_s = collectives::closed_form_s(in.algorithm, std::uint64_t(kM), sim.closed_form());
  r.multi = sim.run(r.dag).multi;
  r.summary = report::summarize_phase(r.dag, r.multi);
  return r;
}

collectives::CollectiveOptions servers(int count, collectives::PsSharding sharding, bool update_on_server)
{
  collectives::CollectiveOptions o;
  o.ps_servers = count;
  for (int s = 0; s < count; ++s)
    o.ps_hosts.push_back("srv" + std::to_string(s));
  o.ps_sharding = sharding;
  o.ps_update = update_on_server ? collectives::PsUpdate::Server : collectives::PsUpdate::Worker;
  return o;
}

} // namespace

TEST_CASE("ps with the update on a CPU server: forward + backward + push + sum and update + pull, no worker update")
{
  const auto r = run(star(1), model(1), servers(1, collectives::PsSharding::Split, true), 1);
  // Push: the server's link carries the 4 workers' 64 MB; the pull likewise. Workers run no update.
  const double aggregation = (kAlpha + 4 * kM / kB) + update_by_hand(kM) + (kAlpha + 4 * kM / kB);
  const double expected = 1e-3 + 2e-3 + aggregation;
  INFO("simulated " << r.summary.iteration_time_s << " s, by hand " << expected << " s");
  CHECK(test::relative_error(r.summary.iteration_time_s, expected) < 1e-9);
  CHECK(test::relative_error(r.closed_form_s, aggregation) < 1e-9);
  CHECK(r.summary.breakdown.update_s() == 0);
}

TEST_CASE("ps with the update on the workers (the default): the servers only sum, every worker updates")
{
  const auto r = run(star(1), model(1), servers(1, collectives::PsSharding::Split, false), 1);
  const double aggregation = 2 * (kAlpha + 4 * kM / kB);
  CHECK(test::relative_error(r.summary.iteration_time_s, 1e-3 + 2e-3 + aggregation + 0.5e-3) < 1e-9);
  CHECK(test::relative_error(r.closed_form_s, aggregation) < 1e-9);
}

// One simulation per process (SimGrid): each case runs one.
TEST_CASE("ps round-robin over 2 CPU servers, 2 streams: two tensors aggregate at once, one on each server")
{
  // l1's and l0's gradients are ready together (l0's backward takes no time): tensor 0 (l1) on srv0, tensor 1 (l0)
  // on srv1. Each server link carries 4 flows (B/4 each), each worker link 2: as fast as one aggregation alone.
  const auto both = run(star(2), model(2, 0), servers(2, collectives::PsSharding::RoundRobin, true), 2);
  const double one = (kAlpha + 4 * kM / kB) + update_by_hand(kM) + (kAlpha + 4 * kM / kB);
  CHECK(test::relative_error(both.summary.iteration_time_s, 2e-3 + 2e-3 + one) < 1e-9);
}

TEST_CASE("ps round-robin over 2 CPU servers, 1 stream: the two tensors aggregate one after the other")
{
  const auto serial = run(star(2), model(2, 0), servers(2, collectives::PsSharding::RoundRobin, true), 1);
  const double one = (kAlpha + 4 * kM / kB) + update_by_hand(kM) + (kAlpha + 4 * kM / kB);
  CHECK(test::relative_error(serial.summary.iteration_time_s, 2e-3 + 2e-3 + 2 * one) < 1e-9);
}

TEST_CASE("ps split over 2 CPU servers, 2 streams: both servers serve both tensors, their updates share the host")
{
  // Every flow is M/2 and every server link carries 8 of them: pushes end after 4 M / B. Each server then runs two
  // updates of M/2 at once, sharing its host: both end after 2 x update(M/2) = update(M).
  const auto both = run(star(2), model(2, 0), servers(2, collectives::PsSharding::Split, true), 2);
  const double concurrent = (kAlpha + 4 * kM / kB) + update_by_hand(kM) + (kAlpha + 4 * kM / kB);
  CHECK(test::relative_error(both.summary.iteration_time_s, 2e-3 + 2e-3 + concurrent) < 1e-9);
}

TEST_CASE("ps split over 2 CPU servers, 1 stream: half of every tensor on each server, one tensor at a time")
{
  const auto serial = run(star(2), model(2, 0), servers(2, collectives::PsSharding::Split, true), 1);
  const double one = (kAlpha + 2 * kM / kB) + update_by_hand(kM / 2) + (kAlpha + 2 * kM / kB);
  CHECK(test::relative_error(serial.summary.iteration_time_s, 2e-3 + 2e-3 + 2 * one) < 1e-9);
}

namespace {
void refused(const std::string& platform, const std::string& what)
{
  engine::SimulationInput in = test::input(platform, model(1));
  in.algorithm = collectives::parse_algorithm("ps");
  in.collective = servers(1, collectives::PsSharding::Split, true);
  CHECK_THROWS_WITH(engine::Simulation(in), Catch::Contains(what));
}
} // namespace

TEST_CASE("a parameter server's host without speed is refused (by the platform check, before SimGrid reads it)")
{
  refused(star(1, "2x-Xeon-E5-2698-v4", 0), "host 'srv0': speed must be > 0");
}

TEST_CASE("a parameter server's host naming an uncatalogued CPU is refused")
{
  refused(star(1, "no-such-cpu"), "not in the CPU catalogue");
}

TEST_CASE("a parameter server's host whose speed contradicts its CPU is refused")
{
  refused(star(1, "2x-Xeon-E5-2698-v4", 1e12), "peaks at");
}

TEST_CASE("a parameter server's host naming no CPU or GPU has no memory bandwidth and is refused")
{
  refused(star(1, ""), "names no catalogued CPU or GPU");
}
