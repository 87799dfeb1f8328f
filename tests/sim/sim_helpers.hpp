// Helpers for simulation tests: run one simulation (one per process) and summarise it.
#pragma once

#include "engine/simulation.hpp"
#include "report/summary.hpp"

#include <cmath>

namespace ddlsim::test {

/** @brief |a - b| / |b|, the measure every closed-form check uses. */
inline double relative_error(double a, double b)
{
  return std::fabs(a - b) / std::fabs(b);
}

/** @brief Runs `iterations` iterations on `platform` with every GPU host, without the single-GPU baseline. */
inline engine::SimulationOutput run(const std::string& platform, const proto::Workload& w, dag::Schedule schedule,
                                    unsigned iterations = 1)
{
  engine::SimulationInput in;
  in.platform_file = platform;
  in.workload = w;
  in.schedule = schedule;
  in.iterations = iterations;
  in.single_gpu_baseline = false;
  return engine::simulate(in);
}

} // namespace ddlsim::test
