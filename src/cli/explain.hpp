// `ddlsim run --explain`: a narrated account of one iteration a student can follow, with the simulated gain of the
// changes that would shorten it most.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/algorithm_table.hpp"
#include "dag/dag.hpp"
#include "dag/records.hpp"
#include "platform/cluster_spec.hpp"
#include "proto/report.pb.h"
#include "proto/workload.pb.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief What the explanation reads: the run, its DAG and records, and how it was asked for. */
struct ExplainInput {
  const dag::IterationDag* dag = nullptr;
  const dag::PhaseResult* multi = nullptr;
  const proto::Report* report = nullptr;
  const proto::Workload* workload = nullptr;
  collectives::AlgorithmSpec algorithm;
  collectives::ClosedFormInput closed_form;
  double compute_scale = 1;                     ///< rank GPU time per reference GPU second
  std::optional<platform::ClusterSpec> cluster; ///< when the run used --cluster
  std::vector<std::string> args;                ///< the run's options, for the what-if runs
};

/** @brief Prints the explanation: the critical path, the communication (latency against bandwidth share, the
 *  busiest link), what would shorten the iteration most (each change simulated in a child run), and what the run
 *  assumed that a user may not know. */
void explain(std::ostream& out, const ExplainInput& in);

} // namespace ddlsim::cli
