// `ddlsim run --explain`: a narrated account of one iteration, with the simulated gain of what would shorten it.
#include "cli/explain.hpp"

#include "cli/child_process.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"
#include "report/summary.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unistd.h>

namespace ddlsim::cli {
namespace {

std::string pct(double part, double whole)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

/** Rank 0's records by (iteration, task). */
std::map<std::pair<int, int>, const dag::TaskRecord*> rank0(const dag::PhaseResult& phase)
{
  std::map<std::pair<int, int>, const dag::TaskRecord*> at;
  for (const auto& r : phase.records)
    if (r.rank == 0)
      at[{r.iteration, r.task}] = &r;
  return at;
}

/** The tasks on rank 0's critical path of the last iteration, first to last: from the task that ends the iteration,
 *  each step back goes to the dependency that ended last (the one the task waited for). */
std::vector<const dag::TaskRecord*> critical_path(const dag::IterationDag& dag, const dag::PhaseResult& phase)
{
  const auto at = rank0(phase);
  const int last = static_cast<int>(phase.iterations) - 1;
  const dag::TaskRecord* cur = nullptr;
  for (const auto& [key, rec] : at)
    if (key.first == last && dag::ends_iteration(dag.tasks[key.second]) && (!cur || rec->end_s > cur->end_s))
      cur = rec;
  std::vector<const dag::TaskRecord*> path;
  const double start = last == 0 ? 0.0 : [&] {
    double end = 0;
    for (const auto& [key, rec] : at)
      if (key.first == last - 1 && dag::ends_iteration(dag.tasks[key.second]))
        end = std::max(end, rec->end_s);
    return end;
  }();
  while (cur != nullptr && cur->end_s > start) {
    path.push_back(cur);
    const dag::Task& t = dag.tasks[cur->task];
    const dag::TaskRecord* before = nullptr;
    auto consider = [&](int it, int task) {
      const auto found = at.find({it, task});
      if (found != at.end() && (!before || found->second->end_s > before->end_s))
        before = found->second;
    };
    for (int d : t.deps)
      consider(cur->iteration, d);
    for (const auto& d : t.other)
      consider(cur->iteration + d.offset, d.task);
    cur = before;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

/** "forward of 107 layers (conv1 .. fc1000)": a run of tasks of one kind. */
std::string run_label(const dag::IterationDag& dag, const proto::Workload& w,
                      const std::vector<const dag::TaskRecord*>& run)
{
  const dag::Task& first = dag.tasks[run.front()->task];
  const dag::Task& last = dag.tasks[run.back()->task];
  auto layer = [&](const dag::Task& t) { return t.layer >= 0 ? w.layers(t.layer).name() : t.name; };
  switch (first.kind) {
  case dag::TaskKind::Forward:
  case dag::TaskKind::Backward: {
    std::string s = dag::to_string(first.kind) + " of " + std::to_string(run.size()) + " layer" +
                    (run.size() == 1 ? "" : "s") + " (" + layer(first);
    return s + (run.size() > 1 ? " .. " + layer(last) : "") + ")";
  }
  case dag::TaskKind::Aggregation:
    return run.size() == 1 ? "the aggregation " + first.name.substr(4)
                           : std::to_string(run.size()) + " aggregations (" + first.name.substr(4) + " .. " +
                                 last.name.substr(4) + ")";
  case dag::TaskKind::Update:
    return run.size() == 1 ? "the update" : std::to_string(run.size()) + " per-layer updates";
  case dag::TaskKind::Io:
    return "data loading";
  case dag::TaskKind::H2d:
    return "the host-to-device copy";
  case dag::TaskKind::Timer:
    return "the fusion cycle wait";
  }
  return first.name;
}

void print_critical_path(std::ostream& out, const ExplainInput& in)
{
  const auto path = critical_path(*in.dag, *in.multi);
  out << "1. The critical path of iteration " << in.multi->iterations
      << " on rank 0 (what the iteration waited for, in "
      << "order):\n";
  for (std::size_t i = 0; i < path.size();) {
    std::size_t j = i;
    while (j + 1 < path.size() && in.dag->tasks[path[j + 1]->task].kind == in.dag->tasks[path[i]->task].kind)
      ++j;
    const std::vector<const dag::TaskRecord*> run(path.begin() + static_cast<long>(i),
                                                  path.begin() + static_cast<long>(j + 1));
    out << "   - " << run_label(*in.dag, *in.workload, run) << ": "
        << format_seconds(run.back()->end_s - run.front()->start_s) << "\n";
    i = j + 1;
  }
}

/** Closed-form time of `bytes` and its latency part (the time of a 1-byte message); nullopt without closed form. */
std::optional<std::pair<double, double>> closed_parts(const ExplainInput& in, std::uint64_t bytes)
{
  try {
    const double total = collectives::closed_form_s(in.algorithm, bytes, in.closed_form);
    const double latency = collectives::closed_form_s(in.algorithm, 1, in.closed_form);
    return std::make_pair(total, std::min(latency, total));
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

void print_communication(std::ostream& out, const ExplainInput& in)
{
  const proto::Report& r = *in.report;
  const auto& b = r.breakdown();
  out << "\n2. Communication: " << r.aggregations_per_iteration() << " aggregations per iteration, "
      << format_seconds(b.communication_s()) << " in all, "
      << pct(b.communication_s() - b.exposed_communication_s(), b.communication_s()) << " hidden behind computation; "
      << format_seconds(b.exposed_communication_s()) << " of the " << format_seconds(r.iteration_time_s())
      << " iteration is communication nothing hides.\n";
  double latency = 0, total = 0;
  bool closed = true;
  for (const auto& slot : in.dag->communication) {
    const auto parts = closed_parts(in, in.dag->tasks[slot.task].bytes);
    if (!parts) {
      closed = false;
      break;
    }
    total += parts->first;
    latency += parts->second;
  }
  if (closed && total > 0)
    out << "   By the closed form, " << pct(latency, total) << " of it is latency (time a 1-byte message would take) "
        << "and " << pct(total - latency, total) << " bandwidth: merging aggregations removes latency terms, a "
        << "faster link shrinks the bandwidth terms.\n";
  std::vector<const proto::AggregationRecord*> longest;
  for (const auto& a : r.aggregations())
    longest.push_back(&a);
  std::sort(longest.begin(), longest.end(), [](const auto* x, const auto* y) { return x->time_s() > y->time_s(); });
  for (std::size_t k = 0; k < std::min<std::size_t>(3, longest.size()); ++k) {
    const auto& a = *longest[k];
    out << "   - " << a.layers(0) << (a.layers_size() > 1 ? " .. " + a.layers(a.layers_size() - 1) : "") << ", "
        << format_bytes(double(a.bytes())) << ": " << format_seconds(a.time_s()) << ", "
        << format_seconds(a.exposed_s()) << " of it after backward ended";
    if (const auto parts = closed_parts(in, a.bytes()))
      out << " (closed form " << format_seconds(parts->first) << ": " << pct(parts->second, parts->first)
          << " latency)";
    out << "\n";
  }
  if (const proto::LinkRecord* top = report::most_used_link(r)) {
    out << "   The most used link is " << top->name() << " (" << top->link_class() << ", "
        << format_double(top->bandwidth_bytes_per_s() / 1e9) << " GB/s): it carries "
        << format_bytes(double(top->bytes_per_iteration())) << " per iteration, busy "
        << pct(top->busy_s_per_iteration(), r.iteration_time_s()) << " of the iteration at "
        << pct(top->utilisation(), 1) << " mean utilisation.\n";
  }
}

/** The run's options with every option in `drop` (and its value) removed. */
std::vector<std::string> without(const std::vector<std::string>& args, const std::set<std::string>& drop,
                                 const std::set<std::string>& switches)
{
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string name = a.substr(0, a.find('='));
    if (switches.count(name))
      continue;
    if (drop.count(name)) {
      if (a.find('=') == std::string::npos)
        ++i; // its value
      continue;
    }
    out.push_back(a);
  }
  return out;
}

/** Runs ddlsim with `args` and returns its iteration time, or an error text. */
std::pair<double, std::string> simulate(const std::vector<std::string>& args)
{
  char dir_template[] = "/tmp/ddlsim-explain-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr)
    return {0, "cannot create a temporary directory"};
  const std::string report = std::string(dir) + "/r.json", err = std::string(dir) + "/err";
  std::vector<std::string> argv{self_exe(), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"-q", "--report", report});
  const int rc = run_child(argv, err);
  std::pair<double, std::string> result{0, ""};
  if (rc == 0) {
    proto::Report r;
    if (google::protobuf::util::JsonStringToMessage(read_file(report), &r).ok())
      result.first = r.iteration_time_s();
    else
      result.second = "unreadable report";
  } else {
    std::string text = read_file(err);
    text = text.substr(0, text.find('\n'));
    result.second = text.rfind("ddlsim: error: ", 0) == 0 ? text.substr(15) : text;
  }
  std::remove(report.c_str());
  std::remove(err.c_str());
  ::rmdir(dir);
  return result;
}

void print_what_ifs(std::ostream& out, const ExplainInput& in)
{
  const double now = in.report->iteration_time_s();
  const std::set<std::string> switches{"--explain", "--explain-merge", "--analytical",
                                       "-q",        "--quiet",         "--dump-config"};
  const std::set<std::string> outputs{"--report", "--trace", "--trace-ranks", "--trace-iterations"};
  struct WhatIf {
    std::string label;
    std::vector<std::string> args;
  };
  std::vector<WhatIf> changes;
  const std::string schedule = in.report->config().schedule();
  if (schedule != "mgwfbp") {
    auto drop = outputs;
    drop.insert({"--schedule", "--fusion-bytes", "--fusion-cycle", "--bucket-bytes", "--first-bucket-bytes",
                 "--partition-bytes", "--credit-bytes"});
    auto args = without(in.args, drop, switches);
    args.insert(args.end(), {"--schedule", "mgwfbp"});
    changes.push_back({"merging consecutive layers' gradients where it pays (--schedule mgwfbp)", args});
  }
  if (in.closed_form.nodes > 1 && !in.algorithm.uses(collectives::AlgorithmId::Hier)) {
    auto drop = outputs;
    drop.insert({"--algorithm", "--chunk-bytes", "--chunks", "--fidelity", "--servers", "--ps-hosts", "--ps-sharding",
                 "--inter-algorithm", "--ps-update", "--optimizer", "--stack"});
    auto args = without(in.args, drop, switches);
    args.insert(args.end(), {"--algorithm", "hier"});
    changes.push_back({"aggregating inside each node first, then among nodes (--algorithm hier)", args});
  }
  if (in.cluster && in.closed_form.nodes > 1) {
    const double bw = platform::effective_nic_link(*in.cluster).bandwidth_bytes_per_s;
    std::string cluster = platform::to_cluster_string(*in.cluster);
    // to_cluster_string writes any inter-bandwidth given; replace it by twice the NIC's.
    std::vector<std::string> keys;
    for (const auto& kv : split(cluster, ','))
      if (kv.rfind("inter-bandwidth=", 0) != 0)
        keys.push_back(kv);
    keys.push_back("inter-bandwidth=" + format_double(2 * bw) + "Bps");
    auto drop = outputs;
    drop.insert("--cluster");
    auto args = without(in.args, drop, switches);
    args.insert(args.end(), {"--cluster", join(keys, ",")});
    changes.push_back({"a network twice as fast (inter-bandwidth " + format_bytes(2 * bw) + "/s)", args});
  }
  if (changes.empty())
    return;
  out << "\n3. What would shorten the iteration most (each change simulated on its own):\n";
  std::vector<std::pair<double, std::string>> results;
  for (const auto& c : changes) {
    const auto [time, error] = simulate(c.args);
    if (!error.empty())
      out << "   - " << c.label << ": not simulated (" << error << ")\n";
    else
      results.emplace_back(time, c.label);
  }
  std::sort(results.begin(), results.end());
  for (const auto& [time, label] : results)
    out << "   - " << label << ": " << format_seconds(time) << " per iteration, "
        << (time <= now ? format_seconds(now - time) + " (" + pct(now - time, now) + ") shorter"
                        : format_seconds(time - now) + " longer")
        << "\n";
}

void print_assumptions(std::ostream& out, const ExplainInput& in)
{
  std::vector<std::string> notes;
  const std::string ref = in.workload->reference_gpu();
  const std::string gpu = in.report->gpu();
  if (gpu != ref) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the workload's times were taken on a %s and are replayed on a %s, scaled by the ratio of their "
                  "catalogue FP32 peaks (x%.3f): a model, not a measurement on the %s",
                  ref.c_str(), gpu.c_str(), in.compute_scale, gpu.c_str());
    notes.push_back(buf);
  }
  if (in.closed_form.nodes == 1 && in.closed_form.ranks > 1)
    notes.push_back("every rank is in one node: no traffic leaves it, so the network plays no part");
  if (in.report->config().aggregation().stack() == "ideal" || in.report->config().aggregation().stack().empty())
    notes.push_back("the ideal stack: every message pays only the links' latency and bandwidth, no software cost "
                    "(--stack adds what NCCL, MPI, gRPC or ps-lite add)");
  if (in.report->breakdown().io_s() == 0)
    notes.push_back("data loading takes no time (the workload's io_s is 0: an input pipeline that keeps up)");
  if (notes.empty())
    return;
  out << "\n4. What this run assumed that you may not know:\n";
  for (const auto& n : notes)
    out << "   - " << n << "\n";
}

} // namespace

void explain(std::ostream& out, const ExplainInput& in)
{
  out << "\nExplanation\n\n";
  print_critical_path(out, in);
  print_communication(out, in);
  print_what_ifs(out, in);
  print_assumptions(out, in);
}

} // namespace ddlsim::cli
