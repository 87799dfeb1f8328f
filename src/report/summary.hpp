// Turns simulation records into the Report message: iteration time, throughput, scaling, breakdown.
#pragma once

#include "dag/dag.hpp"
#include "dag/records.hpp"
#include "proto/report.pb.h"
#include "proto/workload.pb.h"

namespace ddlsim::report {

/** @brief Timing summary of one phase. */
struct PhaseSummary {
  std::vector<double> iteration_times_s; ///< every iteration
  double iteration_time_s = 0;           ///< mean of the iterations after the first (the first if only one)
  proto::Breakdown breakdown;            ///< mean per rank over the same iterations
};

/** @brief Summarises a phase. The first iteration starts at time 0 of the phase; iteration i ends when the
 *  last rank finishes its update of iteration i. */
PhaseSummary summarize_phase(const dag::IterationDag& dag, const dag::PhaseResult& phase);

/** @brief Builds the report. `single` is the single-GPU baseline (the multi-GPU phase itself if it has one rank). */
proto::Report build_report(const proto::RunConfig& config, const proto::Workload& workload,
                           const dag::IterationDag& dag, const dag::PhaseResult& multi, const dag::PhaseResult& single);

} // namespace ddlsim::report
