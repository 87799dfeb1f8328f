// `ddlsim run`: simulate S-SGD iterations of a workload on a platform and report.
#include "analytical/critical_path.hpp"
#include "cli/aggregation_options.hpp"
#include "cli/cli.hpp"
#include "cli/common_options.hpp"
#include "cli/explain.hpp"
#include "cli/framework_presets.hpp"
#include "cli/options.hpp"
#include "cli/schedule_options.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "engine/run_size.hpp"
#include "engine/simulation.hpp"
#include "engine/version.hpp"
#include "platform/cluster_spec.hpp"
#include "report/summary.hpp"
#include "report/trace.hpp"
#include "report/writers.hpp"
#include "workload/workload.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kRunUsage =
    R"(Usage: ddlsim run --platform FILE.xml | --cluster KEY=VALUE,... --workload FILE.textproto [options]

Simulates synchronous data-parallel SGD: every GPU rank replays the workload's layer times (scaled by
its speed), aggregates each layer's gradient with the chosen allreduce over the platform's links, and
updates. Prints iteration time, throughput, speedup and scaling efficiency against one GPU of the same
kind (simulated too), and where the time goes. Ranks map to GPU hosts in natural name order unless
--hosts says otherwise.)";

po::options_description run_options(RunOptions& o)
{
  po::options_description input("Input", kHelpColumns, kHelpDescriptionColumns);
  auto add_input = input.add_options();
  add_input("platform", po::value(&o.platform)->value_name("FILE"),
            "SimGrid platform XML; GPU hosts carry <prop id=\"gpu\" value=\"MODEL\"/>");
  add_input(
      "cluster", po::value(&o.cluster)->value_name("KEY=VALUE,..."),
      "instead of --platform: build a generated cluster in memory, keys as the options of 'ddlsim platform': nodes, "
      "gpus-per-node, gpu, intra, inter, and optionally nics-per-node, topology, nodes-per-leaf, oversubscription "
      "(comma separated, e.g. \"nodes=4,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100\")");
  add_input("workload", po::value(&o.workload)->required()->value_name("FILE"),
            "workload, protobuf text format (.textproto) or JSON (.json)");
  add_rank_options(input, o.ranks, o.hosts);
  po::options_description model("Model", kHelpColumns, kHelpDescriptionColumns);
  auto add_model = model.add_options();
  add_model("iterations", po::value(&o.iterations)->default_value(o.iterations)->value_name("N"),
            "iterations simulated back to back; the report averages those after the warm-up");
  add_model("every-iteration", po::bool_switch(&o.every_iteration),
            "simulate every iteration even where they provably repeat the first (by default such runs simulate one "
            "and copy it; the report's iterations_simulated says which)");
  add_model("per-rank-actors", po::bool_switch(&o.per_rank_actors),
            "give every rank its own communication actor even where one actor per communication stream runs the "
            "aggregations for all ranks (flow forms whose ranks' tasks run ahead); the same times, slower: a check of "
            "that shortcut");
  add_model("explain", po::bool_switch(&o.explain),
            "also explain the iteration: its critical path, where communication went, what would shorten it most "
            "(each change simulated in a run of its own) and what the run assumed");
  add_model("framework", po::value(&o.framework)->value_name("NAME"),
            ("a framework's choices (docs/frameworks.md), applied before the other options, so that any one of them "
             "overrides it: " +
             framework_names())
                .c_str());
  add_model("analytical", po::bool_switch(&o.analytical),
            "also print the closed-form critical path of the same DAG (alpha-beta costs, no contention)");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("report", po::value(&o.report)->value_name("FILE.json"),
             "also write the report, with the resolved configuration, as JSON");
  add_output("trace", po::value(&o.trace)->value_name("FILE.json"),
             "write a timeline of every task on every GPU (Chrome trace format: open in https://ui.perfetto.dev or "
             "chrome://tracing)");
  add_output("trace-ranks", po::value(&o.trace_ranks)->value_name("LIST"),
             "--trace keeps these ranks only (e.g. 0,8-15; default all)");
  add_output("trace-iterations", po::value(&o.trace_iterations)->value_name("LIST"),
             "--trace keeps these iterations only (from 1, e.g. 2-3; default all)");
  add_output("trace-no-flows", po::bool_switch(&o.trace_no_flows),
             "--trace without its flow arrows, one per message (a ring on 64 GPUs sends 2 x 63 per GPU per allreduce)");
  add_output("dump-config", po::bool_switch(&o.dump_config), "print the fully resolved configuration as JSON and stop");
  add_output("quiet,q", po::bool_switch(&o.quiet), "no progress lines on stderr");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(input).add(model).add(schedule_options(o.schedule)).add(aggregation_options(o.aggregation)).add(output);
  all.add(simgrid_options(o.simgrid_cfg));
  return all;
}

/** A run resolved from the options: what to simulate, with what schedule. */
struct ResolvedRun {
  engine::SimulationInput input;
  Aggregation aggregation;
  ScheduleChoice schedule;
  proto::Workload workload;
};

/** Checks every option before any file is read, then loads the workload. */
ResolvedRun resolve_run(RunOptions& o)
{
  if (o.platform.empty() == o.cluster.empty())
    throw ConfigError("run: give exactly one of --platform and --cluster");
  ResolvedRun r;
  engine::SimulationInput& in = r.input;
  if (!o.cluster.empty()) {
    in.cluster = platform::parse_cluster_string(o.cluster);
    o.platform = "cluster:" + platform::to_cluster_string(*in.cluster);
  }
  r.aggregation = resolve(o.aggregation); // rejects bad aggregation options before any file is read
  if (o.iterations < 1)
    throw ConfigError("--iterations must be >= 1 (got " + std::to_string(o.iterations) + ")");
  r.schedule = resolve(o.schedule, r.aggregation.algorithm, r.aggregation.options, o.iterations);
  in.ranks = checked_ranks(o.ranks);
  if ((!o.trace_ranks.empty() || !o.trace_iterations.empty() || o.trace_no_flows) && o.trace.empty())
    throw ConfigError("--trace-ranks, --trace-iterations and --trace-no-flows choose what --trace keeps: give --trace "
                      "too");
  check_outputs({{"--report", o.report}, {"--trace", o.trace}},
                {{"--platform", o.platform}, {"--workload", o.workload}});
  in.platform_file = o.platform;
  r.workload = workload::load_workload(o.workload);
  apply_model_fractions(r.schedule, workload::total_gradient_bytes(r.workload));
  in.reference_gpu = r.workload.reference_gpu();
  in.algorithm = r.aggregation.algorithm;
  in.collective = r.aggregation.options;
  in.collective.gpu_interference = r.schedule.gpu_interference;
  in.collective.gpu_interference_auto = r.schedule.gpu_interference_auto;
  in.collective.pcie_contention = r.schedule.pcie_contention;
  in.collective.cpu_contention = r.schedule.cpu_contention;
  if (in.collective.pcie_contention || in.collective.cpu_contention) // no flow or step form with them (checked again)
    collectives::check_options(in.algorithm, in.collective, {});
  if (o.analytical && (r.schedule.gpu_interference > 0 || r.schedule.gpu_interference_auto))
    throw ConfigError("--analytical has no closed form with --gpu-interference (compute slowed by communication)");
  if (o.analytical && (r.schedule.pcie_contention || r.schedule.cpu_contention))
    throw ConfigError(std::string("--analytical has no closed form with ") +
                      (r.schedule.pcie_contention ? "--pcie-contention" : "--cpu-contention") +
                      " (copies and overheads slowed by sharing)");
  in.iterations = static_cast<unsigned>(o.iterations);
  in.hosts = parse_host_list(o.hosts, "--hosts");
  in.simgrid_cfg = o.simgrid_cfg;
  in.dry_run = o.dump_config;
  in.replicate_iterations = !o.every_iteration;
  in.drive_streams = !o.per_rank_actors;
  in.link_timelines = !o.trace.empty(); // only the trace draws the transfers in flight
  return r;
}

/** True where SimGrid 3.32's lazy update (the default) is known to move results: several parameter servers each taking
 *  a part of every tensor, whose transfers leave one host at once (docs/network-model.md: measured up to 7.6 % per
 *  iteration), unless the run asks for full updates. */
bool lazy_update_exposed(const engine::SimulationInput& in)
{
  using collectives::AlgorithmId;
  const collectives::CollectiveOptions& c = in.collective;
  const bool ps = in.algorithm.uses(AlgorithmId::Ps) ||
                  (in.algorithm.uses(AlgorithmId::Hier) && c.inter_algorithm == AlgorithmId::Ps);
  if (!ps || c.ps_servers < 2 || c.ps_sharding != collectives::PsSharding::Split)
    return false;
  return std::none_of(in.simgrid_cfg.begin(), in.simgrid_cfg.end(),
                      [](const std::string& cfg) { return cfg == "network/optim:Full"; });
}

/** Closed-form time of one aggregation of `bytes` on the loaded platform; ConfigError naming `why` when the
 *  algorithm has none for this setup. */
double aggregation_cost_s(const engine::Simulation& sim, const ResolvedRun& r, std::uint64_t bytes, const char* why)
{
  try {
    return collectives::closed_form_s(r.aggregation.algorithm, bytes, sim.closed_form());
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(why) + " needs the closed form of --algorithm " + r.aggregation.algorithm.label() +
                      ", and there is none here (" + e.what() + ")");
  }
}

/** The DAG of the run: the schedule's plan may read the platform (closed-form costs, the ranks' GPU speed). */
dag::IterationDag build_run_dag(const engine::Simulation& sim, const ResolvedRun& r)
{
  dag::ScheduleOptions o = r.schedule.options;
  o.compute_scale = sim.compute_scale();
  if (o.schedule == dag::Schedule::Mgwfbp) {
    o.aggregation_cost_s = [&](std::uint64_t bytes) { return aggregation_cost_s(sim, r, bytes, "--schedule mgwfbp"); };
    o.aggregation_floor_s = [&](std::uint64_t bytes) {
      try {
        return collectives::closed_form_floor_s(r.aggregation.algorithm, bytes, sim.closed_form());
      } catch (const ConfigError&) {
        return 0.0; // no closed form: aggregation_cost_s says so, with the option that needs it
      }
    };
  }
  return dag::build_dag(r.workload, o);
}

/** The DAG of the single-GPU baseline: the same workload, updates and input, without an aggregation schedule (a
 *  GPU training alone runs no fusion cycle and no scheduler). */
dag::IterationDag single_gpu_dag(const engine::Simulation& sim, const ResolvedRun& r)
{
  dag::ScheduleOptions o = r.schedule.options;
  o.schedule = dag::Schedule::Wfbp;
  o.comm_streams = 1;
  o.update_on_server = false; // a GPU alone updates its own parameters
  o.compute_scale = sim.compute_scale();
  return dag::build_dag(r.workload, o);
}

/** The closed-form critical path of the DAG (mean over the measured iterations), as the simulation would measure
 *  it without contention. */
double analytical_iteration_s(const engine::Simulation& sim, const ResolvedRun& r, const dag::IterationDag& dag)
{
  const double scale = sim.compute_scale();
  const auto ends = analytical::iteration_ends_s(dag, r.input.iterations, [&](const dag::Task& t) {
    switch (t.kind) {
    case dag::TaskKind::Forward:
    case dag::TaskKind::Backward:
    case dag::TaskKind::Update:
      return t.duration_s * scale;
    case dag::TaskKind::Aggregation:
      return aggregation_cost_s(sim, r, t.bytes, "--analytical");
    default:
      return t.duration_s;
    }
  });
  const unsigned n = r.input.iterations;
  const unsigned first = std::min(r.schedule.warmup, n - 1);
  return (ends[n - 1] - (first == 0 ? 0.0 : ends[first - 1])) / (n - first);
}

/** "aggregation 3: 12 layers (res4a..res4c), 9.00 MiB" for each aggregation that carries several layers. */
void explain_merge(std::ostream& out, const dag::IterationDag& dag, const proto::Workload& w)
{
  out << "merge plan (" << dag.aggregations() << " aggregations, in the order they run):\n";
  int k = 0;
  for (const auto& slot : dag.communication) {
    const dag::Task& t = dag.tasks[slot.task];
    out << "  aggregation " << ++k << ": " << t.layers.size() << " layer" << (t.layers.size() == 1 ? "" : "s") << " ("
        << w.layers(t.layers.front()).name();
    if (t.layers.size() > 1)
      out << ".." << w.layers(t.layers.back()).name();
    out << "), " << format_bytes(double(t.bytes)) << "\n";
  }
  out << "\n";
}

proto::RunConfig run_config(const RunOptions& o, const ResolvedRun& r, const engine::SimulationOutput& sim,
                            const collectives::ClosedFormInput& closed_form)
{
  proto::RunConfig config;
  config.set_platform_file(o.platform);
  config.set_framework(o.framework);
  config.set_workload_file(o.workload);
  config.set_algorithm(r.aggregation.algorithm.label());
  config.set_schedule(dag::to_string(r.schedule.options.schedule));
  config.set_iterations(r.input.iterations);
  config.set_ranks(static_cast<unsigned>(sim.hosts.size()));
  for (const auto& h : sim.hosts)
    config.add_hosts(h);
  for (const auto& c : sim.simgrid_cfg)
    config.add_simgrid_cfg(c);
  *config.mutable_aggregation() = to_proto(r.aggregation);
  config.mutable_aggregation()->set_fidelity_used(collectives::fidelity_used(
      r.aggregation.algorithm, closed_form, sim.multi.exact_flow_forms, sim.multi.computed_flow_forms));
  for (const auto& c : r.aggregation.algorithm.choices)
    config.mutable_aggregation()->add_chunk_bytes_used(collectives::effective_chunk_bytes(c.id, r.aggregation.options));
  *config.mutable_schedule_config() = to_proto(r.schedule);
  return config;
}

/** A whole number of at most 9 digits; ConfigError naming `option` otherwise. */
long index_of(const std::string& text, const std::string& option)
{
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    throw ConfigError(option + ": expected a number or a range N-M (got '" + text + "')");
  return std::stol(text);
}

/** "0,3,8-11" -> {0, 3, 8, 9, 10, 11}, each in [first, first + count); `option` names the flag in errors. */
std::set<int> parse_index_list(const std::string& text, const std::string& option, int first, int count)
{
  std::set<int> out;
  if (text.empty())
    return out;
  for (const auto& part : split(text, ',')) {
    const auto dash = part.find('-');
    const long lo = index_of(part.substr(0, dash), option);
    const long hi = dash == std::string::npos ? lo : index_of(part.substr(dash + 1), option);
    if (lo > hi || lo < first || hi >= long(first) + count)
      throw ConfigError(option + ": '" + part + "' is outside " + std::to_string(first) + ".." +
                        std::to_string(first + count - 1));
    for (long i = lo; i <= hi; ++i)
      out.insert(static_cast<int>(i - first));
  }
  return out;
}

/** The ranks and iterations --trace keeps (iterations are numbered from 1 on the command line). */
report::TraceFilter trace_filter(const RunOptions& o, const ResolvedRun& r)
{
  report::TraceFilter f;
  f.ranks = parse_index_list(o.trace_ranks, "--trace-ranks", 0,
                             static_cast<int>(r.input.ranks > 0 ? r.input.ranks : 1u << 30));
  f.iterations = parse_index_list(o.trace_iterations, "--trace-iterations", 1, static_cast<int>(r.input.iterations));
  return f;
}

/** The merge plan, for schedules that merge gradients. */
void add_groups(proto::Report& report, const dag::IterationDag& dag, const proto::Workload& w, dag::Schedule s)
{
  if (s != dag::Schedule::Fusion && s != dag::Schedule::Buckets && s != dag::Schedule::Mgwfbp)
    return;
  for (const auto& slot : dag.communication) {
    auto* g = report.add_aggregation_groups();
    for (int l : dag.tasks[slot.task].layers)
      g->add_layers(w.layers(l).name());
    g->set_bytes(dag.tasks[slot.task].bytes);
  }
}

} // namespace

void run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  RunOptions o;
  po::variables_map given;
  if (!parse_options(args, run_options(o), kRunUsage, out, "run", &given))
    return;
  if (!o.framework.empty()) { // the preset's words first, then the user's: every explicit option wins
    std::vector<std::string> words = preset_words(framework_preset(o.framework), given);
    words.insert(words.end(), args.begin(), args.end());
    o = RunOptions{};
    parse_options(words, run_options(o), kRunUsage, out, "run");
  }
  ResolvedRun r = resolve_run(o);
  ProgressLines progress(err, o.quiet);
  if (!progress.quiet())
    r.input.progress = [&](const std::string& phase, unsigned it, double end_s) {
      progress.print(phase + "-GPU phase: iteration " + std::to_string(it + 1) + "/" +
                     std::to_string(r.input.iterations) + " done at " + format_seconds(end_s) + " simulated");
    };
  if (!progress.quiet()) // a long iteration is not silent: every few seconds, the aggregations done
    r.input.aggregation_progress = [&](const std::string& phase, std::size_t done, std::size_t total) {
      progress.print_every(
          phase + "-GPU phase: " + std::to_string(done) + " of " + std::to_string(total) + " aggregations done", 5.0);
    };

  const report::TraceFilter filter = trace_filter(o, r);            // refuses a bad list before anything runs
  r.input.record_transfers = !o.trace.empty() && !o.trace_no_flows; // the trace's flow arrows, one per message
  r.input.transfer_ranks = filter.ranks;                            // between kept ranks only (memory)
  engine::Simulation simulation(r.input);
  const dag::IterationDag dag = build_run_dag(simulation, r);
  const dag::IterationDag baseline = single_gpu_dag(simulation, r);
  const auto& cluster = r.input.cluster; // a run this machine cannot hold is refused before anything runs
  const std::size_t nodes = cluster ? std::size_t(cluster->nodes) : 0, g = cluster ? cluster->gpus_per_node : 0;
  const std::size_t ranks = simulation.hosts().size();
  engine::check_run_size({ranks, r.input.iterations, dag.tasks.size(), baseline.tasks.size(),
                          cluster ? nodes * g : ranks, nodes * (g + 2) * (g + 2), !o.trace.empty()},
                         r.input.dry_run ? 0 : engine::physical_memory_bytes());
  const double analytical = o.analytical ? analytical_iteration_s(simulation, r, dag) : 0.0;
  const engine::SimulationOutput sim = simulation.run(dag, &baseline);
  // A warning, not progress: printed under --quiet too. Not where the streams' flows were computed by ddlsim's own
  // network (mirrored lanes: nothing of the phase's network ran in SimGrid, docs/network-model.md).
  if (!o.dump_config && lazy_update_exposed(r.input) && sim.multi.computed == 0)
    err << "ddlsim: note: several parameter servers: SimGrid 3.32's lazy update may leave links out of the sharing "
           "here (docs/network-model.md); --cfg network/optim:Full gives the model's times\n";
  const proto::RunConfig config = run_config(o, r, sim, simulation.closed_form());
  if (o.dump_config) {
    out << message_to_json(config);
    return;
  }
  if (r.schedule.explain_merge)
    explain_merge(out, dag, r.workload);

  proto::Report report = report::build_report(config, r.workload, dag, sim.multi, sim.single ? baseline : dag,
                                              sim.single ? *sim.single : sim.multi);
  add_groups(report, dag, r.workload, r.schedule.options.schedule);
  report.set_analytical_iteration_time_s(analytical);
  report.set_ddlsim_version(DDLSIM_VERSION);
  report.set_simgrid_version(engine::simgrid_version());
  const std::string trace = o.trace.empty() ? "" : report::chrome_trace(dag, sim.multi, filter);
  if (o.report == kStandardOutput || o.trace == kStandardOutput) { // standard output carries that file alone
    out << (o.report == kStandardOutput ? message_to_json(report) : trace);
  } else {
    report::write_console(out, report);
    char buf[120];
    std::snprintf(buf, sizeof buf, "  %-34s %.3f s\n", "wall time", progress.wall_s());
    out << buf;
  }
  if (o.explain && o.report != kStandardOutput && o.trace != kStandardOutput) {
    ExplainInput e;
    e.dag = &dag;
    e.multi = &sim.multi;
    e.report = &report;
    e.workload = &r.workload;
    e.algorithm = r.aggregation.algorithm;
    e.closed_form = simulation.closed_form();
    e.compute_scale = simulation.compute_scale();
    e.cluster = r.input.cluster;
    e.args = args;
    explain(out, e);
    out << "\n";
  }
  if (!o.report.empty() && o.report != kStandardOutput) {
    write_output_file(o.report, message_to_json(report));
    out << "  report written to " << o.report << "\n";
  }
  if (!o.trace.empty() && o.trace != kStandardOutput) {
    write_output_file(o.trace, trace);
    out << "  timeline written to " << o.trace << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
}

} // namespace ddlsim::cli
