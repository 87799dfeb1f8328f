// One small interface for gradient aggregation algorithms, and the endpoints they run over.
#pragma once

#include "analytical/alpha_beta.hpp"
#include "collectives/options.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddlsim::collectives {

/** @brief The endpoints of one simulation phase: ranks 0..P-1 (GPUs), then any extra endpoints (parameter
 *  servers), their hosts, mailboxes and traffic counters. Every transfer goes through this class, which
 *  adds the per-message costs of the stack (overheads, copies, rendezvous; its size factors act in SimGrid's network
 *  model) and counts the bytes. */
class CommWorld {
public:
  /** `tag` keeps the mailboxes of different phases apart; `node_of_rank` groups ranks by node (hier). */
  CommWorld(std::vector<simgrid::s4u::Host*> ranks, std::vector<int> node_of_rank, CollectiveOptions options,
            std::string tag);

  int size() const { return ranks_; }
  int endpoints() const { return static_cast<int>(hosts_.size()); }
  simgrid::s4u::Host* host(int endpoint) const { return hosts_[endpoint]; }
  int node(int rank) const { return node_of_rank_[rank]; }
  const CollectiveOptions& options() const { return options_; }

  /** Adds an endpoint (e.g. a parameter server) on `host`; returns its id (>= size()). */
  int add_endpoint(simgrid::s4u::Host* host);

  /** Sends `send_bytes` to `to` and receives one message from `from`, concurrently. Messages between a pair
   *  of endpoints are matched in order within a channel; algorithms that run several streams at once (the
   *  double binary tree) give each its own channel. */
  void send_recv(int self, int to, std::uint64_t send_bytes, int from, int channel = 0);
  /** Blocking send / receive. */
  void send(int self, int to, std::uint64_t bytes, int channel = 0);
  void recv(int self, int from, int channel = 0);
  /** Posts every send (each after its overhead, unless `overhead` is false: the caller charged it) and every
   *  receive, then waits for all of them. */
  void exchange(int self, const std::vector<std::pair<int, std::uint64_t>>& sends, const std::vector<int>& from,
                bool overhead = true, int channel = 0);
  /** Reduction of `bytes` by this endpoint: reduce_s_per_byte x bytes seconds (nothing if 0). */
  void reduce(int self, std::uint64_t bytes);

  /** Latency and bottleneck bandwidth of the route between two endpoints. */
  analytical::Hop route(int from, int to) const;
  /** Names of the links the route between two endpoints crosses, in order. */
  std::vector<std::string> route_link_names(int from, int to) const;
  /** How many allreduce calls `endpoint` made on `lane` before this one (for per-tensor round-robin placement). */
  std::uint64_t next_call(int endpoint, int lane = 0) { return calls_[endpoint * kMaxLanes + lane]++; }

  /** The channels of the concurrent aggregation lanes (communication streams) of this phase; lane k's aggregations
   *  are entries k, k + lanes(), ... of the sequence given to Collective::start. Default: one lane, channel 0. */
  void set_lane_channels(std::vector<int> channels);
  int lanes() const { return static_cast<int>(lane_channels_.size()); }
  int lane_channel(int lane) const { return lane_channels_[lane]; }
  /** The lane whose group uses `channel` (0 for a channel no lane uses). */
  int lane_of_channel(int channel) const;
  /** Most lanes a phase may have. */
  static constexpr int kMaxLanes = 64;

  std::uint64_t bytes_sent(int endpoint) const { return sent_[endpoint]; }
  std::uint64_t bytes_received(int endpoint) const { return received_[endpoint]; }
  std::uint64_t messages_sent(int endpoint) const { return messages_[endpoint]; }

  /** @brief The CPU host of an endpoint's node, as --pcie-contention and --cpu-contention read it (set by the engine;
   *  host_staging.cpp). */
  struct NodeCpu {
    simgrid::s4u::Host* host = nullptr; ///< nullptr: none (the options then have nothing to act on)
    double core_flops = 0;              ///< FLOP/s of one of its cores (CPU catalogue)
    bool device = false;                ///< the endpoint is a GPU whose PCIe link leads to `host`
    int input_sharers = 1;              ///< ranks of the phase whose input pipelines run on `host`
  };
  void set_node_cpu(int endpoint, NodeCpu cpu);
  /** The endpoint's node CPU (an empty NodeCpu when none was set). */
  NodeCpu node_cpu(int endpoint) const;
  /** `seconds` of CPU time of `endpoint`: with cpu_contention an execution of one core on its node's CPU host, which
   *  it shares with the input pipeline and other overheads; otherwise (or without a CPU host) a sleep. */
  void cpu_work(int endpoint, double seconds) const;

  /** Called after every transfer completes (sender side): endpoints, bytes, start and end time, channel. */
  using TransferFn =
      std::function<void(int from, int to, std::uint64_t bytes, double start_s, double end_s, int channel)>;
  void on_transfer(TransferFn fn) { on_transfer_ = std::move(fn); }

private:
  void transferred(int self, int to, std::uint64_t bytes, int channel, const simgrid::s4u::CommPtr& comm) const;
  simgrid::s4u::Mailbox* mailbox(int src, int dst, int channel);
  simgrid::s4u::CommPtr post_send(int self, int to, std::uint64_t bytes, bool overhead, int channel);
  /** The stack's rendezvous round trip before a large message from `self` to `to`, seconds. */
  double handshake_s(int self, int to) const;
  /** The stack's receive overhead for `count` messages received, slept by the receiver. */
  void received(int count);
  // With pcie_contention or cpu_contention (host_staging.cpp): the same steps, with the staging copies as transfers
  // over the PCIe link and the overheads as CPU work; the payload pointer carries the message size to the receiver.
  simgrid::s4u::CommPtr post_send_contended(int self, int to, std::uint64_t bytes, bool overhead, int channel);
  void received_contended(int self, const std::vector<char*>& payloads);
  bool staged(int endpoint) const;

  int ranks_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<int> node_of_rank_;
  CollectiveOptions options_;
  std::string tag_;
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::vector<std::uint64_t> sent_;
  std::vector<std::uint64_t> received_;
  std::vector<std::uint64_t> messages_;
  std::vector<std::uint64_t> calls_; ///< [endpoint * kMaxLanes + lane]
  std::vector<int> lane_channels_{0};
  TransferFn on_transfer_;
  bool contended_ = false; ///< pcie_contention or cpu_contention
  std::vector<NodeCpu> node_cpus_;
};

/** @brief Some endpoints of a CommWorld seen as ranks 0..n-1: flat algorithms run over a Group, so the
 *  hierarchical one can run them among node leaders. */
class Group {
public:
  Group(CommWorld& world, std::vector<int> members, int channel = 0)
      : world_(world)
      , members_(std::move(members))
      , channel_(channel)
  {
  }
  /** Every rank of the world, in order. */
  explicit Group(CommWorld& world);

  int size() const { return static_cast<int>(members_.size()); }
  int endpoint(int member) const { return members_[member]; }
  CommWorld& world() const { return world_; }
  const CollectiveOptions& options() const { return world_.options(); }

  int channel() const { return channel_; }
  const std::vector<int>& members() const { return members_; }

  void send_recv(int self, int to, std::uint64_t bytes, int from)
  {
    world_.send_recv(members_[self], members_[to], bytes, members_[from], channel_);
  }
  void send(int self, int to, std::uint64_t bytes) { world_.send(members_[self], members_[to], bytes, channel_); }
  void recv(int self, int from) { world_.recv(members_[self], members_[from], channel_); }
  void reduce(int self, std::uint64_t bytes) { world_.reduce(members_[self], bytes); }
  analytical::Hop route(int from, int to) const { return world_.route(members_[from], members_[to]); }
  /** True when algorithm `id` runs its flow-level form on this group: Fidelity::Flow for any algorithm with one,
   *  Fidelity::Auto as its FlowForm says (algorithm_table.hpp). */
  bool use_flow(AlgorithmId id) const;
  /** Largest route latency between ring neighbours i -> i+1 (computed once per group). */
  double ring_max_latency();

private:
  CommWorld& world_;
  std::vector<int> members_;
  int channel_ = 0;
  double ring_max_latency_ = -1;
};

/** @brief An allreduce algorithm. Every rank calls allreduce() for the same tensors in the same order. */
class Collective {
public:
  virtual ~Collective() = default;
  /** Called once per phase before the simulation runs (outside any actor): add endpoints, check hosts.
   *  Throws ConfigError. */
  virtual void prepare(CommWorld& /*world*/) const {}
  /** Called once per phase before the ranks start, with every tensor size the ranks will reduce, in
   *  order; algorithms with helper actors (parameter servers) start them here and return them. */
  virtual std::vector<simgrid::s4u::ActorPtr> start(CommWorld& /*world*/,
                                                    const std::vector<std::uint64_t>& /*sequence*/) const
  {
    return {};
  }
  /** Runs member `self`'s part of an allreduce of `bytes` bytes over `group`; returns when it holds the result. */
  virtual void allreduce(Group& group, int self, std::uint64_t bytes) const = 0;
};

/** @brief True for a transfer between a GPU endpoint and its node's CPU host that is a staging copy
 *  (--pcie-contention) rather than a message of the stack: the stack's size factors do not apply to it. A CPU host
 *  that is itself an endpoint (a parameter server) is never registered: its messages keep the factors. */
bool is_staging_copy(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst);

/** @brief Byte size of chunk `index` when `bytes` is cut into `parts` nearly equal chunks (the first
 *  bytes % parts chunks get one byte more). */
std::uint64_t chunk_bytes(std::uint64_t bytes, std::uint64_t parts, std::uint64_t index);

} // namespace ddlsim::collectives
