// The S-SGD task graph on one rank, for a chosen schedule.
#include "dag/dag.hpp"

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "dag/plans.hpp"

#include <algorithm>

namespace ddlsim::dag {

std::vector<int> IterationDag::stream_tasks(Stream stream) const
{
  std::vector<int> ids;
  for (const auto& slot : order(stream))
    ids.push_back(slot.task);
  return ids;
}

const std::vector<Slot>& IterationDag::order(Stream stream) const
{
  return const_cast<IterationDag*>(this)->order(stream);
}

std::vector<Slot>& IterationDag::order(Stream stream)
{
  switch (stream) {
  case Stream::Compute:
    return compute;
  case Stream::Input:
    return input;
  case Stream::Timer:
    return timer;
  case Stream::Communication:
    break;
  }
  return communication;
}

int IterationDag::aggregations() const
{
  int n = 0;
  for (const auto& t : tasks)
    n += t.kind == TaskKind::Aggregation ? 1 : 0;
  return n;
}

int IterationDag::max_shift() const
{
  int shift = 0;
  for (const auto* o : {&compute, &input, &timer, &communication})
    for (const auto& slot : *o)
      shift = std::max(shift, slot.shift);
  return shift;
}

int iteration_barrier(const IterationDag& dag)
{
  if (dag.tasks.empty() || dag.max_shift() != 0)
    return -1;
  std::vector<char> has_dependent(dag.tasks.size(), 0);
  for (const auto& t : dag.tasks) {
    for (int d : t.deps)
      has_dependent[d] = 1;
    for (const auto& o : t.other)
      if (o.offset >= 0)
        return -1;
  }
  int sink = -1;
  for (const auto& t : dag.tasks)
    if (!has_dependent[t.id]) {
      if (sink >= 0)
        return -1; // two sinks: one may still run when the other has ended
      sink = t.id;
    }
  for (const auto& t : dag.tasks)
    if (t.deps.empty() &&
        std::none_of(t.other.begin(), t.other.end(), [&](const Dep& d) { return d.task == sink && d.offset == -1; }))
      return -1; // a root that may start before the previous iteration has ended on its rank
  return sink;
}

namespace {

/** Adds tasks, places them on their streams, and writes the stream order as edges at the end. */
class DagBuilder {
public:
  int add(TaskKind kind, Stream stream, int layer, double duration, std::string name, std::vector<int> deps = {})
  {
    Task t;
    t.id = static_cast<int>(dag_.tasks.size());
    t.kind = kind;
    t.stream = stream;
    t.layer = layer;
    t.duration_s = duration;
    t.deps = std::move(deps);
    t.name = std::move(name);
    dag_.tasks.push_back(std::move(t));
    return dag_.tasks.back().id;
  }
  Task& task(int id) { return dag_.tasks[id]; }
  /** Appends `id` to the order of its stream, `shift` slots later than its own iteration. */
  void place(int id, int shift = 0)
  {
    dag_.tasks[id].shift = shift;
    dag_.order(dag_.tasks[id].stream).push_back({id, shift});
  }
  IterationDag& dag() { return dag_; }

  /** Stream order as edges: each task waits for the previous one of its stream; InOrder aggregation k waits for
   *  aggregation k - comm_streams. Compute tasks list it first, aggregations after their own dependencies. */
  IterationDag take()
  {
    for (auto* order : {&dag_.compute, &dag_.input, &dag_.timer})
      chain(*order, 1, true);
    if (dag_.comm_policy == CommPolicy::InOrder)
      chain(dag_.communication, dag_.comm_streams, false);
    return std::move(dag_);
  }

private:
  /** Entry k of `order` (counted over slots) waits for entry k - `lag`. */
  void chain(const std::vector<Slot>& order, int lag, bool first)
  {
    const int n = static_cast<int>(order.size());
    for (int j = 0; j < n; ++j) {
      const int back = j - lag; // may be negative: an entry of an earlier slot
      const int slots_back = back >= 0 ? 0 : (-back + n - 1) / n;
      const Slot& prev = order[back + slots_back * n];
      // Iteration of prev minus iteration of this task (slot s - shift each).
      const int offset = order[j].shift - prev.shift - slots_back;
      Task& t = dag_.tasks[order[j].task];
      if (offset != 0)
        t.other.push_back({prev.task, offset});
      else if (first)
        t.deps.insert(t.deps.begin(), prev.task);
      else
        t.deps.push_back(prev.task);
    }
  }

  IterationDag dag_;
};

LayerTimes layer_times(const proto::Workload& w, double scale)
{
  LayerTimes t;
  for (const auto& l : w.layers()) {
    t.backward_s.push_back(l.backward_s() * scale);
    t.bytes.push_back(static_cast<std::uint64_t>(l.gradient_bytes()));
  }
  return t;
}

std::string aggregation_name(const proto::Workload& w, const PlannedAggregation& a, int part)
{
  std::string name = "agg:" + w.layers(a.layers.front()).name();
  if (a.layers.size() > 1)
    name += ".." + w.layers(a.layers.back()).name();
  if (part >= 0)
    name += "#" + std::to_string(part);
  return name;
}

void check_options(const ScheduleOptions& o)
{
  if (o.io_prefetch < 0)
    throw ConfigError(field("io_prefetch") + " must be >= 0 (got " + std::to_string(o.io_prefetch) + ")");
  if (o.comm_streams < 1)
    throw ConfigError(field("comm_streams") + " must be >= 1 (got " + std::to_string(o.comm_streams) + ")");
  if (o.fusion_bytes == 0 || o.bucket_bytes == 0 || o.first_bucket_bytes == 0 || o.partition_bytes == 0 ||
      o.credit_bytes == 0)
    throw ConfigError("schedule sizes must be > 0 bytes");
  if (!(o.fusion_cycle_s >= 0) || !(o.compute_scale > 0))
    throw ConfigError(field("fusion_cycle_s") + " must be a time >= 0");
}

} // namespace

IterationDag build_dag(const proto::Workload& w, const ScheduleOptions& o)
{
  check_options(o);
  const ScheduleEntry& schedule = schedule_entry(o.schedule);
  const int layers = w.layers_size();
  DagBuilder b;
  b.dag().comm_policy = schedule.policy;
  b.dag().comm_streams = schedule.policy == CommPolicy::InOrder ? o.comm_streams : 1;
  b.dag().credit_bytes = o.credit_bytes;

  // Input: on the compute stream, or on its own stream with a queue of io_prefetch batches.
  const Stream input = o.io_prefetch > 0 ? Stream::Input : Stream::Compute;
  const int io = b.add(TaskKind::Io, input, -1, w.io_s(), "io");
  const int h2d = b.add(TaskKind::H2d, input, -1, w.h2d_s(), "h2d");
  std::vector<int> forward(layers), backward(layers);
  for (int l = 0; l < layers; ++l)
    forward[l] = b.add(TaskKind::Forward, Stream::Compute, l, w.layers(l).forward_s(), "fwd:" + w.layers(l).name());
  if (o.io_prefetch > 0) {
    b.task(forward[0]).deps.push_back(h2d);
    b.task(io).other.push_back({forward[0], -o.io_prefetch}); // a place in the queue frees when it is consumed
  }
  for (int l = layers - 1; l >= 0; --l)
    backward[l] = b.add(TaskKind::Backward, Stream::Compute, l, w.layers(l).backward_s(), "bwd:" + w.layers(l).name());

  // Aggregations, as the schedule plans them; a fusion cycle is a timer task.
  const auto plan = plan_aggregations(layer_times(w, o.compute_scale), o);
  std::vector<std::vector<int>> aggregations_of(layers);
  std::vector<int> aggregations;
  std::vector<int> parts(layers, 0), part_count(layers, 0); // partitions of one layer's gradient get "#k"
  for (const auto& a : plan)
    if (a.layers.size() == 1)
      ++part_count[a.layers.front()];
  for (const auto& a : plan) {
    std::vector<int> deps{backward[a.ready_layer]};
    if (a.timer_s > 0 || a.timer_layer >= 0) {
      const int timer = b.add(TaskKind::Timer, Stream::Timer, -1, a.timer_s, "cycle:" + w.layers(a.timer_layer).name(),
                              {backward[a.timer_layer]});
      b.place(timer);
      deps.push_back(timer);
    }
    const int single = a.layers.size() == 1 ? a.layers.front() : -1;
    const int part = single >= 0 && part_count[single] > 1 ? parts[single]++ : -1;
    const int id = b.add(TaskKind::Aggregation, Stream::Communication, single, 0, aggregation_name(w, a, part), deps);
    b.task(id).bytes = a.bytes;
    b.task(id).layers = a.layers;
    b.task(id).priority = a.priority;
    for (int l : a.layers)
      aggregations_of[l].push_back(id);
    aggregations.push_back(id);
  }

  // Stream orders and updates.
  b.place(io);
  b.place(h2d);
  double total_bytes = 0;
  for (const auto& l : w.layers())
    total_bytes += double(l.gradient_bytes());
  std::vector<int> updates(layers, -1);
  const double update_s = o.update_on_server ? 0.0 : w.update_s(); // the servers update, the workers pull
  if (o.update == Update::PerLayer)
    for (int l = 0; l < layers; ++l)
      if (!aggregations_of[l].empty()) // the optimizer's work is proportional to the layer's parameters
        updates[l] =
            b.add(TaskKind::Update, Stream::Compute, l, update_s * double(w.layers(l).gradient_bytes()) / total_bytes,
                  "update:" + w.layers(l).name(), aggregations_of[l]);
  for (int l = 0; l < layers; ++l) {
    if (updates[l] >= 0)
      b.place(updates[l], 1); // iteration i's update runs just before iteration i + 1's forward of its layer
    b.place(forward[l]);
  }
  for (int l = layers - 1; l >= 0; --l)
    b.place(backward[l]);
  if (o.update == Update::Global) {
    std::vector<int> last; // the update waits for every aggregation still running when backward ends
    const std::size_t keep =
        schedule.policy == CommPolicy::InOrder ? std::size_t(b.dag().comm_streams) : aggregations.size();
    for (std::size_t k = aggregations.size() > keep ? aggregations.size() - keep : 0; k < aggregations.size(); ++k)
      last.push_back(aggregations[k]);
    b.place(b.add(TaskKind::Update, Stream::Compute, -1, update_s, "update", last));
  }
  for (int id : aggregations)
    b.place(id);
  return b.take();
}

IterationDag build_iteration_dag(const proto::Workload& w, Schedule schedule)
{
  ScheduleOptions o;
  o.schedule = schedule;
  return build_dag(w, o);
}

namespace {

const NameTable<Schedule>& schedule_names()
{
  static const NameTable<Schedule> names = [] {
    NameTable<Schedule> n;
    for (const auto& e : schedule_table())
      n.emplace_back(e.id, e.name);
    return n;
  }();
  return names;
}

const NameTable<Update> kUpdateNames = {{Update::Global, "global"}, {Update::PerLayer, "per-layer"}};

const NameTable<TaskKind> kTaskKindNames = {{TaskKind::Io, "io"},
                                            {TaskKind::H2d, "h2d"},
                                            {TaskKind::Forward, "forward"},
                                            {TaskKind::Backward, "backward"},
                                            {TaskKind::Aggregation, "aggregation"},
                                            {TaskKind::Update, "update"},
                                            {TaskKind::Timer, "timer"}};

} // namespace

Schedule parse_schedule(const std::string& text)
{
  return parse_name(schedule_names(), text, field("schedule"));
}

Update parse_update(const std::string& text)
{
  return parse_name(kUpdateNames, text, field("update"));
}

std::string to_string(Schedule schedule)
{
  return name_of(schedule_names(), schedule);
}

std::string to_string(Update update)
{
  return name_of(kUpdateNames, update);
}

std::string to_string(TaskKind kind)
{
  return name_of(kTaskKindNames, kind);
}

} // namespace ddlsim::dag
