// Turns simulation records into the Report message: iteration time, throughput, scaling, breakdown.
#pragma once

#include "dag/dag.hpp"
#include "dag/records.hpp"
#include "proto/report.pb.h"
#include "proto/workload.pb.h"

namespace ddlsim::report {

/** @brief Timing summary of one phase. */
struct PhaseSummary {
  std::vector<double> iteration_times_s;  ///< every iteration
  double iteration_time_s = 0;            ///< mean of the iterations after the warm-up (the last if only one)
  double std_s = 0, min_s = 0, max_s = 0; ///< over the measured iterations
  unsigned first_measured = 0;            ///< the first iteration in the mean
  proto::Breakdown breakdown;             ///< mean per rank over the same iterations
};

/** @brief Summarises a phase. The first iteration starts at time 0 of the phase; iteration i ends when the
 *  last rank finishes its last task of iteration i. The first `warmup` iterations are left out of the mean (all
 *  but the last at most). */
PhaseSummary summarize_phase(const dag::IterationDag& dag, const dag::PhaseResult& phase, unsigned warmup = 1);

/** @brief Builds the report. `single` is the single-GPU baseline (the multi-GPU phase itself if it has one rank);
 *  the warm-up is config.schedule_config().warmup(). */
/** @brief The link with the highest mean utilisation (the first of them on a tie), or nullptr without links. */
const proto::LinkRecord* most_used_link(const proto::Report& report);

proto::Report build_report(const proto::RunConfig& config, const proto::Workload& workload,
                           const dag::IterationDag& dag, const dag::PhaseResult& multi,
                           const dag::IterationDag& single_dag, const dag::PhaseResult& single);

} // namespace ddlsim::report
