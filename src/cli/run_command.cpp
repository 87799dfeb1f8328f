// `ddlsim run`: simulate S-SGD iterations of a workload on a platform and report.
#include "cli/aggregation_options.hpp"
#include "cli/cli.hpp"
#include "cli/common_options.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "engine/simulation.hpp"
#include "platform/cluster_spec.hpp"
#include "report/summary.hpp"
#include "report/trace.hpp"
#include "report/writers.hpp"
#include "workload/workload.hpp"

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

/** "sequential (...) | wfbp (...)": the schedule table. */
std::string schedule_help()
{
  std::string out;
  for (const auto& e : dag::schedule_table())
    out += (out.empty() ? "" : " | ") + std::string(e.name) + " (" + e.summary + ")";
  return out;
}

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
  add_model("schedule", po::value(&o.schedule)->default_value(o.schedule)->value_name("NAME"), schedule_help().c_str());
  add_model("iterations", po::value(&o.iterations)->default_value(o.iterations)->value_name("N"),
            "iterations simulated back to back; the report averages those after the first");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("report", po::value(&o.report)->value_name("FILE.json"),
             "also write the report, with the resolved configuration, as JSON");
  add_output("trace", po::value(&o.trace)->value_name("FILE.json"),
             "write a timeline of every task on every GPU (Chrome trace format: open in https://ui.perfetto.dev or "
             "chrome://tracing)");
  add_output("dump-config", po::bool_switch(&o.dump_config), "print the fully resolved configuration as JSON and stop");
  add_output("quiet,q", po::bool_switch(&o.quiet), "no progress lines on stderr");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(input).add(model).add(aggregation_options(o.aggregation)).add(output).add(simgrid_options(o.simgrid_cfg));
  return all;
}

/** A run resolved from the options: what to simulate, and the DAG of one iteration. */
struct ResolvedRun {
  engine::SimulationInput input;
  Aggregation aggregation;
  dag::Schedule schedule = dag::Schedule::Wfbp;
  proto::Workload workload;
  dag::IterationDag dag;
};

/** Checks every option before any file is read, then loads the workload and builds the DAG. */
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
  r.schedule = dag::parse_schedule(o.schedule);
  r.aggregation = resolve(o.aggregation); // rejects bad aggregation options before any file is read
  if (o.iterations < 1)
    throw ConfigError("--iterations must be >= 1 (got " + std::to_string(o.iterations) + ")");
  in.ranks = checked_ranks(o.ranks);
  check_outputs({{"--report", o.report}, {"--trace", o.trace}},
                {{"--platform", o.platform}, {"--workload", o.workload}});
  in.platform_file = o.platform;
  r.workload = workload::load_workload(o.workload);
  in.reference_gpu = r.workload.reference_gpu();
  in.algorithm = r.aggregation.algorithm;
  in.collective = r.aggregation.options;
  in.iterations = static_cast<unsigned>(o.iterations);
  in.hosts = parse_host_list(o.hosts, "--hosts");
  in.simgrid_cfg = o.simgrid_cfg;
  in.dry_run = o.dump_config;
  r.dag = dag::build_iteration_dag(r.workload, r.schedule);
  return r;
}

proto::RunConfig run_config(const RunOptions& o, const ResolvedRun& r, const engine::SimulationOutput& sim)
{
  proto::RunConfig config;
  config.set_platform_file(o.platform);
  config.set_workload_file(o.workload);
  config.set_algorithm(r.aggregation.algorithm.label());
  config.set_schedule(dag::to_string(r.schedule));
  config.set_iterations(r.input.iterations);
  config.set_ranks(static_cast<unsigned>(sim.hosts.size()));
  for (const auto& h : sim.hosts)
    config.add_hosts(h);
  for (const auto& c : sim.simgrid_cfg)
    config.add_simgrid_cfg(c);
  *config.mutable_aggregation() = to_proto(r.aggregation);
  return config;
}

} // namespace

void run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  RunOptions o;
  if (!parse_options(args, run_options(o), kRunUsage, out, "run"))
    return;
  ResolvedRun r = resolve_run(o);
  const ProgressLines progress(err, o.quiet);
  if (!progress.quiet())
    r.input.progress = [&](const std::string& phase, unsigned it, double end_s) {
      progress.print(phase + "-GPU phase: iteration " + std::to_string(it + 1) + "/" +
                     std::to_string(r.input.iterations) + " done at " + format_seconds(end_s) + " simulated");
    };

  const engine::SimulationOutput sim = engine::simulate(r.input, r.dag);
  const proto::RunConfig config = run_config(o, r, sim);
  if (o.dump_config) {
    out << message_to_json(config);
    return;
  }

  const proto::Report report =
      report::build_report(config, r.workload, r.dag, sim.multi, sim.single ? *sim.single : sim.multi);
  report::write_console(out, report);
  char buf[120];
  std::snprintf(buf, sizeof buf, "  %-34s %.3f s\n", "wall time", progress.wall_s());
  out << buf;
  if (!o.report.empty()) {
    write_output_file(o.report, message_to_json(report));
    out << "  report written to " << o.report << "\n";
  }
  if (!o.trace.empty()) {
    write_output_file(o.trace, report::chrome_trace(r.dag, sim.multi));
    out << "  timeline written to " << o.trace << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
}

} // namespace ddlsim::cli
