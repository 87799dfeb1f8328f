// Runs an S-SGD DAG on a SimGrid platform: one compute and one communication actor per GPU rank.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/options.hpp"
#include "dag/dag.hpp"
#include "dag/records.hpp"
#include "platform/cluster_spec.hpp"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief Everything one simulation needs besides its DAG (already parsed and validated). */
struct SimulationInput {
  std::string platform_file;                    ///< platform XML, or a label of `cluster` in messages when that is set
  std::optional<platform::ClusterSpec> cluster; ///< when set: build this cluster in memory instead of loading XML
  std::string reference_gpu;                    ///< catalogue GPU the DAG's compute times were measured on
  collectives::AlgorithmSpec algorithm;
  collectives::CollectiveOptions collective; ///< algorithm knobs (overhead, reduce cost, servers, ...)
  unsigned iterations = 1;
  unsigned ranks = 0;                   ///< 0: every GPU host
  std::vector<std::string> hosts;       ///< explicit rank -> host list (empty: natural order)
  std::vector<std::string> simgrid_cfg; ///< "key:value" pairs applied after the defaults
  bool single_gpu_baseline = true;      ///< also simulate one GPU alone (on rank 0's host) first
  bool dry_run = false;                 ///< load and map only, simulate nothing
  /** Simulate one iteration and copy it for the others where they provably equal it (PhaseSpec); false:
   *  simulate every iteration. */
  bool replicate_iterations = true;
  /** Keep the transfers in flight over time on the busiest links (LinkUsage::in_flight, for a trace); false: only
   *  each link's bytes and busy time. */
  bool link_timelines = true;
  /** Let one actor per communication stream run every rank's aggregations where that changes no time (PhaseSpec);
   *  false: one communication actor per rank and stream, always (the check of that shortcut). */
  bool drive_streams = true;
  dag::ProgressFn progress;                        ///< may be empty
  dag::AggregationProgressFn aggregation_progress; ///< inside long iterations; may be empty
  bool record_transfers = false;                   ///< the multi-GPU phase keeps every rank-to-rank message (trace)
  std::set<int> transfer_ranks;                    ///< with record_transfers: only messages between these (empty: all)
};

/** @brief Results: the multi-GPU phase, and the single-GPU baseline when asked for. */
struct SimulationOutput {
  std::vector<std::string> simgrid_cfg; ///< every --cfg in force, defaults first
  std::vector<std::string> hosts;       ///< rank -> host
  dag::PhaseResult multi;
  std::optional<dag::PhaseResult> single;
};

/** @brief A simulation in two steps: the constructor loads the platform and maps the ranks, so that the caller
 *  can build a DAG that depends on the platform (closed-form costs, the ranks' GPU speed); run() simulates it.
 *  SimGrid allows one engine per process: a second Simulation in one process throws Error. */
class Simulation {
public:
  /** Throws InputError/ConfigError on bad inputs. */
  explicit Simulation(const SimulationInput& input);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const std::vector<std::string>& hosts() const;
  /** Ranks, nodes, the aggregation knobs and the worst routes by role, for the closed forms. */
  const collectives::ClosedFormInput& closed_form() const;
  /** Seconds on rank 0's GPU per second on the workload's reference GPU (ratio of catalogue peaks). */
  double compute_scale() const;
  /** Runs the phases of `dag` (nothing with dry_run); once. The single-GPU baseline runs `baseline` when given
   *  (a GPU alone needs no aggregation schedule), else `dag`. Throws Error if the simulation does not complete. */
  SimulationOutput run(const dag::IterationDag& dag, const dag::IterationDag* baseline = nullptr);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/** @brief Simulation(input).run(dag). */
SimulationOutput simulate(const SimulationInput& input, const dag::IterationDag& dag);

} // namespace ddlsim::engine
