// One phase of a training simulation: a set of ranks runs the DAG for some iterations, each rank on two
// in-order stream actors (compute, communication).
#pragma once

#include "collectives/collective.hpp"
#include "dag/dag.hpp"
#include "dag/records.hpp"
#include "platform/gpu_hosts.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief Everything a phase runs with; references must outlive the phase. */
struct PhaseSpec {
  std::string name; ///< "single" or "multi": tags mailboxes and progress lines
  const dag::IterationDag* dag = nullptr;
  std::vector<platform::GpuHost> ranks;
  std::vector<int> node_of_rank;
  const collectives::Collective* collective = nullptr;
  collectives::CollectiveOptions options;
  unsigned iterations = 1;
  double reference_speed = 0;                                       ///< FLOP/s of the workload's reference GPU
  const dag::ProgressFn* progress = nullptr;                        ///< may point to an empty function
  const dag::AggregationProgressFn* aggregation_progress = nullptr; ///< may point to an empty function
  bool record_transfers = false; ///< keep every rank-to-rank message in PhaseResult::transfers (for the trace)
  std::set<int> transfer_ranks;  ///< with record_transfers: only messages between two of these (empty: all)
  /** Simulate one iteration and copy it for the others when they provably equal it (dag::iteration_barrier, and
   *  every rank ends the first at one instant); false: simulate every iteration. */
  bool replicate_iterations = true;
  /** Keep every transfer's span on the busiest links for the transfers in flight over time (LinkUsage::in_flight,
   *  the trace's counter tracks); false: only the busy time, from merged spans (far less memory at scale). */
  bool link_timelines = true;
  /** Where every aggregation is one plan run for all ranks at once (Collective::drivable) and every rank's readiness
   *  is a known time (tasks run ahead), one actor per communication stream runs them for every rank instead of one
   *  actor per rank and stream that would only wait for the last one; the times are the same. false: never. */
  bool drive_streams = true;
  /** The network is SimGrid's exact alpha-beta model as ddlsim configures it (CM02, no cross-traffic, no TCP window,
   *  no --cfg of the network, no link or host profiles): a flow alone on its links takes its latency plus its bytes
   *  over the narrowest link (CommWorld::set_solo). */
  bool exact_network = false;
  /** No link's latency or bandwidth changes over time (no profile in the platform; exact_network implies it, and
   *  holds it with a --cfg of the network too): CommWorld::set_static_links. */
  bool static_links = false;
};

/** @brief A phase, prepared outside any actor (the collective's prepare() may throw ConfigError). */
class Phase {
public:
  explicit Phase(PhaseSpec spec);
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  /** Runs the phase to completion; must be called from an actor. */
  dag::PhaseResult run();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ddlsim::engine
