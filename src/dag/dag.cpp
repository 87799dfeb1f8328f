// The S-SGD task graph of one iteration on one rank, for a chosen schedule.
#include "dag/dag.hpp"

#include "common/enum_names.hpp"
#include "common/error.hpp"

namespace ddlsim::dag {

std::vector<int> IterationDag::stream_tasks(Stream stream) const
{
  std::vector<int> ids;
  for (const auto& t : tasks)
    if (t.stream == stream)
      ids.push_back(t.id);
  return ids;
}

int IterationDag::aggregations() const
{
  int n = 0;
  for (const auto& t : tasks)
    n += t.kind == TaskKind::Aggregation ? 1 : 0;
  return n;
}

namespace {

class DagBuilder {
public:
  int add(TaskKind kind, Stream stream, int layer, double duration, std::uint64_t bytes, std::vector<int> deps,
          std::string name)
  {
    Task t;
    t.id = static_cast<int>(dag_.tasks.size());
    t.kind = kind;
    t.stream = stream;
    t.layer = layer;
    t.duration_s = duration;
    t.bytes = bytes;
    t.deps = std::move(deps);
    t.name = std::move(name);
    dag_.tasks.push_back(std::move(t));
    return dag_.tasks.back().id;
  }
  /** A compute task that follows the previous one on the compute stream. */
  int compute(TaskKind kind, int layer, double duration, std::string name, std::vector<int> extra = {})
  {
    if (last_compute_ >= 0)
      extra.insert(extra.begin(), last_compute_);
    last_compute_ = add(kind, Stream::Compute, layer, duration, 0, std::move(extra), std::move(name));
    return last_compute_;
  }
  /** An aggregation that follows the previous one on the communication stream. */
  int aggregation(int layer, std::uint64_t bytes, int ready, std::string name)
  {
    std::vector<int> deps{ready};
    if (last_aggregation_ >= 0)
      deps.push_back(last_aggregation_);
    last_aggregation_ = add(TaskKind::Aggregation, Stream::Communication, layer, 0, bytes, deps, std::move(name));
    return last_aggregation_;
  }
  int last_aggregation() const { return last_aggregation_; }
  IterationDag take() { return std::move(dag_); }

private:
  IterationDag dag_;
  int last_compute_ = -1;
  int last_aggregation_ = -1;
};

const ScheduleEntry& schedule_entry(Schedule schedule)
{
  for (const auto& e : schedule_table())
    if (e.id == schedule)
      return e;
  throw Error("internal: schedule without a table row");
}

} // namespace

IterationDag build_iteration_dag(const proto::Workload& w, Schedule schedule)
{
  DagBuilder b;
  const int layers = w.layers_size();
  b.compute(TaskKind::Io, -1, w.io_s(), "io");
  b.compute(TaskKind::H2d, -1, w.h2d_s(), "h2d");
  for (int l = 0; l < layers; ++l)
    b.compute(TaskKind::Forward, l, w.layers(l).forward_s(), "fwd:" + w.layers(l).name());
  std::vector<int> backward(layers, -1);
  for (int l = layers - 1; l >= 0; --l)
    backward[l] = b.compute(TaskKind::Backward, l, w.layers(l).backward_s(), "bwd:" + w.layers(l).name());
  const int last_backward = backward[0];
  for (int l = layers - 1; l >= 0; --l) {
    const auto bytes = static_cast<std::uint64_t>(w.layers(l).gradient_bytes());
    if (bytes == 0)
      continue;
    const int ready = schedule_entry(schedule).overlaps_backward ? backward[l] : last_backward;
    b.aggregation(l, bytes, ready, "agg:" + w.layers(l).name());
  }
  std::vector<int> extra;
  if (b.last_aggregation() >= 0)
    extra.push_back(b.last_aggregation());
  b.compute(TaskKind::Update, -1, w.update_s(), "update", extra);
  return b.take();
}

const std::vector<ScheduleEntry>& schedule_table()
{
  static const std::vector<ScheduleEntry> table = {
      {Schedule::Sequential, "sequential", "backward, then every aggregation", false},
      {Schedule::Wfbp, "wfbp", "aggregate each layer as soon as its gradient is ready", true},
  };
  return table;
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

const NameTable<TaskKind> kTaskKindNames = {{TaskKind::Io, "io"},
                                            {TaskKind::H2d, "h2d"},
                                            {TaskKind::Forward, "forward"},
                                            {TaskKind::Backward, "backward"},
                                            {TaskKind::Aggregation, "aggregation"},
                                            {TaskKind::Update, "update"}};

} // namespace

Schedule parse_schedule(const std::string& text)
{
  return parse_name(schedule_names(), text, field("schedule"));
}

std::string to_string(Schedule schedule)
{
  return name_of(schedule_names(), schedule);
}

std::string to_string(TaskKind kind)
{
  return name_of(kTaskKindNames, kind);
}

} // namespace ddlsim::dag
