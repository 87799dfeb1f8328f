// The algorithm table: one row per allreduce algorithm with everything ddlsim knows about it (name, factory,
// knobs read and their defaults, closed form, formula text, flow-level form). Every other file asks the table.
#pragma once

#include "analytical/alpha_beta.hpp"
#include "collectives/algorithm_spec.hpp"
#include "collectives/nccl_tuning.hpp"
#include "collectives/options.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ddlsim::collectives {

class Collective;

/** @brief Knobs an algorithm reads besides the per-message overhead and the reduction cost (read by all). */
enum Knob : unsigned {
  kKnobChunk = 1u << 0,    ///< chunk_bytes, chunks
  kKnobInter = 1u << 1,    ///< inter_algorithm
  kKnobServers = 1u << 2,  ///< ps_servers, ps_hosts, ps_sharding
  kKnobFidelity = 1u << 3, ///< fidelity (algorithms with a flow-level form)
};

/** @brief Whether an algorithm has a flow-level form, and when Fidelity::Auto uses it. */
enum class FlowForm {
  None,      ///< always message level
  Auto,      ///< Auto: flow level above kFlowAboveRanks members
  WhenAsked, ///< only with Fidelity::Flow (the message-level form simulates faster: docs/collectives.md)
  WhenExact  ///< Fidelity::Flow, and Auto above kFlowAboveRanks members where the algorithm finds its flow form equal
             ///< to its message level on the group's routes (Collective::exact_flow_form)
};

/** @brief What the closed forms know about the ranks and the platform's routes (worst hop per role). */
struct ClosedFormInput {
  int ranks = 1;
  int nodes = 1;              ///< hier: number of nodes
  int ranks_per_node = 1;     ///< hier: ranks of the largest node
  CollectiveOptions options;  ///< the knobs (servers, sharding, chunk, inter algorithm)
  analytical::RouteHops hops; ///< worst routes by role
  NcclShape nccl;             ///< nccl, nccl-ring, nccl-tree: NCCL's ring and trees over all ranks, with their hops
};

/** @brief One row of the table. */
struct AlgorithmEntry {
  AlgorithmId id;
  const char* name;
  const char* summary;               ///< one line for --help and docs
  bool flat;                         ///< may be hier's inter algorithm or a side of a size switch
  unsigned knobs;                    ///< Knob bits
  std::uint64_t default_chunk_bytes; ///< chunk when chunk_bytes is 0 (0: the whole message)
  FlowForm flow;
  const char* formula; ///< the closed form, for table headers
  std::unique_ptr<Collective> (*make)(const CollectiveOptions& options);
  double (*closed_form_s)(std::uint64_t bytes, const ClosedFormInput& in); ///< throws ConfigError if none
  /** A lower bound of closed_form_s, much cheaper where closed_form_s is a recurrence (the trees); nullptr: 0. */
  double (*closed_form_floor_s)(std::uint64_t bytes, const ClosedFormInput& in) = nullptr;
};

/** @brief Every algorithm, in the order users see them. */
const std::vector<AlgorithmEntry>& algorithm_table();
/** @brief The row of `id`. */
const AlgorithmEntry& entry(AlgorithmId id);
/** @brief The row named `name`, or nullptr. */
const AlgorithmEntry* find_algorithm(const std::string& name);
/** @brief "ring, rd, ..., or SMALL<=SIZE,LARGE (e.g. rd<=8KiB,hd)" for help and errors. */
std::string known_algorithms();
/** @brief "ring, rd, hd, tree, dbtree": the flat ones. */
std::string flat_algorithms();
/** @brief True when `spec` runs parameter servers (ps, or hier with ps among the leaders). */
bool uses_servers(const AlgorithmSpec& spec, const CollectiveOptions& options);
/** @brief True for the algorithms hier can run among node leaders: the flat ones and ps. */
bool inter_algorithm_allowed(AlgorithmId id);

/** @brief True when algorithm `id` runs its flow-level form on `members` ranks: Fidelity::Flow for any algorithm
 *  with one, Fidelity::Auto as its FlowForm says. */
bool uses_flow(AlgorithmId id, Fidelity fidelity, int members);

/** @brief True when the ring runs the message level's steps from one driver (Fidelity::Steps; rd and hd: uses_flow). */
bool uses_steps(AlgorithmId id, Fidelity fidelity);

/** @brief True when algorithm `id` has a flow-level form under the stack and contention options of `options`: any
 *  algorithm's for the ideal stack (unless a message's overhead is CPU work, --cpu-contention); with a stack's
 *  per-message costs rd's and hd's, whose steps run one flow per message, the ring's, whose flows carry chunks of
 *  one size (Flow::message_bytes) and whose closed sum charges the costs of every step, and hier's, whose gather and
 *  scatter post each flow after its sender's costs (over one of those among the leaders), ps's likewise, and the
 *  pipelined trees' (tree, dbtree, nccl-tree), whose recurrence posts each chunk after its sender's costs and charges
 *  the receiver's overhead per chunk (analytical::MessageCosts); none with staging copies or
 *  CPU work (--pcie-contention, --cpu-contention), which the flow forms' sleeps do not model. */
bool flow_form_allowed(AlgorithmId id, const CollectiveOptions& options);

/** @brief "ring: flow", "hier: message among node leaders", ...: the form each algorithm of `spec` runs on the ranks
 *  and nodes of `in` (what a run used); `exact`: the algorithms whose flow form Fidelity::Auto took where it equals the
 *  message level (PhaseResult::exact_flow_forms), reported as "flow (equal to the message level here)"; `computed`:
 *  those it ran as one program of the message level's transfers where shared links' ties may part it from SimGrid's
 *  (PhaseResult::computed_flow_forms), reported as kComputedTogether. */
std::string fidelity_used(const AlgorithmSpec& spec, const ClosedFormInput& in,
                          const std::vector<std::string>& exact = {}, const std::vector<std::string>& computed = {});

/** @brief The form fidelity_used names for an algorithm in `computed` (PhaseResult::computed_flow_forms). */
inline constexpr const char* kComputedTogether = "flow (the message level's transfers, computed together; equal to it "
                                                 "but for ties on shared links)";

/** @brief The chunk algorithm `id` pipelines with under `options` (its default when chunk_bytes is 0; 0 with
 *  --chunks, where the chunk depends on the message). */
std::uint64_t effective_chunk_bytes(AlgorithmId id, const CollectiveOptions& options);

/** @brief The chunk a pipelined tree (tree, dbtree, nccl-tree, nccl's tree) cuts its `bytes` into: ceil(bytes / chunks)
 *  with --chunks, else effective_chunk_bytes. */
std::uint64_t pipeline_chunk_bytes(AlgorithmId id, const CollectiveOptions& options, std::uint64_t bytes);

/** @brief The ring's slices of `bytes` (each a whole ring allreduce, one after the other): min(chunks, bytes) with
 *  --chunks, ceil(bytes / (ranks x chunk)) with a chunk of `chunk_bytes` (ring's effective chunk), else 1. */
std::uint64_t ring_slices(const CollectiveOptions& options, std::uint64_t chunk, int ranks, std::uint64_t bytes);

/** @brief Checks the values and the combination (servers >= 1, inter algorithm flat, ...); throws ConfigError
 *  naming the field. `given` lists the fields the user set (ps_servers, chunk_bytes, ...): one that no algorithm of
 *  `spec` reads is refused. */
void check_options(const AlgorithmSpec& spec, const CollectiveOptions& options, const std::vector<std::string>& given);

/** @brief The collective of `spec` (a SizeSwitch for several choices). Options must have passed check_options. */
std::unique_ptr<Collective> make_collective(const AlgorithmSpec& spec, const CollectiveOptions& options);

/** @brief Closed-form time of an allreduce of `bytes` under `spec` (exact where docs/collectives.md says so);
 *  throws ConfigError when the chosen algorithm has none for this setup. */
double closed_form_s(const AlgorithmSpec& spec, std::uint64_t bytes, const ClosedFormInput& in);
/** @brief A lower bound of closed_form_s(spec, bytes, in) (0 where the algorithm has none), for searches that would
 *  evaluate closed_form_s many times (mgwfbp's planner). Throws as closed_form_s where that has none. */
double closed_form_floor_s(const AlgorithmSpec& spec, std::uint64_t bytes, const ClosedFormInput& in);

/** @brief The formula of `spec`, for table headers. */
std::string formula(const AlgorithmSpec& spec);

} // namespace ddlsim::collectives
