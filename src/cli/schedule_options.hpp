// Command-line options of the schedules (`ddlsim run`): how gradients become aggregations and when they run.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/options.hpp"
#include "dag/dag.hpp"
#include "proto/report.pb.h"

#include <boost/program_options.hpp>

#include <string>

namespace ddlsim::cli {

/** @brief The options as typed (sizes and times keep their units until resolve()). */
struct ScheduleCli {
  std::string schedule = "wfbp";
  std::string update = "global";
  int io_prefetch = 0;
  int comm_streams = 1;
  std::string fusion_bytes = "128MiB";
  std::string fusion_cycle = "1ms";
  std::string bucket_bytes = "25MiB";
  std::string first_bucket_bytes = "1MiB";
  std::string partition_bytes = "4MB";
  std::string credit_bytes = "16MB";
  int warmup = 1;
  bool explain_merge = false;
  std::string gpu_interference = "0";
  std::string pcie_contention = "off";
  std::string cpu_contention = "off";
};

/** @brief The resolved schedule. */
struct ScheduleChoice {
  dag::ScheduleOptions options;
  unsigned warmup = 1;
  bool explain_merge = false;
  double gpu_interference = 0;        ///< share of a GPU's speed an aggregation on it takes (engine: CollectiveOptions)
  bool gpu_interference_auto = false; ///< --gpu-interference auto
  /// --bucket-bytes / --first-bucket-bytes model/N: the cap is the workload's gradient bytes / N (0: a size was given);
  /// apply_model_fractions() sets the caps once the workload is loaded.
  unsigned bucket_divisor = 0;
  unsigned first_bucket_divisor = 0;
  bool pcie_contention = false;
  bool cpu_contention = false;
};

/** @brief The "Schedule" group of options, bound to `s`. */
boost::program_options::options_description schedule_options(ScheduleCli& s);

/** @brief Checks and converts; refuses (ConfigError, one line) a knob the schedule does not read, a schedule that
 *  needs per-layer updates without them, and combinations `algorithm` cannot run (parameter servers serve one
 *  aggregation at a time). `iterations` bounds the warm-up. */
ScheduleChoice resolve(const ScheduleCli& s, const collectives::AlgorithmSpec& algorithm,
                       const collectives::CollectiveOptions& aggregation, int iterations);

/** @brief Sets the bucket caps given as model/N from the workload's gradient bytes (at least 1 byte). */
void apply_model_fractions(ScheduleChoice& s, std::uint64_t gradient_bytes);

/** @brief The resolved schedule as recorded in reports and --dump-config. */
proto::ScheduleConfig to_proto(const ScheduleChoice& s);

} // namespace ddlsim::cli
