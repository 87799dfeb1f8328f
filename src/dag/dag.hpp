// The S-SGD task graph on one rank, for a chosen schedule (pure C++, no SimGrid). One iteration's tasks, with
// dependencies that may reach into other iterations: the graph of N iterations is this one repeated N times.
#pragma once

#include "proto/workload.pb.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddlsim::dag {

/** @brief What a task does. Io, H2d and Timer take fixed time; Forward, Backward, Update run on the GPU. */
enum class TaskKind { Io, H2d, Forward, Backward, Aggregation, Update, Timer };

/** @brief The in-order queue a task runs on. Input exists with I/O prefetch; Timer with tensor fusion (its
 *  tasks are the fusion cycle's waits). */
enum class Stream { Compute, Communication, Input, Timer };

/** @brief How gradients are grouped into aggregations and when each may start (the schedule table). */
enum class Schedule {
  Sequential, ///< all backward first, then one aggregation per layer (in backward order), no overlap
  Wfbp,       ///< wait-free backpropagation: a layer's aggregation starts once its gradient is ready
  Fusion,     ///< Horovod's tensor fusion: ready gradients share a buffer, flushed when full or after a cycle
  Buckets,    ///< PyTorch DDP: static buckets in reverse layer order, each reduced once all its gradients exist
  Mgwfbp,     ///< MG-WFBP: consecutive gradients merged where the closed-form cost says it pays
  Priority    ///< ByteScheduler: partitions sent front layers first, within a credit of bytes in flight
};

/** @brief When parameters are updated. */
enum class Update {
  Global,  ///< one update after every aggregation; the next forward waits for it
  PerLayer ///< layer l's update once its gradient is aggregated; the next forward of layer l waits only for it
};

/** @brief A dependency: `task` of iteration i + `offset` for a task of iteration i (ignored when that iteration
 *  does not exist, e.g. before the first). */
struct Dep {
  int task = 0;
  int offset = 0;
};

/** @brief One node of the DAG. */
struct Task {
  int id = 0;
  TaskKind kind = TaskKind::Io;
  Stream stream = Stream::Compute;
  int layer = -1;          ///< layer index for Forward/Backward/Update (per layer), -1 otherwise
  double duration_s = 0;   ///< time on the reference GPU, or the fixed time (0 for Aggregation: the network's)
  std::uint64_t bytes = 0; ///< gradient bytes aggregated (Aggregation only)
  std::vector<int> deps;   ///< ids of tasks of the same iteration that must finish first
  std::vector<Dep> other;  ///< tasks of other iterations that must finish first (offset != 0)
  std::vector<int> layers; ///< Aggregation: the layers whose gradients it carries, in backward order
  int priority = 0;        ///< Aggregation under CommPolicy::Priority: lower is sent first
  int shift = 0;           ///< its stream runs it this many slots after its own iteration's (Slot::shift)
  std::string name;        ///< e.g. "fwd:conv1", "agg:fc1000", "update"
};

/** @brief True when `task` marks the end of its iteration: it runs in its own iteration's slot. An iteration ends
 *  with the last of these (per-layer updates run in the next iteration's slot and count as its time). */
inline bool ends_iteration(const Task& task)
{
  return task.shift == 0;
}

/** @brief A place in a stream's order: in slot s the stream runs `task` of iteration s - `shift`. Slots run
 *  0, 1, ...; a shift of 1 puts a task of iteration i among the tasks of iteration i + 1 (a per-layer update
 *  before the next forward of its layer). */
struct Slot {
  int task = 0;
  int shift = 0;
};

/** @brief How the communication stream picks the next aggregation. */
enum class CommPolicy {
  InOrder, ///< the order of `communication`; aggregation k of it on stream k mod comm_streams
  Priority ///< the ready one of lowest priority, while the bytes in flight are below credit_bytes
};

/** @brief The DAG. Stream order is also written as edges (each task depends on the previous one of its stream,
 *  except under CommPolicy::Priority), so the longest path of the unrolled graph is the iteration time of a
 *  rank without contention. Tasks are in a topological order of each iteration. */
struct IterationDag {
  std::vector<Task> tasks;
  std::vector<Slot> compute;       ///< compute stream order within a slot
  std::vector<Slot> input;         ///< input stream (empty without prefetch)
  std::vector<Slot> timer;         ///< timer stream (empty without fusion)
  std::vector<Slot> communication; ///< aggregations in launch order (InOrder) or by id (Priority)
  int comm_streams = 1;
  CommPolicy comm_policy = CommPolicy::InOrder;
  std::uint64_t credit_bytes = 0; ///< Priority: a partition is committed while fewer bytes are in flight

  /** Ids of a stream's tasks, in slot order (shifts ignored). */
  std::vector<int> stream_tasks(Stream stream) const;
  /** The order of `stream`. */
  const std::vector<Slot>& order(Stream stream) const;
  std::vector<Slot>& order(Stream stream);
  /** Number of Aggregation tasks. */
  int aggregations() const;
  /** Largest shift of any stream: N iterations run in N + max_shift() slots. */
  int max_shift() const;
};

/** @brief The task that closes every iteration on a rank when the graph makes iterations repeat exactly, else -1.
 *  It is the iteration's only sink (every task of the iteration comes before it), no task is shifted into a later
 *  slot, every dependency on another iteration points to an earlier one, and every task without a dependency in
 *  its own iteration waits for that task of the iteration before. Then iteration i + 1 of a rank starts only when
 *  iteration i has ended on that rank; if that happens at one instant on every rank, nothing of iteration i is
 *  left anywhere and iteration i + 1 starts from the state iteration 0 started from, shifted in time. (The engine
 *  checks the instant; an I/O prefetch, a per-layer update or a schedule that pipelines across iterations fails
 *  the graph test.) */
int iteration_barrier(const IterationDag& dag);

/** @brief The knobs of the schedules (defaults and their sources in docs/schedules.md). */
struct ScheduleOptions {
  Schedule schedule = Schedule::Wfbp;
  Update update = Update::Global;
  int io_prefetch = 0;                           ///< batches loaded ahead; 0: I/O on the compute stream
  int comm_streams = 1;                          ///< aggregations in flight at once (InOrder)
  std::uint64_t fusion_bytes = 128ull << 20;     ///< fusion: buffer size (Horovod >= 0.21: 128 MiB)
  double fusion_cycle_s = 1e-3;                  ///< fusion: cycle time (Horovod >= 0.21: 1 ms)
  std::uint64_t bucket_bytes = 25ull << 20;      ///< buckets: bucket_cap_mb (DDP: 25 MiB)
  std::uint64_t first_bucket_bytes = 1ull << 20; ///< buckets: the first bucket's cap (DDP: 1 MiB)
  std::uint64_t partition_bytes = 4000000;       ///< priority: partition (ByteScheduler: 1e6 FP32 parameters)
  std::uint64_t credit_bytes = 16000000;         ///< priority: credit (ByteScheduler: 4e6 FP32 parameters)
  /** Parameter servers run the update (PsUpdate::Server): the workers' update tasks take no time. */
  bool update_on_server = false;
  /** Backward time on the ranks' GPU per second on the workload's reference GPU (plans that read times). */
  double compute_scale = 1;
  /** mgwfbp: closed-form time of one aggregation of that many bytes on the platform (required for mgwfbp). */
  std::function<double(std::uint64_t)> aggregation_cost_s;
  /** mgwfbp, optional: a lower bound of aggregation_cost_s, cheaper to evaluate; a group whose end with this bound
   *  already loses is not costed (the plan is the same, the search shorter). */
  std::function<double(std::uint64_t)> aggregation_floor_s;
};

/** @brief Builds the DAG of `workload` under `options`: the compute stream runs io, h2d (unless prefetched),
 *  forward 0..L-1, backward L-1..0 and the update(s); the schedule decides the aggregations. */
IterationDag build_dag(const proto::Workload& workload, const ScheduleOptions& options);

/** @brief build_dag with `schedule` and every other option at its default. */
IterationDag build_iteration_dag(const proto::Workload& workload, Schedule schedule);

/** @brief Knobs a schedule reads (besides update, prefetch and comm streams, which all read). */
enum ScheduleKnob : unsigned {
  kKnobFusion = 1u << 0,    ///< fusion_bytes, fusion_cycle_s
  kKnobBuckets = 1u << 1,   ///< bucket_bytes, first_bucket_bytes
  kKnobPartition = 1u << 2, ///< partition_bytes, credit_bytes
  kKnobStreams = 1u << 3,   ///< comm_streams (every InOrder schedule)
};

struct LayerTimes;
struct PlannedAggregation;

/** @brief One row of the schedule table: everything ddlsim knows about a schedule. */
struct ScheduleEntry {
  Schedule id;
  const char* name;
  const char* summary;         ///< one line for --help and docs
  const char* source;          ///< where the rule comes from
  unsigned knobs;              ///< ScheduleKnob bits
  bool needs_per_layer_update; ///< refused with Update::Global on the command line (its gain needs it)
  CommPolicy policy;           ///< how the communication stream picks the next aggregation
  /** The aggregations, in launch order (dag/plans.cpp). */
  std::vector<PlannedAggregation> (*plan)(const LayerTimes& layers, const ScheduleOptions& options);
};

/** @brief Every schedule, in the order users see them. */
const std::vector<ScheduleEntry>& schedule_table();
/** @brief The row of `id`. */
const ScheduleEntry& schedule_entry(Schedule id);

/** @brief The schedule of that name; throws ConfigError naming the field `schedule` and the known names. */
Schedule parse_schedule(const std::string& text);
/** @brief "global" or "per-layer"; throws ConfigError naming the field `update`. */
Update parse_update(const std::string& text);
std::string to_string(Schedule schedule);
std::string to_string(Update update);
std::string to_string(TaskKind kind);

} // namespace ddlsim::dag
