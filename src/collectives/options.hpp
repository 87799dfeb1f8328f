// The knobs of the aggregation algorithms as plain data (no SimGrid): what the command line resolves and the
// collectives read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::collectives {

/** @brief The allreduce algorithms ddlsim simulates; their properties are rows of algorithm_table.hpp. */
enum class AlgorithmId { Ring, Rd, Hd, Tree, Dbtree, Hier, Ps, NcclRing, NcclTree, Nccl };

/** @brief The algorithm used when none is chosen (--algorithm, hier's inter algorithm). */
inline constexpr AlgorithmId kDefaultAlgorithm = AlgorithmId::Ring;

/** @brief How parameter-server shards are laid out. */
enum class PsSharding {
  Split,     ///< every tensor cut into S byte ranges, one per server
  RoundRobin ///< tensor k goes whole to server k mod S
};

/** @brief Where the optimizer update runs with parameter servers. */
enum class PsUpdate {
  Worker, ///< servers only sum; every worker updates its own copy (the exact default model)
  Server  ///< servers sum and update on their host; workers pull parameters and run no update of their own
};

/** @brief The optimizer a parameter server runs (its per-byte cost: server_update.hpp, docs/frameworks.md). */
enum class Optimizer { Sgd, Momentum, Adam };

/** @brief What the engine read from the platform about one server's host: compute speed and memory bandwidth. */
struct ServerRate {
  double flops = 0;              ///< FLOP/s (the host's speed: catalogue peak)
  double memory_bytes_per_s = 0; ///< bytes/s (the host's catalogue entry, CPU or GPU)
};

/** @brief Whether an algorithm moves every message (the reference) or one flow per rank and phase (cheap). */
enum class Fidelity {
  Auto,    ///< each algorithm's own rule (its FlowForm in the algorithm table)
  Message, ///< every message of the algorithm is a transfer
  Flow,    ///< one flow per rank and phase, plus the other steps' latencies at the slowest hop
  Steps    ///< every message a transfer, every rank's step s together after every rank's step s-1 (ring, rd, hd)
};

/** @brief With Fidelity::Auto, groups larger than this use a FlowForm::Auto form (docs/collectives.md). */
inline constexpr int kFlowAboveRanks = 64;

/** @brief A factor for messages larger than `above_bytes` (SMPI's "threshold:value" form). */
struct SizeFactor {
  std::uint64_t above_bytes = 0;
  double value = 1;
};

/** @brief What a communication library adds to the wire (proto/stack.proto; docs/stacks.md). The default is the
 *  `ideal` stack: nothing, every message costs exactly its route's latency plus size over bandwidth. */
struct StackProfile {
  std::string name = "ideal";
  std::string source; ///< the file it was read from (empty: built in)
  double send_overhead_s = 0;
  double recv_overhead_s = 0;
  double copy_s_per_byte = 0;               ///< per byte of every message, charged by the sender
  double call_overhead_s = 0;               ///< per allreduce call and rank
  double call_copy_s_per_byte = 0;          ///< per allreduce call and rank, per byte of the vector
  std::vector<SizeFactor> latency_factor;   ///< ascending above_bytes; empty: 1
  std::vector<SizeFactor> bandwidth_factor; ///< ascending above_bytes; empty: 1
  std::uint64_t rendezvous_above_bytes = 0; ///< 0: every message eager
  bool host_staged = false;                 ///< GPU buffers copied through host memory (--pcie-contention)
  double pcie_copy_s_per_byte = 0;          ///< the part of copy_s_per_byte those PCIe copies stand for

  /** True for the exact alpha-beta model (no mechanism set): the closed forms and flow forms hold. */
  bool ideal() const
  {
    return send_overhead_s == 0 && recv_overhead_s == 0 && copy_s_per_byte == 0 && call_overhead_s == 0 &&
           call_copy_s_per_byte == 0 && latency_factor.empty() && bandwidth_factor.empty() &&
           rendezvous_above_bytes == 0;
  }
  /** True when a sender pays time before each message (CommWorld::send_cost_s: its overhead, its copy, a rendezvous
   *  round trip), so that one sender's messages leave one after the other. */
  bool sends_cost() const { return send_overhead_s > 0 || copy_s_per_byte > 0 || rendezvous_above_bytes > 0; }
  /** True when a message of `bytes` waits for a rendezvous round trip before it is sent. */
  bool rendezvous(std::uint64_t bytes) const { return rendezvous_above_bytes > 0 && bytes > rendezvous_above_bytes; }
};

/** @brief The factor of `factors` for a message of `bytes` (1 below the first threshold), as SMPI reads it. */
inline double factor_for(const std::vector<SizeFactor>& factors, double bytes)
{
  double f = 1;
  for (const auto& s : factors)
    if (bytes > double(s.above_bytes))
      f = s.value;
  return f;
}

/** @brief Knobs shared by the algorithms; defaults model an ideal stack over the wires. */
struct CollectiveOptions {
  double msg_overhead_s = 0;     ///< software overhead added before every message is sent, seconds
  double reduce_s_per_byte = 0;  ///< reduction cost, seconds per byte (a fixed time: no contention with compute)
  std::uint64_t chunk_bytes = 0; ///< pipelining chunk; 0: the algorithm's default (algorithm table)
  /// Chunks per collective (--chunks; excludes chunk_bytes): ring N slices, trees chunks of ceil(M/N) bytes; 0: none
  std::uint32_t chunks = 0;
  AlgorithmId inter_algorithm = kDefaultAlgorithm; ///< hier: flat algorithm among node leaders
  int ps_servers = 1;                              ///< ps: number of servers
  std::vector<std::string> ps_hosts;               ///< ps: server hosts; empty: co-located on ranks 0..S-1
  PsSharding ps_sharding = PsSharding::Split;
  PsUpdate ps_update = PsUpdate::Worker;     ///< ps: where the update runs
  Optimizer optimizer = Optimizer::Momentum; ///< ps with PsUpdate::Server: the update's cost per byte
  std::vector<ServerRate> ps_rates;          ///< ps with PsUpdate::Server: per server (filled by the engine)
  Fidelity fidelity = Fidelity::Auto;
  /// The ring's flow form (ring, nccl-ring) is posted by the members themselves above this many ranks, by one driver
  /// up to it (docs/collectives.md, "Who posts the flows": measured crossover on this machine between 1,024 and 2,048
  /// ranks). Not a command-line option: the tests set it to run either way.
  int member_flows_above_ranks = 1024;
  StackProfile stack; ///< per-message and per-call costs of the communication library (default: ideal)
  /// Share of a GPU's compute speed an aggregation on that GPU takes while it runs, in [0, 1) (0: none;
  /// docs/frameworks.md, interference); read by the engine only.
  double gpu_interference = 0;
  /// --gpu-interference auto: each GPU's share is NCCL's rings / its SM count (docs/frameworks.md); read by the engine.
  bool gpu_interference_auto = false;
  /// The input's host-to-device copy, and a host-staged stack's staging copies, as transfers over the GPU's PCIe link
  /// from and to its node's CPU host (docs/frameworks.md, interference). Off: fixed times (the exact model).
  bool pcie_contention = false;
  /// The stack's per-message overheads, and the input pipeline's loading, as executions on the node's CPU host (one
  /// core per overhead; docs/frameworks.md, interference). Off: fixed times (the exact model).
  bool cpu_contention = false;

  /** True when a sender pays time before each message (CommWorld::send_cost_s: the message overhead, or the stack's
   *  StackProfile::sends_cost), so that one sender's messages leave one after the other. */
  bool senders_pay() const { return msg_overhead_s > 0 || stack.sends_cost(); }
};

} // namespace ddlsim::collectives
