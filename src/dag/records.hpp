// What executing a DAG records: every task's start and end, every rank's traffic (no SimGrid types).
#pragma once

#include "dag/dag.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddlsim::dag {

/** @brief One executed task. Times are seconds since the start of its phase. */
struct TaskRecord {
  int rank = 0;
  int iteration = 0;
  int task = 0; ///< id in the IterationDag
  double start_s = 0;
  double end_s = 0;
};

/** @brief One message between two ranks (recorded for the trace only). Times are seconds since the phase start. */
struct TransferRecord {
  int from = 0;
  int to = 0;
  int lane = 0; ///< the communication stream (lane) whose aggregation sent it
  std::uint64_t bytes = 0;
  double start_s = 0;
  double end_s = 0;
};

/** @brief One link's traffic over a phase. */
struct LinkUsage {
  std::string name;
  double bandwidth_bytes_per_s = 0;
  std::uint64_t bytes = 0; ///< every transfer that crossed it
  double busy_s = 0;       ///< time at least one transfer was crossing it (union of the transfers' spans)
  /** Transfers in flight from each time on (seconds since the phase start); kept for the busiest links only. */
  std::vector<std::pair<double, int>> in_flight;
};

/** @brief One phase of a simulation: a set of ranks running `iterations` iterations of the DAG. */
struct PhaseResult {
  std::vector<std::string> hosts; ///< host of each rank
  std::vector<std::string> gpus;  ///< GPU model of each rank
  unsigned iterations = 0;
  /** Iterations the engine simulated; the others (iterations_simulated..iterations - 1) are copies of the last
   *  simulated one, shifted in time, because every iteration provably equals it (engine/phase.cpp, replication). */
  unsigned iterations_simulated = 0;
  std::uint64_t activities = 0; ///< SimGrid activities the phase completed (transfers, executions, sleeps)
  std::uint64_t flows = 0;      ///< of those, the host-to-host flows the flow forms handed SimGrid
  /// Flows of the flow forms that ddlsim's own network ran instead of SimGrid (mirrored lanes: CommWorld::run_fluid);
  /// not among the activities.
  std::uint64_t computed = 0;
  /** Algorithms (by name) whose flow form --fidelity auto ran because it equals their message level on the
   *  phase's routes (FlowForm::WhenExact), in name order. */
  std::vector<std::string> exact_flow_forms;
  /** Algorithms (by name) that --fidelity auto ran as one program of the message level's transfers in ddlsim's
   *  network, where shared links' ties may part it slightly from SimGrid's (CommWorld::note_computed_form). */
  std::vector<std::string> computed_flow_forms;
  std::vector<TaskRecord> records;           ///< in completion order
  std::vector<std::uint64_t> bytes_sent;     ///< per rank, all iterations
  std::vector<std::uint64_t> bytes_received; ///< per rank, all iterations
  double duration_s = 0;                     ///< from the phase start to the last task end
  std::vector<LinkUsage> links;              ///< links that carried traffic, busiest first
  std::vector<TransferRecord> transfers;     ///< rank-to-rank messages, in completion order, when asked for
};

/** @brief Called when every rank has finished an iteration: phase name, iteration (0-based), its end time
 *  since the phase start. */
using ProgressFn = std::function<void(const std::string& phase, unsigned iteration, double end_s)>;

/** @brief Called when rank 0 finishes an aggregation: phase name, aggregations done and in all (every iteration). */
using AggregationProgressFn = std::function<void(const std::string& phase, std::size_t done, std::size_t total)>;

} // namespace ddlsim::dag
