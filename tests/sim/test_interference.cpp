// Simulation tests of the PCIe and CPU interference (--pcie-contention, --cpu-contention) and of
// --gpu-interference auto: toys whose every iteration is worked out by hand, where overlap gains less with them on.
#include "engine/interference.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {

constexpr double ms = 1e-3;

// One layer: forward 1 ms, backward 1 ms, 2 MB of gradient, update 0.4 ms, loading `io` and copy `h2d`.
proto::Workload one_layer(double io, double h2d)
{
  proto::Workload w;
  w.set_schema_version(1);
  w.set_model("one-layer");
  w.set_batch_size_per_gpu(8);
  w.set_reference_gpu("P40");
  w.set_io_s(io);
  w.set_h2d_s(h2d);
  w.set_update_s(0.4 * ms);
  auto* l = w.add_layers();
  l->set_name("L0");
  l->set_forward_s(1 * ms);
  l->set_backward_s(1 * ms);
  l->set_gradient_bytes(2000000);
  return w;
}

struct Toy {
  proto::Workload workload;
  collectives::StackProfile stack;
  bool pcie = false;
  bool cpu = false;
  int prefetch = 0;
};

/** The third of 4 iterations of `toy` (a middle one: the last has no next batch to load meanwhile) on 2 nodes of one
 * P40 and its CPU, PCIe 1 GB/s (every route's bottleneck, no latency): the ring on 2 ranks is 2 steps of 1 MB each way.
 */
double iteration_s(const Toy& toy)
{
  engine::SimulationInput in = test::input(test::write_two_node_cpu_platform(1e9), toy.workload);
  in.iterations = 4;
  in.single_gpu_baseline = false;
  in.collective.stack = toy.stack;
  in.collective.pcie_contention = toy.pcie;
  in.collective.cpu_contention = toy.cpu;
  engine::Simulation sim(in);
  dag::ScheduleOptions o;
  o.schedule = dag::Schedule::Wfbp;
  o.io_prefetch = toy.prefetch;
  o.compute_scale = sim.compute_scale();
  const dag::IterationDag d = dag::build_dag(toy.workload, o);
  return report::summarize_phase(d, sim.run(d).multi).iteration_times_s[2];
}

// PCIe toy: h2d 6 ms, a host-staged stack whose copies are 2 ns/B, all of it the two PCIe copies (1 ms each for 1 MB
// at 1 GB/s). Off: every step is 2 ms of copy (slept) + 1 ms of message, the aggregation 2-8 ms; prefetched, the
// copy (1-7 ms) hides behind it: forward 0-1, backward 1-2, update 8-8.4: 8.4 ms. Not prefetched: 6 + 1 + 1 + 6 + 0.4
// = 14.4 ms. On, not prefetched: nothing overlaps the input copy, and each step is D2H 1 ms, message 1 ms, H2D 1 ms:
// 14.4 ms again. On, prefetched: the input copy (6 MB over the GPU's PCIe link, down) shares the link with the
// message and the staging H2D copy arriving at the GPU: 1-3 alone (2 MB), D2H 2-3 (up: not shared), message 3-5 at
// half speed (input +1 MB), H2D 5-7 at half (+1 MB), D2H 7-8 (input alone, +1 MB), message 8-10 at half (input's last
// 1 MB ends at 10 too), H2D 10-11 alone, update 11-11.4: 11.4 ms. Prefetch gains 6 ms off, 3 ms on.
Toy pcie_toy(bool on, int prefetch)
{
  Toy t{one_layer(0, 6 * ms), {}, on, false, prefetch};
  t.stack.name = "staged-toy";
  t.stack.copy_s_per_byte = 2e-9;
  t.stack.pcie_copy_s_per_byte = 2e-9;
  t.stack.host_staged = true;
  return t;
}

// CPU toy: io 10 ms, a stack with 2 ms of send overhead per message. Off: each step 2 ms overhead + 1 ms message,
// the aggregation 2-8 ms, the loading of the next batch 1-11 ms: 11 ms prefetched; 10 + 1 + 1 + 6 + 0.4 = 18.4 ms not
// prefetched. On, not prefetched: the overheads (one core of 40, bounded to it) run alone: 18.4 ms again. On,
// prefetched: loading holds the whole CPU (one rank per node) except during the 2 x 2 ms of overhead, when one core
// of the 40 is the overhead's: it loses 4 ms / 40 = 0.1 ms and ends at 11.1 ms. Prefetch gains 7.4 ms off, 7.3 ms on.
Toy cpu_toy(bool on, int prefetch)
{
  Toy t{one_layer(10 * ms, 0), {}, false, on, prefetch};
  t.stack.name = "overhead-toy";
  t.stack.send_overhead_s = 2 * ms;
  return t;
}

} // namespace

TEST_CASE("pcie interference: off, the prefetched input copy hides behind communication (8.4 ms)")
{
  CHECK(test::relative_error(iteration_s(pcie_toy(false, 1)), 8.4 * ms) < 1e-9);
}

TEST_CASE("pcie interference: off, without prefetch nothing overlaps (14.4 ms)")
{
  CHECK(test::relative_error(iteration_s(pcie_toy(false, 0)), 14.4 * ms) < 1e-9);
}

TEST_CASE("pcie interference: on, without prefetch the staging transfers alone take what the copy sleep took (14.4 ms)")
{
  CHECK(test::relative_error(iteration_s(pcie_toy(true, 0)), 14.4 * ms) < 1e-9);
}

TEST_CASE("pcie interference: on, the prefetched input copy shares the PCIe link and prefetch gains 3 ms, not 6")
{
  CHECK(test::relative_error(iteration_s(pcie_toy(true, 1)), 11.4 * ms) < 1e-9);
}

TEST_CASE("cpu interference: off, prefetched loading is the period (11 ms)")
{
  CHECK(test::relative_error(iteration_s(cpu_toy(false, 1)), 11 * ms) < 1e-9);
}

TEST_CASE("cpu interference: on, without prefetch the overheads run alone on one core (18.4 ms)")
{
  CHECK(test::relative_error(iteration_s(cpu_toy(true, 0)), 18.4 * ms) < 1e-9);
}

TEST_CASE("cpu interference: off, without prefetch (18.4 ms)")
{
  CHECK(test::relative_error(iteration_s(cpu_toy(false, 0)), 18.4 * ms) < 1e-9);
}

TEST_CASE("cpu interference: on, each overhead takes a core from loading and prefetch gains 7.3 ms, not 7.4")
{
  CHECK(test::relative_error(iteration_s(cpu_toy(true, 1)), 11.1 * ms) < 1e-9);
}

TEST_CASE("pcie and cpu interference: refused with one line on a platform without CPU hosts")
{
  const proto::Workload w = one_layer(0, 1 * ms);
  engine::SimulationInput in =
      test::input(std::string(DDLSIM_SOURCE_DIR) + "/tests/data/platforms/two-gpus-no-cpu.xml", w);
  in.iterations = 1;
  in.single_gpu_baseline = false;
  in.collective.cpu_contention = true;
  engine::Simulation sim(in);
  const dag::IterationDag d = dag::build_iteration_dag(w, dag::Schedule::Wfbp);
  CHECK_THROWS_WITH(sim.run(d), Catch::Contains("needs a CPU host") && Catch::Contains("rank 0's host 'a'"));
}

TEST_CASE("gpu interference auto: NCCL 2.3 builds 2 rings on Kepler and 1 elsewhere (one NIC)")
{
  CHECK(engine::nccl_rings(37) == 2);
  CHECK(engine::nccl_rings(61) == 1);
  CHECK(engine::nccl_rings(70) == 1);
}
