// Runs the S-SGD DAG on a SimGrid platform: one compute and one communication actor per GPU rank.
#pragma once

#include "collectives/collective.hpp"
#include "dag/dag.hpp"
#include "engine/records.hpp"
#include "platform/cluster_spec.hpp"
#include "proto/workload.pb.h"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief SimGrid settings ddlsim starts from: exact alpha-beta with max-min sharing (docs/network-model.md). */
const std::vector<std::string>& default_simgrid_config();

/** @brief Everything one simulation needs (already parsed and validated). */
struct SimulationInput {
  std::string platform_file;              ///< platform XML, or a label of `cluster` in messages when that is set
  std::optional<platform::ClusterSpec> cluster; ///< when set: build this cluster in memory instead of loading XML
  proto::Workload workload;
  std::string workload_name = "workload"; ///< file the workload came from, for messages
  dag::Schedule schedule = dag::Schedule::Wfbp;
  std::string algorithm = "ring";
  collectives::CollectiveOptions collective;  ///< algorithm knobs (overhead, reduce cost, servers, ...)
  unsigned iterations = 1;
  unsigned ranks = 0;                     ///< 0: every GPU host
  std::vector<std::string> hosts;         ///< explicit rank -> host list (empty: natural order)
  std::vector<std::string> simgrid_cfg;   ///< "key:value" pairs applied after the defaults
  bool single_gpu_baseline = true;        ///< also simulate one GPU alone (on rank 0's host) first
  bool dry_run = false;                   ///< load and map only, simulate nothing
  ProgressFn progress;                    ///< may be empty
};

/** @brief Results: the multi-GPU phase, and the single-GPU baseline when asked for. */
struct SimulationOutput {
  dag::IterationDag dag;
  std::vector<std::string> simgrid_cfg;   ///< every --cfg in force, defaults first
  std::vector<std::string> hosts;         ///< rank -> host
  PhaseResult multi;
  std::optional<PhaseResult> single;
};

/** @brief What `ddlsim collective` needs: one algorithm, a list of message sizes. */
struct SweepInput {
  std::string platform_file;
  std::string algorithm = "ring";
  collectives::CollectiveOptions collective;
  unsigned ranks = 0;
  std::vector<std::string> hosts;
  std::vector<std::string> simgrid_cfg;
  std::vector<std::uint64_t> sizes;  ///< bytes, in order
  /** Called after each size: its index, and its time in seconds. May be empty. */
  std::function<void(std::size_t, double)> progress;
};

/** @brief One size of a sweep. */
struct SweepPoint {
  std::uint64_t bytes = 0;
  double time_s = 0;                 ///< from the common start to the last rank holding the result
  std::uint64_t rank_bytes_sent = 0; ///< all ranks together (servers not included)
};

/** @brief Sweep results and what the closed forms need to know about the platform. */
struct SweepOutput {
  std::vector<std::string> hosts;
  std::vector<std::string> simgrid_cfg;
  std::vector<SweepPoint> points;
  std::vector<int> node_of_rank;
  /** Worst (largest-latency, smallest-bandwidth) route among ring neighbours and XOR partners. */
  double alpha_s = 0, bandwidth_bytes_per_s = 0;
  /** Same, restricted to pairs inside a node (0 if none) and to pairs of node leaders. */
  double intra_alpha_s = 0, intra_bandwidth_bytes_per_s = 0, leader_alpha_s = 0, leader_bandwidth_bytes_per_s = 0;
  /** PS: worst route from a rank to a server. */
  double server_alpha_s = 0, server_bandwidth_bytes_per_s = 0;
};

/** @brief Runs one allreduce of each size, one after the other (all ranks start each size together).
 *  One engine per process, like simulate(). */
SweepOutput run_collective_sweep(const SweepInput& input);

/** @brief Loads the platform, maps ranks, runs the phases. SimGrid allows one engine per process, so this
 *  can be called once per process (a second call throws Error). Throws InputError/ConfigError on bad
 *  inputs, Error if the simulation does not complete. */
SimulationOutput simulate(const SimulationInput& input);

} // namespace ddlsim::engine
