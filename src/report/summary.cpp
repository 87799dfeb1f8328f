// Turns simulation records into the Report message: iteration time, throughput, scaling, breakdown.
#include "report/summary.hpp"

#include "common/error.hpp"
#include "workload/workload.hpp"

#include <algorithm>

namespace ddlsim::report {

PhaseSummary summarize_phase(const dag::IterationDag& dag, const dag::PhaseResult& phase)
{
  const unsigned n = phase.iterations;
  const std::size_t ranks = phase.hosts.size();
  if (n == 0 || ranks == 0)
    throw Error("internal: empty phase");
  std::vector<double> end(n, 0.0);
  for (const auto& r : phase.records)
    if (dag.tasks[r.task].kind == dag::TaskKind::Update)
      end[r.iteration] = std::max(end[r.iteration], r.end_s);

  PhaseSummary s;
  for (unsigned i = 0; i < n; ++i)
    s.iteration_times_s.push_back(end[i] - (i == 0 ? 0.0 : end[i - 1]));
  const unsigned first_measured = n > 1 ? 1 : 0;
  const unsigned measured = n - first_measured;
  s.iteration_time_s = (end[n - 1] - (first_measured == 0 ? 0.0 : end[0])) / measured;

  double io = 0, h2d = 0, fwd = 0, bwd = 0, upd = 0, comm = 0;
  for (const auto& r : phase.records) {
    if (static_cast<unsigned>(r.iteration) < first_measured)
      continue;
    const double d = r.end_s - r.start_s;
    switch (dag.tasks[r.task].kind) {
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
  b.set_exposed_communication_s(s.iteration_time_s -
                                (b.io_s() + b.h2d_s() + b.forward_s() + b.backward_s() + b.update_s()));
  return s;
}

proto::Report build_report(const proto::RunConfig& config, const proto::Workload& workload,
                           const dag::IterationDag& dag, const dag::PhaseResult& multi, const dag::PhaseResult& single)
{
  const PhaseSummary m = summarize_phase(dag, multi);
  const PhaseSummary s = summarize_phase(dag, single);
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
  return r;
}

} // namespace ddlsim::report
