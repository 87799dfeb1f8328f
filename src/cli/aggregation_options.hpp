// Command-line options of the aggregation algorithms, shared by `ddlsim run` and `ddlsim collective`.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/options.hpp"
#include "proto/report.pb.h"

#include <boost/program_options.hpp>

#include <string>

namespace ddlsim::cli {

/** @brief The options as typed (strings keep their units until resolve()). */
struct AggregationCli {
  std::string algorithm;       ///< algorithm name or size switch "SMALL<=SIZE,...,LARGE"; empty: the stack's, or ring
  std::string stack = "ideal"; ///< stack profile: a shipped name or a .textproto file
  std::string msg_overhead = "0"; ///< per-message software overhead (time, e.g. 32us)
  std::string reduce_cost = "0";  ///< reduction time per byte (e.g. 1.5ns)
  std::string chunk = "0";        ///< pipelining chunk; 0: the algorithm's default
  long long chunks = 0;           ///< chunks per collective; 0: none (--chunk-bytes or the default)
  std::string inter_algorithm =
      collectives::entry(collectives::kDefaultAlgorithm).name; ///< hier: algorithm among node leaders
  int servers = 1;                                             ///< ps: servers
  std::string ps_hosts;               ///< ps: server hosts, comma separated (default: ranks 0..S-1)
  std::string ps_sharding = "split";  ///< ps: split | round-robin
  std::string ps_update = "worker";   ///< ps: worker (servers only sum) | server (servers sum and update)
  std::string optimizer = "momentum"; ///< ps with --ps-update server: sgd | momentum | adam
  std::string fidelity = "auto";      ///< auto | message | flow
};

/** @brief The resolved algorithm and its knobs. */
struct Aggregation {
  collectives::AlgorithmSpec algorithm;
  collectives::CollectiveOptions options;
};

/** @brief The "Aggregation" group of options, bound to `a`. */
boost::program_options::options_description aggregation_options(AggregationCli& a);

/** @brief Checks and converts the options; throws ConfigError naming the option and the bad value, also for
 *  an option the chosen algorithm would not read (no silent no-op). */
Aggregation resolve(const AggregationCli& a);

/** @brief The resolved options as recorded in reports and --dump-config. */
proto::AggregationConfig to_proto(const Aggregation& a);

} // namespace ddlsim::cli
