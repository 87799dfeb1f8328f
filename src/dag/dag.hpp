// The S-SGD task graph of one iteration on one rank, for a chosen schedule (pure C++, no SimGrid).
#pragma once

#include "proto/workload.pb.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::dag {

/** @brief What a task does. Io and H2d take fixed time; Forward, Backward, Update run on the GPU. */
enum class TaskKind { Io, H2d, Forward, Backward, Aggregation, Update };

/** @brief The in-order queue a task runs on: the GPU's compute stream or its communication stream. */
enum class Stream { Compute, Communication };

/** @brief When gradients are aggregated. */
enum class Schedule {
  Sequential, ///< all backward first, then one aggregation per layer (in backward order), no overlap
  Wfbp        ///< wait-free backpropagation: a layer's aggregation starts once its gradient is ready
};

/** @brief One node of the iteration DAG. */
struct Task {
  int id = 0;
  TaskKind kind = TaskKind::Io;
  Stream stream = Stream::Compute;
  int layer = -1;          ///< layer index for Forward/Backward/Aggregation, -1 otherwise
  double duration_s = 0;   ///< time on the reference GPU (0 for Aggregation: decided by the network)
  std::uint64_t bytes = 0; ///< gradient bytes aggregated (Aggregation only)
  std::vector<int> deps;   ///< ids of tasks of the same iteration that must finish first
  std::string name;        ///< e.g. "fwd:conv1", "agg:fc1000", "update"
};

/** @brief Tasks of one iteration, in a topological order that is also each stream's execution order.
 *  Iteration i+1's first compute task follows iteration i's last (the compute stream is in order). */
struct IterationDag {
  std::vector<Task> tasks;

  /** Ids of a stream's tasks, in execution order. */
  std::vector<int> stream_tasks(Stream stream) const;
  /** Number of Aggregation tasks. */
  int aggregations() const;
};

/** @brief Builds the DAG: io -> h2d -> fwd[0..L-1] -> bwd[L-1..0] -> update on the compute stream; one
 *  aggregation per layer with gradient_bytes > 0, in backward order, on the communication stream;
 *  aggregation k also waits for aggregation k-1; update waits for the last aggregation. */
IterationDag build_iteration_dag(const proto::Workload& workload, Schedule schedule);

/** @brief One row of the schedule table: everything ddlsim knows about a schedule. */
struct ScheduleEntry {
  Schedule id;
  const char* name;
  const char* summary; ///< one line for --help and docs
  /** Whether a layer's aggregation may start before the whole backward pass is done. */
  bool overlaps_backward;
};

/** @brief Every schedule, in the order users see them. */
const std::vector<ScheduleEntry>& schedule_table();

/** @brief The schedule of that name; throws ConfigError naming the field `schedule` and the known names. */
Schedule parse_schedule(const std::string& text);
std::string to_string(Schedule schedule);
std::string to_string(TaskKind kind);

} // namespace ddlsim::dag
