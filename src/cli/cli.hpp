// Command-line front end: subcommands parse their options into plain structs and run.
#pragma once

#include "cli/aggregation_options.hpp"
#include "cli/schedule_options.hpp"
#include "hardware/link_catalog.hpp"
#include "platform/cluster_spec.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief Options of `ddlsim run`; defaults are the documented ones. */
struct RunOptions {
  std::string platform;                 ///< SimGrid platform XML (this or `cluster` is required)
  std::string cluster;                  ///< inline cluster description built in memory (see `ddlsim platform`)
  std::string workload;                 ///< workload .textproto or .json (required)
  std::string framework;                ///< --framework preset applied before the explicit options (empty: none)
  int ranks = 0;                        ///< GPUs to use; 0 means every GPU host
  std::string hosts;                    ///< explicit comma-separated rank -> host list
  ScheduleCli schedule;                 ///< the schedule and its knobs
  bool analytical = false;              ///< also print the closed-form critical path
  bool explain = false;                 ///< also explain the iteration
  bool every_iteration = false;         ///< simulate every iteration (no copies of the first)
  bool per_rank_actors = false;         ///< one communication actor per rank, even where one per stream would do
  AggregationCli aggregation;           ///< algorithm and its knobs
  int iterations = 3;                   ///< iterations simulated back to back
  std::string report;                   ///< JSON report path (empty: none)
  std::string trace;                    ///< Chrome trace path (empty: none)
  std::string trace_ranks;              ///< ranks the trace keeps (empty: all)
  std::string trace_iterations;         ///< iterations the trace keeps, from 1 (empty: all)
  bool trace_no_flows = false;          ///< the trace without its flow arrows (one per message)
  bool dump_config = false;             ///< print the resolved configuration and stop
  bool quiet = false;                   ///< no progress lines on stderr
  std::vector<std::string> simgrid_cfg; ///< SimGrid --cfg KEY:VALUE pass-through
};

/** @brief Options of `ddlsim workload`. */
struct WorkloadOptions {
  std::string model = "resnet50";                                    ///< model-zoo name
  std::string gpu = "P40";                                           ///< target GPU, catalogue name
  int batch = 32;                                                    ///< samples per GPU
  std::string precision = "fp32";                                    ///< fp32 | fp16
  double pcie_gbps = platform::kPcie3x16Bandwidth_bytes_per_s / 1e9; ///< host-to-device bandwidth, GB/s (PCIe 3.0
                                                                     ///< x16 theoretical, from the link catalogue)
  double decode_samples_per_s = 0;        ///< input pipeline throughput, samples/s; 0: keeps up (io_s = 0)
  std::string import_csv;                 ///< CSV file to import instead of generating
  std::string csv_header = "auto";        ///< auto | yes | no: whether the CSV's first line is the header
  std::string import_astra;               ///< ASTRA-sim 1.0 workload file to import instead of generating
  double frequency_hz = 0;                ///< cycles per second of the ASTRA-sim file (required with --import-astra)
  std::vector<std::string> import_chakra; ///< Chakra ET files (one per rank) to import instead of generating
  std::string export_chakra;              ///< also write the workload as Chakra ET files PREFIX.<rank>.et
  int chakra_ranks = 1;                   ///< how many rank files --export-chakra writes
  double io_ms = 0;                       ///< io_s of an imported workload, milliseconds
  double h2d_ms = 0;                      ///< h2d_s of an imported workload, milliseconds
  double update_ms = 0; ///< update_s of an imported workload, milliseconds (ASTRA-sim delays are added)
  std::string output;   ///< file to write (.textproto or .json); empty: stdout as text format
};

/** @brief Options of `ddlsim platform`: the cluster description and the file to write. */
struct PlatformOptions {
  platform::ClusterSpec spec;       ///< nodes, GPUs, NICs, fat-tree sizes (defaults: 1 NIC per node)
  platform::ClusterKindNames kinds; ///< --intra, --inter, --topology as given (default topology: star)
  std::string output;               ///< platform XML to write (required)
};

/** @brief Runs the command line (argv without the program name). Throws ConfigError for usage errors and
 *  the library's errors for bad inputs; prints results on `out`, progress on `err`. */
void dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

void run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
void workload_command(const std::vector<std::string>& args, std::ostream& out);
void collective_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
void platform_command(const std::vector<std::string>& args, std::ostream& out);
void sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
void plot_command(const std::vector<std::string>& args, std::ostream& out);
void report_command(const std::vector<std::string>& args, std::ostream& out);

/** @brief "ddlsim 0.1.0 (SimGrid 3.32.0)". */
std::string version_string();

} // namespace ddlsim::cli
