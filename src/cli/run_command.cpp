// `ddlsim run`: simulate S-SGD iterations of a workload on a platform and report.
#include "cli/aggregation_options.hpp"
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"
#include "engine/simulation.hpp"
#include "platform/cluster_spec.hpp"
#include "report/summary.hpp"
#include "report/trace.hpp"
#include "report/writers.hpp"
#include "workload/workload.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kRunUsage = R"(Usage: ddlsim run --platform FILE.xml | --cluster KEY=VALUE,... --workload FILE.textproto [options]

Simulates synchronous data-parallel SGD: every GPU rank replays the workload's layer times (scaled by
its speed), aggregates each layer's gradient with the chosen allreduce over the platform's links, and
updates. Prints iteration time, throughput, speedup and scaling efficiency against one GPU of the same
kind (simulated too), and where the time goes. Ranks map to GPU hosts in natural name order unless
--hosts says otherwise.)";

po::options_description run_options(RunOptions& o)
{
  po::options_description input("Input", kHelpColumns, kHelpDescriptionColumns);
  input.add_options()
      ("platform", po::value(&o.platform)->value_name("FILE"), "SimGrid platform XML; GPU hosts carry <prop id=\"gpu\" value=\"MODEL\"/>")
      ("cluster", po::value(&o.cluster)->value_name("KEY=VALUE,..."), "instead of --platform: build a generated cluster in memory, keys as the options of 'ddlsim platform': nodes, gpus-per-node, gpu, intra, inter, and optionally nics-per-node, topology, nodes-per-leaf, oversubscription (comma separated, e.g. \"nodes=4,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100\")")
      ("workload", po::value(&o.workload)->required()->value_name("FILE"), "workload, protobuf text format (.textproto) or JSON (.json)")
      ("ranks", po::value(&o.ranks)->default_value(o.ranks)->value_name("N"), "number of GPUs; 0 = every GPU host of the platform")
      ("hosts", po::value(&o.hosts)->value_name("H0,H1,..."), "explicit host of rank 0, 1, ... (GPU hosts, comma separated)");
  po::options_description model("Model", kHelpColumns, kHelpDescriptionColumns);
  model.add_options()
      ("schedule", po::value(&o.schedule)->default_value(o.schedule)->value_name("NAME"), "sequential (backward, then every aggregation) | wfbp (aggregate each layer as soon as its gradient is ready)")
      ("iterations", po::value(&o.iterations)->default_value(o.iterations)->value_name("N"), "iterations simulated back to back; the report averages those after the first");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  output.add_options()
      ("report", po::value(&o.report)->value_name("FILE.json"), "also write the report, with the resolved configuration, as JSON")
      ("trace", po::value(&o.trace)->value_name("FILE.json"), "write a timeline of every task on every GPU (Chrome trace format: open in https://ui.perfetto.dev or chrome://tracing)")
      ("dump-config", po::bool_switch(&o.dump_config), "print the fully resolved configuration as JSON and stop")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress lines on stderr")
      ("help,h", "show this help")
      ("version", "show the version");
  po::options_description simgrid("SimGrid", kHelpColumns, kHelpDescriptionColumns);
  simgrid.add_options()
      ("cfg", po::value(&o.simgrid_cfg)->composing()->value_name("KEY:VALUE"), "SimGrid configuration, applied after ddlsim's exact alpha-beta defaults (network/model:CM02, network/crosstraffic:0, network/TCP-gamma:0, contexts/stack-size:512); repeatable");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(input).add(model).add(aggregation_options(o.aggregation)).add(output).add(simgrid);
  return all;
}

} // namespace

void run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  RunOptions o;
  if (!parse_options(args, run_options(o), kRunUsage, out, "run"))
    return;

  if (o.platform.empty() == o.cluster.empty())
    throw ConfigError("run: give exactly one of --platform and --cluster");
  engine::SimulationInput in;
  if (!o.cluster.empty()) {
    in.cluster = platform::parse_cluster_string(o.cluster);
    o.platform = "cluster:" + platform::to_cluster_string(*in.cluster);
  }
  in.schedule = dag::parse_schedule(o.schedule);
  in.collective = resolve(o.aggregation); // rejects bad aggregation options before any file is read
  if (o.iterations < 1)
    throw ConfigError("--iterations must be >= 1 (got " + std::to_string(o.iterations) + ")");
  if (o.ranks < 0)
    throw ConfigError("--ranks must be >= 0 (got " + std::to_string(o.ranks) + ")");
  check_output_path(o.report, "--report");
  check_output_path(o.trace, "--trace");
  in.platform_file = o.platform;
  in.workload = workload::load_workload(o.workload);
  in.workload_name = o.workload;
  in.algorithm = o.aggregation.algorithm;
  in.iterations = static_cast<unsigned>(o.iterations);
  in.ranks = static_cast<unsigned>(o.ranks);
  in.hosts = parse_host_list(o.hosts, "--hosts");
  in.simgrid_cfg = o.simgrid_cfg;
  in.dry_run = o.dump_config;

  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  if (!o.quiet)
    in.progress = [&](const std::string& phase, unsigned it, double end_s) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "ddlsim: %s-GPU phase: iteration %u/%u done at %s simulated (wall %.2f s)\n",
                    phase.c_str(), it + 1, in.iterations, format_seconds(end_s).c_str(), wall());
      err << buf << std::flush;
    };

  const engine::SimulationOutput sim = engine::simulate(in);

  proto::RunConfig config;
  config.set_platform_file(o.platform);
  config.set_workload_file(o.workload);
  config.set_algorithm(o.aggregation.algorithm);
  config.set_schedule(dag::to_string(in.schedule));
  config.set_iterations(in.iterations);
  config.set_ranks(static_cast<unsigned>(sim.hosts.size()));
  for (const auto& h : sim.hosts)
    config.add_hosts(h);
  for (const auto& c : sim.simgrid_cfg)
    config.add_simgrid_cfg(c);
  *config.mutable_aggregation() = to_proto(o.aggregation, in.collective);
  if (o.dump_config) {
    out << message_to_json(config);
    return;
  }

  const proto::Report report =
      report::build_report(config, in.workload, sim.dag, sim.multi, sim.single ? *sim.single : sim.multi);
  report::write_console(out, report);
  char buf[120];
  std::snprintf(buf, sizeof buf, "  %-34s %.3f s\n", "wall time", wall());
  out << buf;
  if (!o.report.empty()) {
    report::write_json_file(o.report, report);
    out << "  report written to " << o.report << "\n";
  }
  if (!o.trace.empty()) {
    report::write_chrome_trace(o.trace, sim.dag, sim.multi);
    out << "  timeline written to " << o.trace << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
}

} // namespace ddlsim::cli
