// One small interface for gradient aggregation algorithms, and the endpoints they run over.
#pragma once

#include "analytical/alpha_beta.hpp"
#include "analytical/fluid_network.hpp"
#include "collectives/options.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddlsim::collectives {

/** @brief One transfer of a flow-level plan: `bytes` from endpoint `from` to endpoint `to` (CommWorld ids). */
struct Flow {
  int from;
  int to;
  std::uint64_t bytes;
  /// The size of each message the flow stands for, whose latency and bandwidth factors the stack's size factors give
  /// the flow (the ring's flow form: one flow carries 2(P-1) chunks); 0: the flow is one message of `bytes`.
  std::uint64_t message_bytes = 0;
};

/** @brief What SimGrid 3.32's CM02 model makes of a transfer of `bytes` that is a message of `message_bytes` over a
 * route of latency `route_latency_s` and narrowest link `route_bandwidth` (src/surf/network_cm02.cpp, communicate and
 *  comm_action_set_bounds), as ddlsim's own network takes it: the latency times the stack's latency factor of the
 * message size, the sharing penalty the route's latency (1 where there is no wait), the bound the narrowest link, the
 * work the bytes over the bandwidth factor (the progress the share times it: install_factors). Sets those fields of
 * `spec`; its links and tag are the caller's. */
void set_cm02(analytical::FluidNetwork::FlowSpec& spec, const StackProfile& stack, double route_latency_s,
              double route_bandwidth, double message_bytes, double bytes);

/** @brief The endpoints of one simulation phase: ranks 0..P-1 (GPUs), then any extra endpoints (parameter
 *  servers), their hosts, mailboxes and traffic counters. Every transfer goes through this class, which
 *  adds the per-message costs of the stack (overheads, copies, rendezvous; its size factors act in SimGrid's network
 *  model) and counts the bytes. */
class CommWorld {
public:
  struct Route; // (below)
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
  /** Flow level, from one actor (a flow plan's driver): starts every flow at once as a host-to-host transfer (no
   *  mailbox, no receiver actor), waits for all of them, then counts and reports each like a message. In a solo
   *  world (set_solo) the flows that share links form components, and of components that SimGrid's model cannot tell
   *  apart (the same bytes, latencies and bandwidths, sharing the same way) it runs one and gives the others its
   *  times (docs/performance.md): a ring on a uniform cluster is a handful of SimGrid flows, not one per rank. */
  void run_flows(const std::vector<Flow>& flows);
  /** Flow level, one step of messages (rd's and hd's steps, the fold of a group that is not a power of two): every
   *  flow is one message, and the step costs what its slowest message costs at message level: before the flows the
   *  overhead (msg_overhead_s), the stack's send overhead, its copy and, above its eager limit, the rendezvous round
   *  trip; after them the stack's receive overhead. The stack's size factors SimGrid applies to each flow as to the
   *  message. On a uniform platform every message of a step costs the same: the message level exactly. */
  void run_step(const std::vector<Flow>& flows);
  /** What the sender of a message of `bytes` from `from` to `to` spends before it is posted (outside staging copies
   *  and CPU contention, as post_send charges it): the overhead (msg_overhead_s), the stack's send overhead and copy
   *  and, above its eager limit, the rendezvous round trip over their route (`cached`: cached_route(from, to), where
   * the caller has it at hand; otherwise looked up). */
  double send_cost_s(int from, int to, std::uint64_t bytes, const Route* cached = nullptr) const;
  /** send_cost_s in a solo world for a message over a route whose latency the caller holds (`route_latency_s`, its
   *  Route::latency_s: a solo world's cached routes' latencies hold, handshake_s), without reading the route. An
   *  internal error outside a solo world. */
  double solo_send_cost_s(std::uint64_t bytes, double route_latency_s) const;
  /** Counts and reports a transfer that a flow form's own model timed (tree_flow_plan), from `start_s` to `end_s`
   *  (absolute), on the calling driver's channel; SimGrid does not run it (its load, where other traffic may meet
   *  it, goes through load()). */
  void account(const Flow& flow, double start_s, double end_s);
  /** The channel the calling actor's flows report (set_driver_channel; 0 if none). */
  int driver_channel() const;
  /** Solo world only: runs `flows`, flow i starting at `post_at[i]` (absolute simulated seconds, in the past or the
   *  future), where flows started at different times never share a link with each other unless in one component
   *  (flows joined by shared links) whose times are its own: each component runs as if alone from its earliest start.
   *  SimGrid runs one component of each class (the same shape, sizes and start offsets) from its start, or from now
   *  where that is past, each flow posted at its offset, and every flow of the class takes its representative's times
   *  shifted to its component's start. Counts and reports every flow at those times; returns when each ends
   *  (absolute; some may end later than it returns). The caller guarantees that nothing else uses these links at
   *  those times (a plan run member-timed: Hierarchical's gather and scatter, each node on links of its own; or
   *  hier's flow form in a solo world, where its flows are all the network carries). */
  std::vector<double> run_timed(const std::vector<Flow>& flows, const std::vector<double>& post_at);
  /** Solo world only (set_solo; false and nothing done otherwise): runs flows started together as run_flows would,
   *  but a component (flows joined by shared links) whose flows carry one size over routes of one latency at one
   *  max-min rate (max_min_rates) is computed, not run: each of its flows ends at latency + bytes / rate, all at once,
   *  no rate changing while they run, as in SimGrid's model. The other components are computed in ddlsim's own
   *  network where their fat pipes allow (posted_fluid), and run by SimGrid where not; every flow is counted and
   *  reported (account for the computed ones); returns when all have ended. For plans whose components no class
   *  collapses (a parameter server's incast of P flows, whose completions SimGrid 3.32 pays O(P) each:
   *  docs/performance.md). */
  bool run_alike(const std::vector<Flow>& flows);
  /** Solo world only (false and nothing done otherwise): runs `flows`, flow i posted `after[i]` seconds from now, as
   *  run_staggered would, but a component whose flows carry one size (and message size) over routes of one latency
   *  that all cross one link, the narrowest of each route, is computed, not run: in SimGrid's model each flow waits its
   *  latency (times the stack's latency factor), then the flows past their latency share that link equally (max-min
   *  with equal weights: no other link of theirs is narrower, so none binds), each progressing at its share times the
   *  bandwidth factor (analytical::processor_sharing_ends). Any other component is computed in ddlsim's own network
   *  (posted_fluid) where its fat pipes allow (fluid_exact), and run by SimGrid, posted at its times, where not; every
   *  flow is counted and reported; returns when all have landed. For a parameter server's incast posted one message
   *  after the other, whose every post and completion SimGrid 3.32 re-solves over all the flows in flight
   *  (docs/performance.md). The caller guarantees that nothing else uses these links meanwhile. */
  bool run_incast(const std::vector<Flow>& flows, const std::vector<double>& after);
  /** Runs `flows` in SimGrid, all at once, and waits for them, neither counting nor reporting them: the load of a flow
   *  form whose transfers are accounted by its model (account), for the other traffic that shares their links.
   *  Mirrored (set_mirror, which must have been told of these flows): one component per class, as run_flows. */
  void load(const std::vector<Flow>& flows);
  /** Solo: nothing but the flows of the run_flows call running uses the network while it runs (one communication
   *  stream, its plans run one at a time by one actor or Group::flow_call's driver, no other traffic:
   *  engine/phase.cpp), and the network model is SimGrid's exact alpha-beta (a stack's size factors apply per flow
   *  size). Off by default. */
  void set_solo(bool solo) { solo_ = solo; }
  bool solo() const { return solo_; }
  /** Static links: no link's latency changes while the simulation runs (the platform has no profiles: a generated
   *  --cluster, or a file without any; Setup::static_links). A stack's rendezvous then reads each pair's route
   *  latency once, where a world that is not solo reads it afresh from SimGrid at every large message (handshake_s).
   *  Off by default. */
  void set_static_links(bool on) { static_links_ = on; }
  /** Mirrored lanes: for a world that is solo but for several lanes (communication streams) whose drivers run flow
   *  plans at once. `calls` lists the flows of every run_flows call the phase may make (any order, repeats allowed);
   *  calls between the same endpoints in the same order share a layout (hier: its gather, its leaders' ring, its
   *  scatter). The components are those of every layout's flows together (joined by shared links, whichever calls
   *  they come from), and components alike for every call (the same shape, the same layouts' flows in the same
   *  places, and the same bytes and message sizes in each call) form one class: SimGrid runs one component per class
   *  for every call, whichever lanes overlap, and the others take its times (run_flows). False, and nothing set, when
   *  no call or an empty one is given, or the world has staging copies or CPU work (pcie_contention,
   *  cpu_contention). `classes` false: every component its own class, every flow run (calls also posted apart,
   *  run_staggered, which needs the mirror computed). */
  bool set_mirror(const std::vector<std::vector<Flow>>& calls, bool classes = true);
  /** Forgets the mirror (none in flight: std::logic_error otherwise, as set_mirror). */
  void drop_mirror();
  bool mirrored() const { return mirror_ != nullptr; }
  /** Lanes solo: a world that is solo but for several in-order lanes, every one running the same collective's flow
   * plans, which are all the network carries (set by the phase while it asks for the calls to mirror, and kept where
   * they are mirrored: set_mirror). A symmetry of those plans' flows (symmetric_under) is then one of the whole
   * network's load at every instant. Off by default. */
  void set_lanes_solo(bool on) { lanes_solo_ = on; }
  bool lanes_solo() const { return lanes_solo_; }
  /** True when the endpoint permutation `perm` (endpoint e to perm[e], every endpoint listed) maps every endpoint's
   *  host onto one of the same speed (their tasks take the same nominal times), every set of `flow_sets` onto itself
   *  (the same flows, bytes and message sizes: a multiset) and every route of theirs onto the route of the image flow
   *  link for link: one bijection of the links they cross that keeps each link's bandwidth, and each route's latency,
   *  bandwidth and fat pipes. SimGrid's model (max-min with route-latency penalties) then gives a flow and its image
   *  the same times whenever the flows in flight are a union of orbits of such flows, and so does run_fluid. The
   *  caller must know that these flows are all the network carries (a lanes-solo world of one collective's plans). */
  bool symmetric_under(const std::vector<std::vector<Flow>>& flow_sets, const std::vector<int>& perm) const;
  /** Mirrored, and the lanes' flows computed by ddlsim's own network (run_fluid) rather than run in SimGrid. */
  bool computed() const { return mirror_ != nullptr && mirror_->computed; }
  /** Classes of components a mirrored world runs per call (0 when not mirrored). */
  std::size_t mirror_classes() const;
  /** run_flows in steps, outside a solo or mirrored world: starts `flows` now (counted), and the caller keeps their
   *  comms; finish_own waits for them and reports them (plans that stagger starts, or run flows from several actors
   *  at once). */
  std::vector<simgrid::s4u::CommPtr> start_own(const std::vector<Flow>& flows);
  void finish_own(const std::vector<Flow>& flows, const std::vector<simgrid::s4u::CommPtr>& comms);
  /** Posts flow i `after[i]` seconds from now, in order of time (start_own: one start per distinct time; several
   *  actors may call it at once), and returns when every flow has landed (finish_own): a plan whose senders post
   *  their messages one after the other (hier's and ps's flow forms outside a solo world). In a mirrored world the
   *  flows (a call set_mirror was told of) are computed in ddlsim's own network, posted at the same instants
   *  (run_fluid_staggered); a mirror of classes, or one SimGrid runs, cannot take them (std::logic_error: for a
   *  collective that posts apart, Collective::posts_apart, the phase sets a mirror without classes, kept where
   *  computed). */
  void run_staggered(const std::vector<Flow>& flows, const std::vector<double>& after);
  /** Runs `second` on a helper actor of `endpoint` while the calling actor runs `first`; returns when both are done (a
   *  member's two concurrent parts: the double binary tree's and NCCL's two trees). The helper is made once per
   *  endpoint and `key` (the caller's channel), on the endpoint's host, and kept for the phase (a daemon, blocked
   *  between calls) instead of one actor per call: making an actor maps and unmaps its stack (a quarter of nccl-tree's
   *  wall time at 256 GPUs, in the kernel). Waking it is two simcalls at the same simulated instant. */
  void fork_join(int endpoint, int key, const std::function<void()>& first, const std::function<void()>& second);
  /** Flow level: `delay_s` seconds on the calling actor (nothing for <= 0). */
  static void delay(double delay_s);
  /** Flow level: the calling actor until `t` (a plan's time, seconds); nothing if `t` is less than SimGrid's
   *  resolution (surf/precision) ahead of now: a sum that should be now may land a few 1e-16 s after it. */
  static void delay_until(double t);
  /** Reduction of `bytes` by this endpoint: reduce_s_per_byte x bytes seconds (nothing if 0). */
  void reduce(int self, std::uint64_t bytes);

  /** Latency and bottleneck bandwidth of the route between two endpoints. */
  analytical::Hop route(int from, int to) const;
  /** A route as the network model sees it: the links whose bandwidth flows share (all but fat pipes), its latency
   *  (the sum of its links') and its narrowest link's bandwidth. Computed once per pair (the engine's link log
   *  reads its links too; route() reads latency and bandwidth afresh, as profiles may change them). */
  struct Route {
    std::vector<const simgrid::s4u::Link*> shared;
    std::vector<double> shared_bandwidth;  ///< of each link of `shared`
    std::vector<std::uint32_t> shared_ids; ///< of each link of `shared`: its number in this world (from 0, dense)
    double latency_s = 0;
    double bandwidth = 0;
    std::vector<const simgrid::s4u::Link*> fat; ///< the fat pipes it crosses (each limits a flow, not their sum)
  };
  const Route& cached_route(int from, int to) const;
  /** True when FluidNetwork computes flows over `routes` as SimGrid's model does (no fat pipe crossed by routes of
   *  different latencies: Mirror::computed). */
  static bool fluid_exact(const std::vector<const Route*>& routes);
  /** cached_route for the transfer on_transfer is reporting (from its caller when it has it: no lookup). */
  const Route& transfer_route(int from, int to) const;
  /** account() with the flow's route (cached_route(flow.from, flow.to)) and the channel it reports at hand (the
   *  driver's driver_channel()): no lookup per transfer. */
  void account(const Flow& flow, double start_s, double end_s, const Route& route, int channel);
  /** The rate (bytes/s) each transfer (from, to) of `ends` gets from max-min sharing of the links it crosses, were
   *  they all running with nothing else on the network: SimGrid's sharing (every link's bandwidth split fairly among
   *  the transfers it limits, a fat pipe limiting each alone) frozen at one instant, without its latency phases and
   *  without the rates rising as transfers end. */
  std::vector<double> max_min_rates(const std::vector<std::pair<int, int>>& ends);
  /** True when the transfers `ends`, started together, have routes of one latency and get one finite max-min rate
   *  (max_min_rates; equal to 1e-12): none changes rate before all end together, at latency + bytes / rate for equal
   *  bytes, in SimGrid's model too. `rates`, if given, receives their rates (filled also when false). */
  bool alike(const std::vector<std::pair<int, int>>& ends, std::vector<double>* rates = nullptr);
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
  /** The channel the flows started by the calling actor report to on_transfer (Group::flow_call sets it for its
   *  driver; several lanes' drivers may run at once, each in its own actor). */
  void set_driver_channel(int channel);
  void clear_driver_channel();
  /** Most lanes a phase may have. */
  static constexpr int kMaxLanes = 64;

  /** Records that Fidelity::Auto ran `id`'s flow form because it equals the message level here (exact_flow_form). */
  void note_exact_form(AlgorithmId id) { exact_forms_.insert(id); }
  const std::set<AlgorithmId>& exact_forms() const { return exact_forms_; }
  /** Records that Fidelity::Auto ran `id` as one program of the message level's transfers in ddlsim's network
   *  (TreeStream), where aggregations in flight together may share links: the same transfers and max-min shares as
   *  SimGrid's, but ties a nanosecond apart grow through those shares by a different path (docs/collectives.md,
   *  "Equality, and what it means"), so the report does not call it equal. */
  void note_computed_form(AlgorithmId id) { computed_forms_.insert(id); }
  const std::set<AlgorithmId>& computed_forms() const { return computed_forms_; }

  std::uint64_t bytes_sent(int endpoint) const { return sent_[endpoint]; }
  /** Host-to-host transfers handed to SimGrid so far (the flow forms'; SimGrid 3.32 signals none of them). */
  std::uint64_t flows_posted() const { return flows_posted_; }
  /** Flows a mirrored world ran in its own network instead of SimGrid (run_fluid) so far. */
  std::uint64_t flows_computed() const { return flows_computed_; }
  /** Counts flows a plan computed in ddlsim's own network itself (outside run_fluid). */
  void note_computed(std::uint64_t flows) { flows_computed_ += flows; }
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
  /** @brief The links a plan's flows cross (those flows share, Route::shared_ids), each with the flows that cross it:
   *  link k is ids[k] (links[k]), crossed by flows[offsets[k]] .. flows[offsets[k + 1] - 1] (indices in plan order). */
  struct LinkFlows {
    std::vector<std::uint32_t> ids;
    std::vector<const simgrid::s4u::Link*> links;
    std::vector<std::uint32_t> offsets;
    std::vector<std::uint32_t> flows;
  };
  /** @brief The flows of one run_flows call in a solo world, all started at `start_s`, reported together. */
  struct TransferBatch {
    const std::vector<Flow>& flows;
    double start_s;
    const std::vector<double>& end_s;        ///< per flow
    const std::vector<const Route*>& routes; ///< per flow
    const LinkFlows& links;
    int channel;
  };
  /** Called instead of on_transfer for the flows of a run_flows call in a solo world, all at once (set both: the
   *  others go to on_transfer one by one). */
  using TransfersFn = std::function<void(const TransferBatch&)>;
  void on_transfers(TransfersFn fn) { on_transfers_ = std::move(fn); }
  /** Per link of `routes`, the flows (indices) that cross it. */
  static LinkFlows link_flows_of(const std::vector<const Route*>& routes);
  /** account() for flows that all started at `start_s` (their routes and link_flows_of them at hand): one batch to
   *  on_transfers where it is set. */
  void account_batch(const std::vector<Flow>& flows, double start_s, const std::vector<double>& end_s,
                     const std::vector<const Route*>& routes, const LinkFlows& links, int channel);

private:
  /** Reports a transfer to on_transfer (`route`: its route, when the caller has it at hand: transfer_route). */
  void transferred(int self, int to, std::uint64_t bytes, int channel, const simgrid::s4u::CommPtr& comm,
                   const Route* route = nullptr) const;
  /** Reports a transfer to on_transfer (if set) from `start_s` to `end_s`, with its route at hand (transfer_route). */
  void report(int from, int to, std::uint64_t bytes, double start_s, double end_s, int channel,
              const Route* route) const;
  mutable const Route* reporting_ = nullptr; ///< while on_transfer runs: the transfer's route, if known

  /** Counts a flow's bytes and message for its endpoints. */
  void count(const Flow& f);
  /** Hands `flows` to SimGrid as host-to-host transfers, all started in one simcall (uncounted). */
  std::vector<simgrid::s4u::CommPtr> post(const std::vector<Flow>& flows);
  /** The flows whose routes are `routes` joined by the links they share (indices, in plan order): run_flows' components
   *  in a solo world, and max_min_rates'. */
  std::vector<std::vector<std::size_t>> flow_components(const std::vector<const Route*>& routes);
  /** What run_flows needs of a plan that depends on its flows' endpoints alone: their routes, their components, and
   *  per component the number of its shape (component_shape). */
  struct PlanShape {
    std::vector<std::pair<int, int>> ends; ///< (from, to) of every flow, in plan order
    std::vector<const Route*> routes;
    std::vector<std::vector<std::size_t>> components;
    std::vector<std::uint32_t> shape_of;
    /** run_alike: per flow its max-min rate, and per component whether its flows are alike (CommWorld::alike); the
     *  endpoints decide both. */
    mutable std::vector<double> rates;
    mutable std::vector<char> alike; ///< per component (empty: not computed yet)
    /** run_incast: per component the bandwidth of a link all its flows cross that is the narrowest of each of their
     *  routes, where their routes have one latency (CommWorld::shared_narrowest); 0 where not (empty: not computed). */
    mutable std::vector<double> incast;
    mutable LinkFlows links; ///< for TransferBatch (empty ids and offsets: not computed yet)
    std::size_t layout = 0;  ///< set_mirror's layouts: its number
    /** A computed mirror's layout (set_mirror): per flow what run_fluid reads of its route, in one array, its links'
     *  numbers in `fluid_links` (contiguous, where the routes themselves lie scattered in memory). */
    struct FluidRoute {
      std::uint32_t first = 0, count = 0; ///< its links: fluid_links[first, first + count)
      double latency_s = 0;
      double bandwidth = 0;
    };
    std::vector<FluidRoute> fluid;
    std::vector<std::uint32_t> fluid_links;
    /** True when `flows` are between `ends`, in order. */
    bool has_ends(const std::vector<Flow>& flows) const;
  };
  /** A shape with the ends and routes of `flows`, nothing else yet (plan_shape and set_mirror add components). */
  std::unique_ptr<PlanShape> routed_shape(const std::vector<Flow>& flows);
  /** The shape's LinkFlows, computed the first time they are asked for. */
  const LinkFlows& link_flows(const PlanShape& shape) const;
  /** The shape of the plan of `flows`, computed the first time its endpoints are seen (a collective runs the same
   *  plans for every tensor). */
  const PlanShape& plan_shape(const std::vector<Flow>& flows);
  /** The bandwidth of a link every flow of `component` crosses that is the narrowest of each of their routes, where
   *  those routes have one latency (run_incast); 0 where there is none. */
  double shared_narrowest(const PlanShape& shape, const std::vector<std::size_t>& component) const;
  /** run_incast's other components: `component` of `flows` posted as run_staggered posts them from `now` (in order
   *  of `after`, one wake-up per distinct offset, none below SimGrid's resolution after the last), computed in a
   *  FluidNetwork (SimGrid's CM02 model, its clock's 1 ns steps) instead of run; each flow reported, `last` raised to
   *  the latest end. False (nothing done) where a fat pipe is crossed by routes of different latencies. */
  bool posted_fluid(const std::vector<Flow>& flows, const std::vector<std::size_t>& component,
                    const std::vector<double>& after, double now, const PlanShape& shape, double& last);
  /** What SimGrid's model sees of a component but its flows' sizes, into signature_ (with equal sizes, equal shapes
   *  are identical subsystems). */
  void component_shape(const std::vector<const Route*>& routes, const std::vector<std::size_t>& component);
  std::unordered_map<std::uint64_t, std::vector<std::unique_ptr<PlanShape>>> plan_shapes_; ///< by endpoints' hash
  std::unordered_map<std::string, std::uint32_t> shape_ids_; ///< component_shape -> its number
  std::size_t shapes_kept_ = 0;
  static constexpr std::size_t kMaxPlanShapes = 4096; ///< plan shapes kept at most (then forgotten, and relearnt)
  /** A new stamp for the per-link scratch arrays (sized to the links numbered so far). */
  void next_stamp();
  mutable std::unordered_map<const simgrid::s4u::Link*, std::uint32_t> link_ids_; ///< Route::shared_ids
  std::vector<std::uint32_t> link_stamp_; ///< per link number: the stamp of the call that last set link_owner_
  std::vector<std::size_t> link_owner_;   ///< per link number: flow_components' first flow, signature's local number
  std::uint32_t stamp_ = 0;
  std::string signature_; ///< a component's signature or shape (kept: no allocation per component)
  /** Appends the bytes of `value` to signature_. */
  template <class T>
  void sign(const T& value)
  {
    signature_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  /** Appends the bytes and message size of each flow of `component` (indices into `flows`) to signature_. */
  void sign_sizes(const std::vector<Flow>& flows, const std::vector<std::size_t>& component);
  bool solo_ = false;
  bool lanes_solo_ = false;
  bool static_links_ = false;
  /// Static links, not solo: each pair's route latency as SimGrid sums it, (from << 32 | to) -> seconds (handshake_s;
  /// apart from routes_, whose first use numbers the links the link log reads)
  mutable std::unordered_map<std::uint64_t, double> route_latency_;
  /** set_mirror's plan: per layout (calls between the same endpoints) its shape, whose components are the union
   *  components (every layout's flows joined by shared links) restricted to the layout's flows (some empty), and per
   *  union component the first component of its class (its representative). */
  struct Mirror {
    std::vector<std::unique_ptr<PlanShape>> layouts;
    std::vector<std::size_t> representative;
    std::uint32_t generation = 0; ///< mirror_generations_ when made
    /** Its flows run in ddlsim's own network (run_fluid), not in SimGrid: where that network is SimGrid's model
     *  exactly (set_mirror: no fat pipe crossed by routes of different latencies) and the tags fit. */
    bool computed = false;
    bool classes = true; ///< set_mirror's: components alike share a representative
  };
  std::unique_ptr<Mirror> mirror_;
  /** The high bits of the tags (analytical::FluidNetwork::FlowSpec::tag) of the mirror's layout `shape`'s flows: the
   *  mirror's generation and the layout; a flow's place in the layout fills the low 32 bits (PlanShape::fluid). */
  std::uint64_t layout_tag(const PlanShape& shape) const;
  /** The mirror's layout of `flows` (the same endpoints in the same order); std::logic_error if none. */
  const PlanShape& mirror_layout(const std::vector<Flow>& flows) const;
  /** The flows of `flows` SimGrid runs (`posted`) and, per component of `shape`, where its class's flows start in
   *  `posted`: one component per class of signatures (solo) or of set_mirror's classes (mirrored). */
  void choose_representatives(const std::vector<Flow>& flows, const PlanShape& shape, std::vector<Flow>& posted,
                              std::vector<std::size_t>& first, std::vector<const Route*>* posted_routes = nullptr,
                              std::vector<std::uint64_t>* posted_tags = nullptr);
  /** A mirrored world's network, computed instead of run in SimGrid (analytical::FluidNetwork, as SimGrid's model
   *  runs flows): every lane's flows are all it carries (set_mirror), so no SimGrid activity shares its links. */
  struct Fluid;
  std::shared_ptr<Fluid> fluid_;
  /** Runs `flows` (of the mirror's layout `shape`; tags: analytical::FluidNetwork::FlowSpec::tag, the layout and
   *  each one's place in it, which picks its PlanShape::fluid) in fluid_ from now, with every other lane's flows in
   *  flight, and returns when the last has ended; returns each one's end (absolute). */
  std::vector<double> run_fluid(const std::vector<Flow>& flows, const PlanShape& shape,
                                const std::vector<std::uint64_t>& tags);
  /** run_staggered in a computed mirror: each flow of `flows` (a listed call's) started in fluid_ `after[i]` seconds
   *  from now, as run_staggered's actor posts it in SimGrid, every flow computed (no classes: their posts differ);
   *  reports each and returns when the last has ended. */
  void run_fluid_staggered(const std::vector<Flow>& flows, const std::vector<double>& after);
  /** fluid_, made the first time, with the capacity of every link numbered so far. */
  Fluid& fluid_ready();
  /** Flows started in fluid_ and not yet released (set_mirror may not drop the layouts they read). */
  bool fluid_in_flight() const;
  std::uint32_t mirror_generations_ = 0; ///< set_mirror calls that mirrored (tags of one never meet another's)
  struct Helper;                         ///< fork_join's helper of one endpoint and key
  std::unordered_map<std::uint64_t, std::shared_ptr<Helper>> helpers_;
  std::set<AlgorithmId> exact_forms_;
  std::set<AlgorithmId> computed_forms_;
  std::uint64_t flows_posted_ = 0;
  std::uint64_t flows_computed_ = 0;
  mutable std::unordered_map<std::uint64_t, Route> routes_; ///< (from << 32 | to) -> route (cached_route)
  simgrid::s4u::Mailbox* mailbox(int src, int dst, int channel);
  simgrid::s4u::CommPtr post_send(int self, int to, std::uint64_t bytes, bool overhead, int channel);
  /** The stack's rendezvous round trip before a large message from `self` to `to`, seconds (`cached`: as send_cost_s).
   */
  double handshake_s(int self, int to, const Route* cached = nullptr) const;
  /** What a sender spends before any message of `bytes` (send_cost_s without the rendezvous): the overhead
   *  (msg_overhead_s), the stack's send overhead and its copy. */
  double overhead_and_copy_s(std::uint64_t bytes) const;
  /** After `count` messages landed (their payload pointers): the stack's receive overhead (cpu_work), then, for a
   *  host-staged endpoint, the copies to the GPU. */
  void received(int self, char* const* payloads, std::size_t count);
  // --pcie-contention (host_staging.cpp): a host-staged endpoint's copies as transfers over its PCIe link; the payload
  // pointer carries the message size to the receiver (payload_of, bytes_of).
  bool staged(int endpoint) const;
  void stage_out(int self, std::uint64_t bytes);
  void stage_in(int self, char* const* payloads, std::size_t count);

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
  std::unordered_map<long, int> driver_channel_; ///< actor id -> channel (set_driver_channel)
  TransferFn on_transfer_;
  TransfersFn on_transfers_;
  bool contended_ = false; ///< pcie_contention or cpu_contention
  std::vector<NodeCpu> node_cpus_;
};

/** @brief Keys of Group::cached. */
enum CacheKey : int {
  kNcclRingLatencyKey = 1,
  kHierLayoutKey,
  kPsWorkersKey,
  kTreeFlowsKey,
  kDbtreeFlowsKey,
  kNcclTreeFlowsKey,
  kRdExactKey,
  kDbtreeGroupsKey,
  kNcclTreeGroupsKey,
  kTreeExactKey,
  kRdBlocksKey,
  kDbtreeLinksKey,
  kDbtreeComputedKey,
  kNcclTreeLinksKey,
  kNcclTreeComputedKey,
  kTreeLinksKey,
  kTreeComputedKey,
  kHierImagesKey
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

  /** Flow level: every member calls it for the same collective; the last one to arrive runs `plan` (the driver:
   *  it issues the flows and sleeps the closed sums for every member at once) while the others wait on one
   *  barrier, so that a member costs one simcall per collective. Every member returns when the plan is done. No
   *  member can finish before every member has arrived, as in any allreduce (each result needs every input). */
  template <class Plan>
  void flow_call(Plan&& plan)
  {
    if (arrive())
      drive(plan); // with the channel its flows report (the trace's stream of the aggregation)
    depart();
  }
  /** Runs `plan` from the calling actor as flow_call's driver would, for every member at once, with no member
   *  actor involved (Collective::drive: the engine's one actor per communication stream). */
  template <class Plan>
  void drive(Plan&& plan)
  {
    world_.set_driver_channel(channel_);
    plan();
    world_.clear_driver_channel();
  }
  /** Every member waits until every member has called it (one SimGrid barrier; the member-posted flow forms). */
  void sync() { depart(); }
  /** True when the ring's flow form is posted by the members themselves (mailbox transfers between the members' own
   *  actors, each on its endpoint's host) instead of by one driver: above member_flows_above_ranks members, with no
   *  staging copies or CPU work on the way (pcie_contention, cpu_contention off), unless the world is solo (its
   *  driver hands SimGrid one flow per class of identical components, CommWorld::run_flows). SimGrid 3.32 keeps every
   * driver-posted host-to-host transfer in one list that each completion scans (docs/collectives.md), a member-posted
   * one only in its two members' lists. Not in a mirrored world either (CommWorld::set_mirror: the same). */
  bool member_flows() const
  {
    return size() > options().member_flows_above_ranks && !options().pcie_contention && !options().cpu_contention &&
           options().stack.ideal() && !world_.solo() && // a stack's per-message costs: the driver's closed sums
           !world_.mirrored();                          // one component per class, whichever lanes run
  }
  /** @brief Each member's times in a driven aggregation (member_timed): when its part starts, and, where
   *  the plan knows them, when it ends. */
  struct MemberTimes {
    std::vector<double> starts; ///< per member: absolute simulated seconds, none after the plan runs
    std::vector<double> ends;   ///< per member, set by the plan (empty: every member ends when the plan returns)
    /** Every member waits `s` seconds from its own start before the plan's part (a sleep each rank takes first). */
    void delay(double s)
    {
      for (double& t : starts)
        t += s;
    }
  };
  /** The times of the aggregation the engine's driver is about to drive (nullptr: none, every member starts when
   *  the plan runs and ends when it returns). */
  void set_member_times(MemberTimes* times) { member_times_ = times; }
  MemberTimes* member_times() const { return member_times_; }
  /** Member-timed: every allreduce over this group is driven (Collective::drive from the engine's one actor per
   *  in-order stream, in a solo world) with its members' start times (set_member_times), and a plan that knows when
   *  each member is done may end each member then. Off by default (every member starts and ends with the plan). */
  void set_member_timed(bool on) { member_timed_ = on; }
  bool member_timed() const { return member_timed_; }
  /** Whole stream: member-timed, and the engine's one driver of the phase's only in-order stream may run all of its
   *  aggregations as one program (Collective::stream_program), each member going on to its next aggregation when it
   *  is done with the one before and the next is ready. Off by default. */
  void set_whole_stream(bool on) { whole_stream_ = on; }
  bool whole_stream() const { return whole_stream_; }
  /** XOR-symmetric: in a lanes-solo world (CommWorld::lanes_solo), the members' XOR translations (member v to v ^ m,
   * for P a power of two) extend to symmetries of every flow the network carries (CommWorld::symmetric_under), as
   * verified by the one who sets it (hier, for its node leaders). Off by default. */
  void set_xor_symmetric(bool on) { xor_symmetric_ = on; }
  /** Several algorithms by size, one of which ends its members at their own times (a SizeSwitch with a tree, dbtree,
   *  NCCL's trees or hier): the forms computed from one algorithm's transfers alone (rd's blocks, the computed trees)
   *  are then not the message level, since another's transfers and ends come between. Off by default. */
  void set_mixed(bool on) { mixed_ = on; }
  bool mixed() const { return mixed_; }
  /** Every tensor size the phase reduces over this group (the engine sets them before it asks Collective::drivable;
   *  empty: not known, as for hier's node leaders): NCCL's choice computes its trees only where it picks them for
   *  every one (Nccl::drivable). */
  void set_sizes(std::vector<std::uint64_t> sizes) { sizes_ = std::move(sizes); }
  const std::vector<std::uint64_t>& sizes() const { return sizes_; }
  bool xor_symmetric() const { return xor_symmetric_; }
  /** `compute()` the first time `key` is asked for on this group, the cached value afterwards (e.g. an algorithm's
   *  largest partner latency: the group's routes do not change). */
  double cached(int key, const std::function<double()>& compute);
  /** An object of type T made by `make()` the first time `key` is asked for on this group (e.g. hier's node layout),
   *  the same object afterwards. */
  template <class T, class Make>
  T& cached_object(int key, Make make)
  {
    auto& slot = objects_[key];
    if (!slot)
      slot = std::make_shared<T>(make());
    return *static_cast<T*>(slot.get());
  }

private:
  /** True for the last member to arrive (and resets the count for the next collective). */
  bool arrive();
  void depart();

  CommWorld& world_;
  std::vector<int> members_;
  int channel_ = 0;
  double ring_max_latency_ = -1;
  int arrived_ = 0;
  MemberTimes* member_times_ = nullptr;
  bool member_timed_ = false;
  bool whole_stream_ = false;
  bool xor_symmetric_ = false;
  bool mixed_ = false;
  std::vector<std::uint64_t> sizes_;
  simgrid::s4u::BarrierPtr barrier_;
  std::unordered_map<int, double> cached_;
  std::unordered_map<int, std::shared_ptr<void>> objects_;
};

/** @brief The groups of a member's two concurrent trees (dbtree, nccl-tree), each on its own channel. */
struct TreePair {
  Group first;
  Group second;
};

/** @brief Every aggregation of an in-order stream over a group, run as one program (Collective::stream_program): each
 *  member does its aggregations in order, the next one from the later of its readiness and the member's end of the
 *  one before, so that the transfers of aggregations in flight together share the network as at message level. The
 *  engine's driver gives each member its aggregations as their readiness becomes known, and runs the program up to
 *  where a member may need one it has not been given. A program may run several in-order streams at once (lanes:
 *  set_lanes), each member doing one aggregation at a time in each, all of them sharing one network. */
class StreamProgram {
public:
  virtual ~StreamProgram() = default;
  /** An aggregation that ended on a member: the member's `k`-th in lane `lane` (counted from 0 in the order given),
   *  from `start_s` to `end_s` (absolute simulated seconds). */
  struct Ended {
    int member = 0;
    std::size_t k = 0;
    double start_s = 0, end_s = 0;
    int lane = 0;
  };
  /** What run() watches a member's lane for (its `open` entries). */
  enum Watch : char {
    kUnwatched = 0, ///< nothing
    kAllEnded = 1,  ///< stop once it has ended everything given in the lane (it may be given more)
    kAnyEnd = 2     ///< stop once it ends an aggregation in the lane (its other lane waits on one of them)
  };
  /** Runs `channels.size()` lanes (in-order streams), lane k's transfers reported on channel `channels[k]` (the
   *  records' stream), before anything is given. False (nothing changed) where the program runs one lane only: the
   *  default, for one channel. */
  virtual bool set_lanes(const std::vector<int>& channels) { return channels.size() == 1; }
  /** Member `member`'s next aggregation in lane `lane`, of `bytes` bytes (every member is given the same sequence in a
   *  lane), ready at `ready_s`: it starts then, or when the member is done with the lane's one before, whichever is
   *  later. */
  virtual void give(int lane, int member, std::uint64_t bytes, double ready_s) = 0;
  /** give() in lane 0 (a program of one lane). */
  void give(int member, std::uint64_t bytes, double ready_s) { give(0, member, bytes, ready_s); }
  /** Runs the program step by step. `open` holds a Watch per member of each lane, [lane * members + member]; the
   *  program stops after a step where a watched member's lane did what it is watched for, or when nothing is left to
   *  run. Appends the aggregations that ended to `ended`. Returns the number of steps run. */
  virtual std::size_t run(const std::vector<char>& open, std::vector<Ended>& ended) = 0;
  /** True when no member has an aggregation in progress or given and not ended. */
  virtual bool idle() const = 0;
  /** No transfer the program reports from now on starts before this time (the engine's link log folds what ends
   *  before it). */
  virtual double floor_s() const = 0;
  /** `sink(t)` is called now and then while the program runs, with floor_s() at that point (the engine's link log
   *  then folds what ended before it, as the program goes, not only between runs). */
  void set_floor_sink(std::function<void(double)> sink) { floor_sink_ = std::move(sink); }
  /** Steps between two floors handed to the sink (set_floor_sink): a program's floor_s() may visit every member
   *  (LaneQueues::floor_s: hier's program). */
  static constexpr std::size_t kFloorSteps = 4096;
  /** Transfers reported (note_reported) after which the next step hands the floor to the sink, however few steps
   *  passed: a program whose steps report a transfer per node image (ImageStream) reports thousands a step, and the
   *  link log holds every busy interval since the last floor (rd with two streams under pslite-zmq at 4,096 GPUs:
   *  344 MiB at its peak with a floor every kFloorSteps steps alone, 230 MiB with this too). A size of this
   *  implementation's, no hardware's: at 16,384 members, floor_s()'s visits come to half a visit per transfer. */
  static constexpr std::size_t kFloorTransfers = 1u << 16;
  /** Every member sleeps cost(bytes) from its start of each aggregation of `bytes` given from now on, before its part
   *  (a stack's per-call cost: StackCall); costs added add up. `cost` must depend on `bytes` alone: the sums are kept
   *  per size (call_cost_s). */
  void add_call_cost(std::function<double(std::uint64_t)> cost)
  {
    costs_.push_back(std::move(cost));
    cost_of_.clear(); // the sums kept forgotten (call_cost_s)
  }
  /** run() also stops before a step later than `t` (absolute simulated seconds; +infinity: none): a driver that
   *  decides something at that instant (the priority policy's scheduler, committing what is ready then). */
  void set_horizon(double t) { horizon_s_ = t; }
  /** run() also stops after the step where lane `lane`'s `k`-th aggregation has ended on every member (the priority
   *  policy's credit, freed then); `k` past every one given: none. */
  void watch_aggregation(int lane, std::size_t k)
  {
    watched_lane_ = lane;
    watched_k_ = k;
  }

protected:
  /** The call costs' sum for an aggregation of `bytes` (add_call_cost). */
  double call_cost_s(std::uint64_t bytes) const
  {
    // Every member is given each aggregation: the sum is kept per size, asked again by every other member (NCCL's
    // choice, run twice per member and aggregation, took 3 % of the instructions of `nccl` with two streams under
    // grpc-tcp at 1,024 GPUs). Sizes are an iteration's aggregations': a few hundred.
    const auto [at, added] = cost_of_.try_emplace(bytes, 0.0);
    if (added)
      for (const auto& cost : costs_)
        at->second += cost(bytes);
    return at->second;
  }

  double horizon_s_ = std::numeric_limits<double>::infinity(); ///< set_horizon's
  int watched_lane_ = 0;                                       ///< watch_aggregation's
  std::size_t watched_k_ = std::numeric_limits<std::size_t>::max();

  /** Hands floor_s() to the floor sink, if any (set_floor_sink). */
  void sink_floor() const
  {
    reported_ = 0;
    if (floor_sink_)
      floor_sink_(floor_s());
  }
  /** `n` transfers were reported to the world (run_clock hands the floor on after kFloorTransfers of them). */
  void note_reported(std::size_t n) const { reported_ += n; }

  /** A program's clock loop (TreeStream, ImageStream): steps `clock` and `net` together to `now` until `stop` is set,
   *  nothing is left, or the next step lies past the horizon (set_horizon); every kFloorSteps steps hands the floor to
   *  the sink; at each step hands each flow that ended there to `landed(id)`, then each wake-up due there to
   *  `wake(who, what)`. Returns the steps run. */
  template <class Landed, class Wake>
  std::size_t run_clock(analytical::SimClock& clock, analytical::FluidNetwork& net, double& now, const bool& stop,
                        Landed landed, Wake wake) const
  {
    std::vector<std::size_t> finished;
    std::vector<std::pair<std::size_t, int>> woken;
    std::size_t steps = 0;
    const bool horizon = std::isfinite(horizon_s_);
    while (!stop && !(horizon && clock.next_time(net) > horizon_s_) && clock.next(net, now)) {
      if (++steps % kFloorSteps == 0 || reported_ >= kFloorTransfers)
        sink_floor(); // what ended before the transfers in flight and the members' starts can be folded
      clock.due(now, woken);
      finished = net.finished();
      for (std::size_t id : finished)
        landed(id);
      for (const auto& [who, what] : woken)
        wake(who, what);
    }
    return steps;
  }

private:
  std::vector<std::function<double(std::uint64_t)>> costs_;
  mutable std::unordered_map<std::uint64_t, double> cost_of_; ///< call_cost_s's sums, by size
  std::function<void(double)> floor_sink_;
  mutable std::size_t reported_ = 0; ///< transfers reported since the last floor handed on (note_reported)
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
  /** Flow level: runs the whole allreduce of `bytes` over `group` for every member at once, from the calling actor
   *  (the driver of Group::flow_call, or hier's among its node leaders); false when this algorithm has no flow form
   *  (nothing ran). */
  virtual bool flow_plan(Group& /*group*/, std::uint64_t /*bytes*/) const { return false; }
  /** True when every member's allreduce() of `bytes` over `group` would only hand a plan to Group::flow_call (so all
   *  of them wait for the last one, which runs the plan for every member): one actor may then run that plan for the
   *  group with drive(), and the engine gives each communication stream one such actor instead of one per rank. */
  virtual bool drivable(Group& /*group*/, std::uint64_t /*bytes*/) const { return false; }
  /** The flows of every CommWorld::run_flows (or CommWorld::load, or CommWorld::run_staggered: posts_apart) call the
   *  flow plan of an allreduce of `bytes` over `group` makes (where drivable() says so; calls alike listed once), when
   *  that plan is nothing but sleeps and such calls (CommWorld::set_mirror); empty where the algorithm does not say
   *  (the default). */
  virtual std::vector<std::vector<Flow>> flow_calls(Group& /*group*/, std::uint64_t /*bytes*/) const { return {}; }
  /** True when the flow plan over `group` runs flows from several actors at once (parameter servers' helpers, each
   *  posting its own server's pushes and pulls), so that even in a solo world no one run_flows call is all the network
   *  carries: the phase then mirrors the plans' calls (CommWorld::set_mirror), and the helpers' flows share one
   *  network, ddlsim's own (CommWorld::run_fluid), instead of SimGrid's. False by default. */
  virtual bool concurrent_flows(Group& /*group*/) const { return false; }
  /** True when the flow plan over `group` posts some of flow_calls' flows apart (CommWorld::run_staggered: a sender's
   *  messages one after the other, each after its costs of sending), which a mirror computes (CommWorld::computed) and
   *  SimGrid's classes cannot: the phase keeps a mirror for such plans only where it is computed. False by default. */
  virtual bool posts_apart(Group& /*group*/) const { return false; }
  /** True when Fidelity::Auto runs this algorithm's flow form on `group` because it equals the message level there
   *  (FlowForm::WhenExact; the check is the algorithm's own, on the group's routes). False by default. */
  virtual bool exact_flow_form(Group& /*group*/) const { return false; }
  /** Runs, from the calling actor, the plan that flow_call would run for an allreduce of `bytes` over `group` (only
   *  where drivable() said so), as the driver of Group::drive. */
  virtual void drive(Group& group, std::uint64_t bytes) const
  {
    group.drive([&] { flow_plan(group, bytes); });
  }
  /** Where the group runs a whole stream (Group::whole_stream) and this algorithm can run its aggregations as one
   *  program that equals the message level (drivable() says so for every size), that program; nullptr otherwise
   *  (the default: the engine drives each aggregation with drive()). */
  virtual std::unique_ptr<StreamProgram> stream_program(Group& /*group*/) const { return nullptr; }
};

/** @brief True for a transfer between a GPU endpoint and its node's CPU host that is a staging copy
 *  (--pcie-contention) rather than a message of the stack: the stack's size factors do not apply to it. A CPU host
 *  that is itself an endpoint (a parameter server) is never registered: its messages keep the factors. */
bool is_staging_copy(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst);

/** A message's payload pointer: SimGrid moves it to the receiver and never reads it (the simulated size is the
 *  transfer's own), so it carries the message size, plus one so that it is never null (host_staging.cpp). */
void* payload_of(std::uint64_t bytes);
/** The message size a payload_of pointer carries. */
std::uint64_t bytes_of(const char* payload);

/** @brief The stack's rendezvous round trip before a message above its eager limit, over a hop of `hop_latency_s`:
 *  request and acknowledgement, each with the overhead, both ends' stack overheads and the hop's latency (times the
 *  stack's latency factor for one byte). */
double rendezvous_round_trip_s(const CollectiveOptions& options, double hop_latency_s);

/** @brief Byte size of chunk `index` when `bytes` is cut into `parts` nearly equal chunks (the first
 *  bytes % parts chunks get one byte more). */
std::uint64_t chunk_bytes(std::uint64_t bytes, std::uint64_t parts, std::uint64_t index);

} // namespace ddlsim::collectives
