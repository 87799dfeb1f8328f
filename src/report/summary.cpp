// Turns simulation records into the Report message: iteration time, throughput, scaling, breakdown.
#include "report/summary.hpp"

#include "common/error.hpp"
#include "workload/workload.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace ddlsim::report {

namespace {

/** Seconds the iteration's first forward waited for prefetched input: its start minus the end of the compute task
 *  before it (0 when that task ended later or input is on the compute stream), summed over ranks and iterations
 *  from `first`. */
double exposed_input_s(const dag::IterationDag& dag, const dag::PhaseResult& phase, unsigned first)
{
  if (dag.input.empty() || dag.compute.empty())
    return 0.0;
  const std::size_t tasks = dag.tasks.size();
  const std::size_t ranks = phase.hosts.size();
  std::vector<const dag::TaskRecord*> at(ranks * phase.iterations * tasks, nullptr);
  for (const auto& r : phase.records)
    at[(static_cast<std::size_t>(r.rank) * phase.iterations + r.iteration) * tasks + r.task] = &r;
  // The first forward and the compute-stream task just before it (same iteration or an earlier one).
  int forward = -1;
  for (const auto& slot : dag.compute)
    if (dag.tasks[slot.task].kind == dag::TaskKind::Forward) {
      forward = slot.task;
      break;
    }
  if (forward < 0)
    return 0.0;
  dag::Dep before{-1, 0};
  for (int d : dag.tasks[forward].deps)
    if (dag.tasks[d].stream == dag::Stream::Compute)
      before = {d, 0};
  for (const auto& d : dag.tasks[forward].other)
    if (dag.tasks[d.task].stream == dag::Stream::Compute)
      before = d;
  double wait = 0;
  for (std::size_t rank = 0; rank < ranks; ++rank)
    for (unsigned it = first; it < phase.iterations; ++it) {
      const auto* f = at[(rank * phase.iterations + it) * tasks + forward];
      const int prev_it = static_cast<int>(it) + before.offset;
      double prev_end = 0;
      if (before.task >= 0 && prev_it >= 0 && prev_it < static_cast<int>(phase.iterations))
        prev_end = at[(rank * phase.iterations + prev_it) * tasks + before.task]->end_s;
      wait += std::max(0.0, f->start_s - prev_end);
    }
  return wait;
}

} // namespace

PhaseSummary summarize_phase(const dag::IterationDag& dag, const dag::PhaseResult& phase, unsigned warmup)
{
  const unsigned n = phase.iterations;
  const std::size_t ranks = phase.hosts.size();
  if (n == 0 || ranks == 0)
    throw Error("internal: empty phase");
  std::vector<double> end(n, 0.0); // iteration i ends with the last of its tasks that end it, on any rank
  for (const auto& r : phase.records)
    if (dag::ends_iteration(dag.tasks[r.task]))
      end[r.iteration] = std::max(end[r.iteration], r.end_s);

  PhaseSummary s;
  for (unsigned i = 0; i < n; ++i)
    s.iteration_times_s.push_back(end[i] - (i == 0 ? 0.0 : end[i - 1]));
  const unsigned first_measured = std::min(warmup, n - 1);
  const unsigned measured = n - first_measured;
  s.first_measured = first_measured;
  s.iteration_time_s = (end[n - 1] - (first_measured == 0 ? 0.0 : end[first_measured - 1])) / measured;
  s.min_s = *std::min_element(s.iteration_times_s.begin() + first_measured, s.iteration_times_s.end());
  s.max_s = *std::max_element(s.iteration_times_s.begin() + first_measured, s.iteration_times_s.end());
  double variance = 0;
  for (unsigned i = first_measured; i < n; ++i)
    variance += (s.iteration_times_s[i] - s.iteration_time_s) * (s.iteration_times_s[i] - s.iteration_time_s);
  s.std_s = std::sqrt(variance / measured);

  double io = 0, h2d = 0, fwd = 0, bwd = 0, upd = 0, comm = 0, input_on_compute = 0;
  for (const auto& r : phase.records) {
    if (static_cast<unsigned>(r.iteration) < first_measured)
      continue;
    const double d = r.end_s - r.start_s;
    const dag::Task& task = dag.tasks[r.task];
    if ((task.kind == dag::TaskKind::Io || task.kind == dag::TaskKind::H2d) && task.stream == dag::Stream::Compute)
      input_on_compute += d;
    switch (task.kind) {
    case dag::TaskKind::Io:
      io += d;
      break;
    case dag::TaskKind::H2d:
      h2d += d;
      break;
    case dag::TaskKind::Forward:
      fwd += d;
      break;
    case dag::TaskKind::Backward:
      bwd += d;
      break;
    case dag::TaskKind::Update:
      upd += d;
      break;
    case dag::TaskKind::Aggregation:
      comm += d;
      break;
    case dag::TaskKind::Timer: // a wait, not work
      break;
    }
  }
  const double per = 1.0 / (double(measured) * double(ranks));
  auto& b = s.breakdown;
  b.set_io_s(io * per);
  b.set_h2d_s(h2d * per);
  b.set_forward_s(fwd * per);
  b.set_backward_s(bwd * per);
  b.set_update_s(upd * per);
  b.set_communication_s(comm * per);
  b.set_exposed_input_s(exposed_input_s(dag, phase, first_measured) * per);
  const double exposed = s.iteration_time_s -
                         (input_on_compute * per + b.forward_s() + b.backward_s() + b.update_s() + b.exposed_input_s());
  // Rounding of the sums may leave -1e-17 s where everything is hidden: that is 0, not a negative time.
  b.set_exposed_communication_s(exposed < 0 && exposed > -1e-12 * s.iteration_time_s ? 0.0 : exposed);
  return s;
}

namespace {

/** The records of rank 0's last iteration. */
std::vector<const dag::TaskRecord*> last_iteration_of_rank0(const dag::PhaseResult& phase)
{
  std::vector<const dag::TaskRecord*> out;
  for (const auto& rec : phase.records)
    if (rec.rank == 0 && rec.iteration == static_cast<int>(phase.iterations) - 1)
      out.push_back(&rec);
  return out;
}

/** Per layer: the times rank 0's GPU took in the last iteration. */
void add_layers(proto::Report& r, const proto::Workload& w, const dag::IterationDag& dag, const dag::PhaseResult& phase)
{
  std::vector<double> forward(w.layers_size(), 0.0), backward(w.layers_size(), 0.0);
  for (const auto* rec : last_iteration_of_rank0(phase)) {
    const dag::Task& t = dag.tasks[rec->task];
    if (t.kind == dag::TaskKind::Forward)
      forward[t.layer] = rec->end_s - rec->start_s;
    if (t.kind == dag::TaskKind::Backward)
      backward[t.layer] = rec->end_s - rec->start_s;
  }
  for (int l = 0; l < w.layers_size(); ++l) {
    auto* layer = r.add_layers();
    layer->set_name(w.layers(l).name());
    layer->set_forward_s(forward[l]);
    layer->set_backward_s(backward[l]);
    layer->set_gradient_bytes(static_cast<std::uint64_t>(w.layers(l).gradient_bytes()));
  }
}

/** Rank 0's aggregations of the last iteration, from that iteration's start; exposed: after its last backward. */
void add_aggregations(proto::Report& r, const proto::Workload& w, const dag::IterationDag& dag,
                      const dag::PhaseResult& phase, double iteration_start)
{
  const auto records = last_iteration_of_rank0(phase);
  double backward_end = 0;
  for (const auto* rec : records)
    if (dag.tasks[rec->task].kind == dag::TaskKind::Backward)
      backward_end = std::max(backward_end, rec->end_s);
  std::vector<const dag::TaskRecord*> aggregations;
  for (const auto* rec : records)
    if (dag.tasks[rec->task].kind == dag::TaskKind::Aggregation)
      aggregations.push_back(rec);
  std::sort(aggregations.begin(), aggregations.end(), [](const auto* a, const auto* b) {
    return a->start_s != b->start_s ? a->start_s < b->start_s : a->task < b->task;
  });
  for (const auto* rec : aggregations) {
    const dag::Task& t = dag.tasks[rec->task];
    auto* a = r.add_aggregations();
    for (int l : t.layers)
      a->add_layers(w.layers(l).name());
    a->set_bytes(t.bytes);
    a->set_start_s(rec->start_s - iteration_start);
    a->set_time_s(rec->end_s - rec->start_s);
    a->set_exposed_s(std::max(0.0, rec->end_s - std::max(rec->start_s, backward_end)));
  }
}

/** "node3-nic0" -> "nodeN-nicN": links of one kind share a class. */
std::string link_class(const std::string& name)
{
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1])))
        ++i;
      out += 'N';
    } else {
      out += name[i];
    }
  }
  return out;
}

/** Every link with traffic, busiest first, per iteration. */
void add_links(proto::Report& r, const dag::PhaseResult& phase, double iteration_time)
{
  const double n = phase.iterations;
  for (const auto& l : phase.links) {
    auto* link = r.add_links();
    link->set_name(l.name);
    link->set_link_class(link_class(l.name));
    link->set_bandwidth_bytes_per_s(l.bandwidth_bytes_per_s);
    link->set_bytes_per_iteration(static_cast<std::uint64_t>(std::llround(double(l.bytes) / n)));
    link->set_busy_s_per_iteration(l.busy_s / n);
    link->set_utilisation(iteration_time > 0 ? double(l.bytes) / n / (l.bandwidth_bytes_per_s * iteration_time) : 0);
  }
}

} // namespace

const proto::LinkRecord* most_used_link(const proto::Report& r)
{
  const proto::LinkRecord* top = nullptr;
  for (const auto& l : r.links())
    if (top == nullptr || l.utilisation() > top->utilisation())
      top = &l;
  return top;
}

proto::Report build_report(const proto::RunConfig& config, const proto::Workload& workload,
                           const dag::IterationDag& dag, const dag::PhaseResult& multi,
                           const dag::IterationDag& single_dag, const dag::PhaseResult& single)
{
  const unsigned warmup = config.schedule_config().warmup();
  const PhaseSummary m = summarize_phase(dag, multi, warmup);
  const PhaseSummary s = summarize_phase(single_dag, single, warmup);
  const auto gpus = static_cast<unsigned>(multi.hosts.size());
  const double batch = workload.batch_size_per_gpu();

  proto::Report r;
  r.set_schema_version(1);
  *r.mutable_config() = config;
  r.set_model(workload.model());
  r.set_gpu(multi.gpus.at(0));
  r.set_gpus(gpus);
  r.set_batch_size_per_gpu(workload.batch_size_per_gpu());
  r.set_iteration_time_s(m.iteration_time_s);
  // A workload without computation (a communication benchmark) takes no time on one GPU: then throughput,
  // speedup and efficiency are undefined and reported as 0 (the console says "n/a").
  const bool timed = m.iteration_time_s > 0 && s.iteration_time_s > 0;
  r.set_throughput_samples_per_s(m.iteration_time_s > 0 ? gpus * batch / m.iteration_time_s : 0.0);
  r.set_single_gpu_iteration_time_s(s.iteration_time_s);
  r.set_single_gpu_throughput_samples_per_s(s.iteration_time_s > 0 ? batch / s.iteration_time_s : 0.0);
  r.set_speedup(timed ? r.throughput_samples_per_s() / r.single_gpu_throughput_samples_per_s() : 0.0);
  r.set_scaling_efficiency(timed ? r.speedup() / gpus : 0.0);
  *r.mutable_breakdown() = m.breakdown;
  for (double t : m.iteration_times_s)
    r.add_iteration_times_s(t);
  r.set_gradient_bytes(workload::total_gradient_bytes(workload));
  std::uint64_t sent = 0;
  for (auto b : multi.bytes_sent)
    sent += b;
  r.set_bytes_sent_per_iteration(sent / multi.iterations);
  r.set_aggregations_per_iteration(static_cast<unsigned>(dag.aggregations()));
  r.set_simulated_time_s(multi.duration_s);
  r.set_iteration_time_std_s(m.std_s);
  r.set_iteration_time_min_s(m.min_s);
  r.set_iteration_time_max_s(m.max_s);
  r.set_measured_iterations(multi.iterations - m.first_measured);
  add_layers(r, workload, dag, multi);
  const unsigned n = multi.iterations;
  add_aggregations(r, workload, dag, multi,
                   n >= 2 ? std::accumulate(m.iteration_times_s.begin(), m.iteration_times_s.end() - 1, 0.0) : 0.0);
  add_links(r, multi, m.iteration_time_s);
  r.set_iterations_simulated(multi.iterations_simulated);
  r.set_simulated_activities(multi.activities);
  r.set_computed_flows(multi.computed);
  return r;
}

} // namespace ddlsim::report
