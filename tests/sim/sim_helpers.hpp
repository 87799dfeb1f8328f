// Helpers for simulation tests: run one simulation (one per process) and summarise it.
#pragma once

#include "collectives/algorithm_table.hpp"
#include "engine/simulation.hpp"
#include "report/summary.hpp"

#include <cmath>

namespace ddlsim::test {

/** @brief |a - b| / |b|, the measure every closed-form check uses. */
inline double relative_error(double a, double b)
{
  return std::fabs(a - b) / std::fabs(b);
}

/** @brief A simulation's output with the DAG it ran. */
struct RunResult : engine::SimulationOutput {
  dag::IterationDag dag;
};

/** @brief The input for workload `w` on `platform` (every GPU host, ring, one iteration, with the baseline). */
inline engine::SimulationInput input(const std::string& platform, const proto::Workload& w)
{
  engine::SimulationInput in;
  in.platform_file = platform;
  in.reference_gpu = w.reference_gpu();
  return in;
}

/** @brief Builds the DAG of `w` for `schedule` and simulates it. */
inline RunResult simulate(const engine::SimulationInput& in, const proto::Workload& w, dag::Schedule schedule)
{
  RunResult r;
  r.dag = dag::build_iteration_dag(w, schedule);
  static_cast<engine::SimulationOutput&>(r) = engine::simulate(in, r.dag);
  return r;
}

/** @brief Runs `iterations` iterations on `platform` with every GPU host, without the single-GPU baseline. */
inline RunResult run(const std::string& platform, const proto::Workload& w, dag::Schedule schedule,
                     unsigned iterations = 1)
{
  engine::SimulationInput in = input(platform, w);
  in.iterations = iterations;
  in.single_gpu_baseline = false;
  return simulate(in, w, schedule);
}

/** @brief Runs `iterations` iterations of `w` under schedule options `o` on `platform` (every GPU host, ring, no
 *  single-GPU baseline); mgwfbp gets the ring's closed form on the platform as its cost. */
inline RunResult run_schedule(const std::string& platform, const proto::Workload& w, dag::ScheduleOptions o,
                              unsigned iterations = 2)
{
  engine::SimulationInput in = input(platform, w);
  in.iterations = iterations;
  in.single_gpu_baseline = false;
  engine::Simulation sim(in);
  o.compute_scale = sim.compute_scale();
  if (!o.aggregation_cost_s)
    o.aggregation_cost_s = [&](std::uint64_t b) {
      return collectives::closed_form_s(in.algorithm, b, sim.closed_form());
    };
  RunResult r;
  r.dag = dag::build_dag(w, o);
  static_cast<engine::SimulationOutput&>(r) = sim.run(r.dag);
  return r;
}

} // namespace ddlsim::test
