// The allreduce algorithms ddlsim simulates message by message (derivations in docs/collectives.md).
#pragma once

#include "analytical/fluid_network.hpp"
#include "collectives/collective.hpp"
#include "collectives/nccl_tuning.hpp"

#include <array>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddlsim::collectives {

/** @brief Ring (Patarasuk and Yuan 2009; NCCL's ring): reduce-scatter then allgather, 2(P-1) steps of
 *  M/P bytes to the right neighbour. In reduce-scatter step s member r sends chunk (r - s) mod P; in
 *  allgather step s it sends chunk (r + 1 - s) mod P. Flow level: one flow per member. */
class RingAllreduce final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** The flow form's calls (one per slice size: ring_flow_list), not the message level's steps (run_step). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Flow level, run by the driver (Group::flow_call): one flow per member of `ring` (endpoints, in ring order) to
   *  the next, after the closed sum of the other steps at `max_latency`. */
  static void ring_flows(Group& group, const std::vector<int>& ring, double max_latency, std::uint64_t bytes);
  /** The flows of ring_flows: member i of `ring` to member i+1, every chunk it sends, the chunk as message size. */
  static std::vector<Flow> ring_flow_list(const std::vector<int>& ring, std::uint64_t bytes);
  /** The run_flows calls of an allreduce of `bytes` over `ring` (endpoints) in slices (slices() of `group`): one
   *  ring_flow_list per slice size, of which there are at most two (the first slices one byte more than the last). */
  static std::vector<std::vector<Flow>> slice_calls(const Group& group, const std::vector<int>& ring,
                                                    std::uint64_t bytes);
  /** The same plan posted by the members (Group::member_flows): member `position` of `ring` waits for every member,
   *  sleeps the same closed sum and exchanges its one flow with its neighbours, slice after slice, every slice after
   *  every member finished the previous one, as the driver's plan runs them. */
  static void member_ring(Group& group, int position, const std::vector<int>& ring, double max_latency,
                          std::uint64_t bytes);
  /** Slices of at most P x chunk bytes, each a whole ring allreduce, one after the other (at either fidelity). */
  static std::uint64_t slices(const Group& group, std::uint64_t bytes);
  /** The message level as member `self` runs it, message by message from its own actor (for a group that only lives
   *  in its members' calls, which no driver can run: NCCL's ring order). */
  static void member_steps(Group& group, int self, std::uint64_t bytes);
  /** True when the message level runs step by step from one driver (message_plan: Fidelity::Steps); in a solo world
   *  run_flows then hands SimGrid one transfer per class of identical ones. */
  static bool message_steps(const Group& group);

private:
  /** The message level's 2(P-1) steps for every member at once, each step's transfers together (one per member). */
  static void message_plan(Group& group, std::uint64_t bytes);
  static void ring_steps(Group& group, int self, std::uint64_t bytes);
};

/** @brief Recursive doubling of the whole vector: log2 P exchanges of M bytes with partner self XOR 2^k
 *  (what MPI libraries use for small messages). P not a power of two: the first 2r members (r = P - p',
 *  p' the largest power of two <= P) fold in pairs first and get the result back at the end. */
class RecursiveDoubling final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** The flow plan's run_step calls: the fold's pushes, every step, the results back (mirrored lanes). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Under Fidelity::Auto, in a solo world, above kFlowAboveRanks members: true when P is a power of two (no fold),
   *  every member's host computes at one speed (so all start together), and in every step all transfers have routes
   *  of one latency and get one max-min rate (CommWorld::max_min_rates).
   *  Every pair's exchange then costs the same, so every member starts each step when the last one does, at message
   *  level as in the step form: the two are equal. In a lanes-solo world (CommWorld::lanes_solo, several streams), true
   * when P is a power of two and the group is XOR-symmetric (Group::xor_symmetric): each step's transfers are one orbit
   * of a symmetry of all the network carries, so they too start, run and end together. */
  bool exact_flow_form(Group& group) const override;
  /** Several lanes (in-order streams) where the member-timed blocks' form is the message level for one: every lane's
   *  aggregations in one program over the blocks' network; nullptr otherwise (one lane: aggregation by aggregation). */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;

  /** The member-timed form's tables (docs/collectives.md, "rd member-timed over alike blocks"). */
  struct Blocks;

private:
  /** Every step's transfers alike (one latency, one max-min rate), in a solo world: the step form is exact. */
  static bool steps_alike(Group& group);
  /** In a solo world whose aggregations are member-timed: the blocks of members whose XOR translations are symmetries
   *  of every transfer, where rd computed over one block, one aggregation at a time, is the message level (each inner
   *  pair's links its own); null where it is not. */
  static Blocks* member_timed_blocks(Group& group);
  /** The same blocks where their symmetry holds, whether or not inner pairs share links (the lanes' program, which
   *  computes every aggregation in one network, needs only the symmetry); null where it does not. */
  static Blocks* blocks_of(Group& group);
  /** The member-timed form: one block's members step by step in a FluidNetwork, every other block its image. */
  static void blocks_plan(Group& group, Blocks& blocks, std::uint64_t bytes);
};

/** @brief Rabenseifner: recursive halving reduce-scatter (halves of M/2, M/4, ...), then recursive
 *  doubling allgather; P not a power of two handled as in RecursiveDoubling. Flow level: one flow per
 *  member and phase. */
class HalvingDoubling final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** The flow plan's run_step calls: the fold's pushes, the reduce-scatter's steps, the allgather's, the results
   *  back (mirrored lanes). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
};

/** @brief The pipelined trees a flow plan runs at once (tree: one; dbtree, nccl-tree: two, each with half of the
 *  vector), over a group's members, with what the plan needs of them, learnt once per group (tree_flows_of). */
struct TreeFlows {
  std::vector<analytical::TreeShape> trees; ///< every edge's hop: the route from the child to its parent
  std::vector<std::vector<int>> parents;    ///< per tree, per member: its parent (-1: the root)
  /** Per tree, per member: the routes to its parent (up) and from it (down), for the reports (the root's are null). */
  std::vector<std::vector<std::array<const CommWorld::Route*, 2>>> routes;
  /** The rates of a pipeline of `chunks` chunks (pipeline_rates): of tree j's transfer of chunk i over the edge of
   *  `child`, up or down, rate[j][(i * members + child) * 2 + up], bytes/s. */
  struct Rates {
    std::uint64_t chunks = 0;
    std::vector<std::vector<double>> rate;
    /** The rate of tree j's (of `members` members) transfer of chunk i of a pipeline of n chunks over the edge of
     *  `child`: its own where n <= chunks; beyond, the first chunks' for the first chunks / 2, the last chunks' for
     *  the last ones, and in between that of chunk chunks / 2 (a pipeline in its steady state). */
    double of(std::size_t j, std::size_t members, std::uint64_t n, std::uint64_t i, int child, bool up) const;
  };
  std::map<std::uint64_t, Rates> rates; ///< by number of chunks (at most kScheduledChunks)
  /** Pipelines of more chunks take the rates of this many: their first and last chunks', a middle one's between. */
  static constexpr std::uint64_t kScheduledChunks = 32;
  /** The max-min rates of a unit step's transfers, given as (from, to) endpoint pairs in sorted order: computed once
   *  per set (CommWorld::max_min_rates over the sorted list). A pipeline's steps repeat: its full stretch alternates
   *  a few sets, and its fill and drain are alike for every number of chunks. At most kMemoPairs pairs are kept
   *  (then the memo starts afresh). */
  const std::vector<double>& step_rates(CommWorld& world, const std::vector<std::pair<int, int>>& sorted_ends);
  static constexpr std::size_t kMemoPairs = std::size_t(1) << 22;

private:
  struct StepRates {
    std::vector<std::pair<int, int>> ends; ///< sorted
    std::vector<double> rates;             ///< per entry of ends
  };
  std::unordered_map<std::uint64_t, std::vector<StepRates>> memo_; ///< by a hash of the sorted ends
  std::size_t memo_pairs_ = 0;
};
/** @brief TreeFlows of `trees` (member ids of `group`; their hops are set here from the group's routes). */
TreeFlows tree_flows_of(Group& group, std::vector<analytical::TreeShape> trees);
/** @brief The rates of the trees' transfers in a pipeline of min(chunks, kScheduledChunks) chunks (learnt once per
 *  number): the transfers are grouped as the message level would run them were every transfer equally long (the
 *  recurrence of analytical::tree_allreduce_s in unit steps: a member does one transfer at a time, its children in
 *  order, every tree from step 0), and each group's max-min rates (CommWorld::max_min_rates) are its transfers'. */
const TreeFlows::Rates& pipeline_rates(Group& group, TreeFlows& trees, std::uint64_t chunks);
/** @brief pipeline_rates' rates for exactly `chunks` chunks, computed anew (no cap; only
 *  each step's rates are kept, TreeFlows::step_rates). */
TreeFlows::Rates schedule_rates(Group& group, TreeFlows& trees, std::uint64_t chunks);
/** @brief The pipelined trees' flow form (docs/collectives.md, "Pipelined trees at flow level"), run by one driver for
 *  every member: tree j carries `bytes[j]` in chunks of pipeline_chunk_bytes(id, ...). It lasts as long as the
 *  recurrence of each tree (analytical::tree_allreduce_s) with every transfer at its rate among those that run with
 *  it (pipeline_rates): exact where no two transfers share a link, as the message level's recurrence is. Every
 *  chunk's transfer is counted and reported at the recurrence's times (CommWorld::account). Outside a solo world the
 *  plan also loads SimGrid with every edge's bytes at once, the reduce's then the broadcast's (CommWorld::load), for
 *  the traffic that shares their links, and lasts at least as long as they take. `member_timed`, in a solo world
 *  with the group's MemberTimes given (Group::set_member_times): every member starts at its own time and ends when it
 *  is done in every tree (the times set there); otherwise every member starts now and ends with the plan. */
/** @brief The loads tree_flow_plan puts on the links outside a solo world (CommWorld::load): every edge's bytes at once
 *  (tree j's `bytes[j]`), the reduce's (child to parent), then the broadcast's (Collective::flow_calls). */
std::vector<std::vector<Flow>> tree_load_calls(Group& group, const TreeFlows& trees,
                                               const std::vector<std::uint64_t>& bytes);
void tree_flow_plan(Group& group, TreeFlows& trees, const std::vector<std::uint64_t>& bytes, AlgorithmId id,
                    bool member_timed = false);

/** @brief Binary tree (member r's children are 2r+1 and 2r+2, root 0), pipelined in chunks: reduce to the
 *  root, then broadcast. Each member does one transfer at a time (children in order). */
class TreeAllreduce final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** Outside a solo world, the flow plan's loads (tree_load_calls; mirrored lanes). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Under Fidelity::Auto above kFlowAboveRanks members of a whole stream (stream_tree) whose links are not each one
   *  edge's (member_timed_tree): every aggregation computed in one network (TreeStream). */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;
  /** Under Fidelity::Auto, above kFlowAboveRanks members of a member-timed group (Group::member_timed: each member
   *  starts and ends at its own time) in a solo world: true when no link that tree edges share can slow a transfer
   *  below its rate alone (tree_links_private: crossed only by edges with a member in common, or wide enough for all
   *  the transfers that may cross it at once). Each transfer then takes alpha + size / B whenever it runs, and the
   *  recurrence from each member's own start (tree_flow_plan, member-timed there at any fidelity) is the message
   *  level. */
  bool exact_flow_form(Group& group) const override;
};

/** @brief True when the tree's flow form runs member-timed on `group` (each member from its own start to its own end):
 *  a member-timed group (Group::member_timed) of a solo world, a flow form under its stack (flow_form_allowed), and
 *  private links (tree_links_private), where that makes the form the message level. Elsewhere it runs in lock step, as
 *  Group::flow_call's driver can for per-rank actors. */
bool member_timed_tree(Group& group);

/** @brief True when no link shared by transfers (CommWorld::Route::shared_ids) can slow a transfer of the tree (`trees`
 *  holds one tree) below its rate alone: all the edges whose routes (up or down) cross the link have a member in common
 *  (the edges at one member: one transfer at a time), or the link's bandwidth carries every transfer that may cross it
 *  at once at its route's narrowest bandwidth (a member does one transfer at a time, so at most min(distinct senders,
 *  distinct receivers) of them at once: a non-blocking fat tree's leaf uplinks). */
bool tree_links_private(const TreeFlows& trees);
/** @brief The conditions every pipelined tree's whole stream shares (TreeStream): Fidelity::Auto, a whole-stream group
 *  (Group::whole_stream) that is member-timed, of a solo world, of more than one member, not mixed with another
 *  algorithm by size, and `id`'s flow form allowed under its stack (flow_form_allowed). Each algorithm adds that
 *  ddlsim's network computes its routes (TreeLinks::computable). */
bool whole_stream_allowed(Group& group, AlgorithmId id);
/** @brief True when the tree's whole stream may run computed at message level on `group` (TreeStream): a
 *  whole-stream group (Group::whole_stream) of a solo world, a flow form under its stack, and routes ddlsim's network
 *  computes as SimGrid does (TreeLinks::computable). */
bool stream_tree(Group& group);

/** @brief True when every link that the trees' transfers (`trees`, up and down) share is crossed only by transfers with
 *  one member in common (its owner's: a member takes part in one aggregation at a time, so no link carries two
 *  aggregations' transfers at once, and one aggregation computed alone is the message level) or can be loaded past
 *  its bandwidth by no set of them, so that it limits none: by a count (one transfer per tree, edge and direction, each
 *  at its route's narrowest bandwidth: NCCL's trees across a non-blocking fat tree's leaf uplinks), or by the summed
 *  bandwidths of the narrowest links its transfers cross before it or after it (a leaf's NICs, whose sum is its
 *  non-blocking uplink's bandwidth: dbtree's heaps); and ddlsim's own network computes the routes as SimGrid does
 *  (CommWorld::fluid_exact). tree_links says which. */
bool trees_links_owned(const TreeFlows& trees);
/** @brief What trees_links_owned finds of the trees' shared links. */
struct TreeLinks {
  bool exact = false; ///< trees_links_owned
  /** ddlsim's network computes the routes as SimGrid does (CommWorld::fluid_exact), whatever their links carry: the
   *  trees computed with every aggregation in flight in one network (TreeStream) are the message level. */
  bool computable = false;
  /** Where computable: links that limit no transfer by a bound that holds without them too (the count, or feeders
   *  or drains that are all one member's own), left out of the computed trees' network (computed_trees_of). */
  std::vector<std::uint32_t> left_out;
};
/** `lanes`: the in-order streams whose aggregations run at once over the trees (TreeStream::set_lanes), each member
 *  doing one aggregation at a time in each. */
TreeLinks tree_links(const TreeFlows& trees, int lanes = 1);
/** @brief Adds to `left_out` every link that `routes` cross which a narrower link (by a margin) shared by every route
 *  crossing it makes redundant: its transfers are always among that link's, so it never fills and the computed shares
 *  are the same to the bit without it (tree_links). */
void dominated_links(const std::vector<const CommWorld::Route*>& routes, std::vector<std::uint32_t>& left_out);
/** @brief ddlsim's own network over the links of a group's trees, kept between aggregations (computed_trees_plan). */
struct ComputedTrees {
  analytical::FluidNetwork fluid;
  /** Each edge's route in each direction, [(j * members + child) * 2 + up] as computed_trees_plan's edges: the
   *  shared links its transfers share in `fluid`, links[first[e], first[e + 1]) (those that limit none left out),
   *  and its latency and narrowest bandwidth (here, not read from routes strewn over memory at every transfer). */
  std::vector<std::uint32_t> links;
  std::vector<std::uint32_t> first;
  struct Hop {
    double latency_s = 0;
    double bandwidth = 0;
  };
  std::vector<Hop> hops;
};
/** The computed trees' network over `trees`, without the links `links` (tree_links of these trees) leaves out. */
ComputedTrees computed_trees_of(const TreeFlows& trees, const TreeLinks& links);
/** @brief The pipelined trees at message level (each member runs every tree at once, as TreeAllreduce::allreduce per
 *  tree), computed transfer by transfer in `net` from each member's start (Group::member_times), which receives each
 *  member's end; every transfer reported. The message level where trees_links_owned holds, in a solo world. */
void computed_trees_plan(Group& group, TreeFlows& trees, const std::vector<std::uint64_t>& bytes, ComputedTrees& net,
                         AlgorithmId chunks_of = AlgorithmId::Tree);

/** @brief The members' aggregations in each lane of a StreamProgram, in the order given (TreeStream, HierStream): per
 *  lane and member, how many it was given and when each is ready, the one in progress or next, when it started and
 *  ended; per lane and aggregation, the members that ended it. The program asks when a member starts its next one
 *  (start_at), says when it started and ended one (started, end), and learns from end() where its driver's watches
 *  stop the run (StreamProgram::Watch, watch_aggregation). */
class LaneQueues {
public:
  struct Member {
    std::size_t given = 0;  ///< aggregations given
    std::size_t k = 0;      ///< the one in progress or next
    bool scheduled = false; ///< its next start is on the clock
    double start = 0, end = 0;
  };
  void reset(std::size_t lanes, std::size_t members);
  /** Lanes x members, member v of lane l at l * members + v (a StreamProgram's `open` entries). */
  std::size_t size() const { return member_.size(); }
  Member& at(std::size_t mi) { return member_[mi]; }
  const Member& at(std::size_t mi) const { return member_[mi]; }
  /** True when the member's next aggregation (its given-th) is new to its lane: no member was given it yet. */
  bool is_new(std::size_t mi) const { return member_[mi].given == ended_[mi / members_].size(); }
  /** Member mi's next aggregation, ready at `ready_s`: true when the member is idle and starts it next (the program
   *  schedules it at start_at). Refuses one the member, idle, would have started before `now`. */
  bool give(std::size_t mi, double ready_s, double now);
  /** When member mi starts its next aggregation: the later of its readiness, its end of the one before and `now`. */
  double start_at(std::size_t mi, double now);
  void started(std::size_t mi, double now);
  /** Member mi ends its aggregation at `now`, appended to `out`: true when it has a next one given (the program
   *  schedules it). Sets `stop` where the driver's watches want the run to stop here: `open` (per member, a
   *  StreamProgram::Watch), lane `watched_lane`'s aggregation `watched_k` ended on every member. */
  bool end(std::size_t mi, double now, const std::vector<char>* open, int watched_lane, std::size_t watched_k,
           std::vector<StreamProgram::Ended>* out, bool& stop);
  /** No transfer of an aggregation in progress started before its member's start, none to come before `now`. */
  double floor_s(double now) const;
  /** No member has an aggregation in progress or given and not ended. */
  bool idle() const { return active_ == 0; }
  /** For a program whose aggregation is one message size (HierStream, RdStream), before give(): member mi's next
   *  aggregation is of `bytes`. The first member given it records its size and `delay_s`, each member's call cost,
   *  and true is returned; a later one must name the same size (an internal error naming `program` otherwise). */
  bool size_next(std::size_t mi, std::uint64_t bytes, double delay_s, const char* program);
  /** Lane `lane`'s aggregation k: its size and its members' call cost (size_next). */
  std::uint64_t bytes(std::size_t lane, std::size_t k) const { return sizes_[lane][k].first; }
  double delay_s(std::size_t lane, std::size_t k) const { return sizes_[lane][k].second; }

private:
  std::size_t members_ = 0;
  std::vector<Member> member_;
  std::vector<std::vector<double>> ready_;        ///< per lane: [k * members + v]
  std::vector<std::vector<std::uint32_t>> ended_; ///< per lane, per aggregation k: the members that ended it
  std::vector<std::vector<std::pair<std::uint64_t, double>>> sizes_; ///< per lane, per k: size_next's
  std::size_t active_ = 0; ///< members' lanes with an aggregation in progress or given
};

/** @brief The classes of links of transfers that translations of the network map onto each other (images): routes[t][j]
 *  is transfer t's j-th image's route (j = 0 its representative's), each route's k-th shared link mapped to its
 *  images' k-th (CommWorld::symmetric_under checks such maps link for link). A class is a link and its images. Where
 *  every member's times are its representative's, every link of a class carries the same load, so a network of one link
 *  per class, of a link's bandwidth times the class's links over the images, gives the representatives their max-min
 *  rates in the whole network (RecursiveDoubling::Blocks, HierRdStream). Not exact where a representative's route
 *  crosses two links of one class. */
struct ImageClasses {
  bool exact = false;
  std::vector<std::vector<std::uint32_t>> classes; ///< per transfer: its representative's shared links' classes
  std::vector<double> capacity;                    ///< per class
};
/** ImageClasses of `routes` (each transfer with the same number of images, at least one). */
ImageClasses image_classes(const std::vector<std::vector<const CommWorld::Route*>>& routes);

/** @brief A lanes' program over images (RdStream, HierRdStream): representatives (block 0's members, node 0's), each
 *  with a state machine on the program's clock, their transfers in a network of classes of links (ImageClasses), and
 *  every other member the image of one representative, started, checked and ended with it. The driver's members are
 *  every member (LaneQueues over all of them, so that its watches and ends are any program's). A subclass says which
 *  member is which representative's image and runs the representatives' events; kStart (0) is the event of a
 *  representative's start of its next aggregation, which it answers with start_images(). */
class ImageStream : public StreamProgram {
public:
  bool set_lanes(const std::vector<int>& channels) override;
  void give(int lane, int member, std::uint64_t bytes, double ready_s) override;
  std::size_t run(const std::vector<char>& open, std::vector<Ended>& ended) override;
  bool idle() const override { return queues_.idle(); }
  /** Every transfer is reported when it lands, from its own start (report_images): none to come starts before the
   *  earliest start of those in flight, or before now. Tighter than the members' starts (LaneQueues::floor_s), which
   *  an aggregation of many steps keeps for all of them: the link log then held every busy interval since (rd with two
   *  streams under pslite-zmq at 4,096 GPUs: 10.7 million intervals by the run's end, 473 MiB at its peak; with this
   *  floor and kFloorTransfers at most 0.5 million, 230 MiB). */
  double floor_s() const override;

protected:
  /** Over `group`'s members: `reps` representatives of `images` images each (itself the first); `net` the classes'
   *  network; `name` the program's and `unit` what holds its representatives, for internal errors ("rd's lanes'
   *  program", "block"). */
  ImageStream(Group& group, std::size_t reps, std::size_t images, analytical::FluidNetwork& net, const char* name,
              const char* unit);
  static constexpr int kStart = 0;
  /** A representative's transfer in flight: its lane, the representative, its slot (the subclass's), its start
   *  (+infinity in flight_: no flow of that id in flight). */
  struct InFlight {
    std::size_t lane = 0, rep = 0, slot = 0;
    double start = std::numeric_limits<double>::infinity();
  };
  /** Representative rep's j-th image, a member (j = 0: rep's own member). */
  virtual std::size_t image_of(std::size_t rep, std::size_t j) const = 0;
  /** The representative whose own member `member` is; reps (none) for an image in another block or node. */
  virtual std::size_t representative_of(std::size_t member) const = 0;
  /** The lanes are set (channels_): the subclass's state per lane afresh. */
  virtual void reset_lanes() = 0;
  /** A transfer started with start_transfer() has landed, now_ (its flow released). */
  virtual void landed(const InFlight& f) = 0;
  /** Representative rep's event `what` in lane l is due, now_. */
  virtual void wake(std::size_t l, std::size_t rep, int what) = 0;
  /** Representative rep starts its next aggregation in lane l now, and so do its images: each must have been given it
   *  and be ready (every block or node runs as the representatives' does; an internal error otherwise). Returns the
   *  aggregation's index in the lane. */
  std::size_t start_images(std::size_t l, std::size_t rep);
  /** Representative rep and its images end their aggregation in lane l now; rep's next one, if given, is scheduled. */
  void end_images(std::size_t l, std::size_t rep);
  /** Representative rep's event `what` in lane l after d seconds (a sleep: SimGrid's at least 1 ns), or now. */
  void after(double d, std::size_t l, std::size_t rep, int what);
  /** Transfer `f` (started now) of `bytes` over `classes` of the network, as SimGrid runs a route of `latency_s` and
   *  `bandwidth` under the stack's factors (set_cm02), tagged by its slot. */
  void start_transfer(const InFlight& f, const std::vector<std::uint32_t>& classes, double latency_s, double bandwidth,
                      std::uint64_t bytes);
  /** Reports landed transfer `f` as its images, `flows` (endpoints and bytes set; one per image), over `routes` (and
   *  link_flows_of them), every one from f's start to now, on its lane's channel. */
  void report_images(const InFlight& f, const std::vector<Flow>& flows,
                     const std::vector<const CommWorld::Route*>& routes, const CommWorld::LinkFlows& links);
  std::size_t k_of(std::size_t l, std::size_t rep) const { return queues_.at(l * members_ + image_of(rep, 0)).k; }
  std::uint64_t bytes_of(std::size_t l, std::size_t rep) const { return queues_.bytes(l, k_of(l, rep)); }

  CommWorld& world_;
  const CollectiveOptions& o_;
  std::size_t members_, reps_, images_;
  analytical::FluidNetwork& net_;
  std::vector<int> channels_;
  LaneQueues queues_; ///< every member's aggregations in each lane, member m of lane l at l * members + m
  analytical::SimClock clock_;
  double now_ = 0;

private:
  void schedule(std::size_t l, std::size_t rep);
  const char* name_;
  const char* unit_;
  std::vector<InFlight> flight_; ///< per flow id
  std::vector<double> ends_;
  bool stop_ = false;
  const std::vector<char>* open_ = nullptr;
  std::vector<Ended>* ended_ = nullptr;
};

/** @brief The pipelined trees at message level for every aggregation of an in-order stream (StreamProgram), computed
 *  transfer by transfer in one network (`net`, restarted here) as computed_trees_plan does one aggregation: a member
 *  starts each aggregation in every tree at once, at the later of its readiness and its end of the one before, so
 *  that transfers of aggregations in flight together share the links they cross (a DGX-1 node's NIC, crossed by its
 *  eight GPUs' tree edges). Several lanes (set_lanes: in-order streams, each member's own actor per lane at message
 *  level) run their trees at once over the one network, each on its own channel. The message level wherever the
 *  routes are computable (TreeLinks::computable), in a world whose only traffic is this program's. give() cuts an
 *  aggregation into one near-equal part per tree (chunk_bytes), as dbtree and NCCL's trees give each tree half. */
class TreeStream final : public StreamProgram {
public:
  TreeStream(Group& group, TreeFlows& trees, ComputedTrees& net, AlgorithmId chunks_of);
  bool set_lanes(const std::vector<int>& channels) override;
  using StreamProgram::give;
  void give(int lane, int member, std::uint64_t bytes, double ready_s) override;
  /** give() with each tree's bytes given, each member sleeping `delay_s` from its start before its part. */
  void give_trees(int lane, int member, const std::vector<std::uint64_t>& per_tree, double ready_s, double delay_s = 0);
  std::size_t run(const std::vector<char>& open, std::vector<Ended>& ended) override;
  bool idle() const override { return queues_.idle(); }
  /** As ImageStream's: every transfer is reported when it lands, from its own start, so none to come starts before the
   *  earliest start of those in flight, or before now; the members' starts (LaneQueues::floor_s) stay at an
   *  aggregation's start for all its chunks, and with two streams one lane's long aggregation held the link log's
   *  intervals of both. */
  double floor_s() const override;
  /** give() splits wire(bytes) among the trees, not `bytes` (a protocol's bytes on the wire: Nccl); the call costs
   *  still take `bytes`. Before any aggregation is given (an internal error otherwise: give() keeps each size's
   *  parts). */
  void set_wire(std::function<std::uint64_t(std::uint64_t)> wire);

  /** @brief A program around the trees' members, on this stream's clock and network (HierStream: each node's gather
   *  before its leader's trees, its scatter after). With one set (set_outer), the outer program starts each member's
   *  aggregations (begin_member) instead of give(), and is handed their ends, its own wake-ups and its own flows' ends;
   *  run() then ends nothing itself and watches nothing: the outer program stops it (stop()). */
  class Outer {
  public:
    virtual ~Outer() = default;
    /** Member `member` has ended its current aggregation in every tree of lane `lane`, now(). */
    virtual void trees_ended(std::size_t lane, std::size_t member) = 0;
    /** A wake-up set with at(), now(). */
    virtual void woken(std::size_t who, int what) = 0;
    /** A flow started with start_flow() has ended, now() (its id freed). */
    virtual void flow_ended(std::size_t token) = 0;
  };
  void set_outer(Outer* outer) { outer_ = outer; }
  /** The outer program's next aggregation of `bytes` in lane `lane`: its parts per tree, as give() cuts them. */
  void add_aggregation(int lane, std::uint64_t bytes);
  /** The outer program starts member `member`'s next aggregation in every tree of lane `lane`, now(). */
  void begin_member(int lane, int member);
  /** The outer program's wake-up `(who, what)` at time t (>= now()). */
  void at(double t, std::size_t who, int what);
  /** The outer program's flow of `bytes` over `route` (one given to keep_links) from now(), handed back with `token`
   *  when it ends; `tag` names its route among the outer program's (FluidNetwork::FlowSpec::tag). */
  void start_flow(const CommWorld::Route& route, std::uint64_t bytes, std::size_t token, std::uint64_t tag);
  /** Before set_lanes, for each route of the outer program's flows: the network set_lanes builds has every link of
   *  it, even one the trees' own transfers cannot fill (tree_links leaves those out; the outer flows may fill it). */
  void keep_links(const CommWorld::Route& route);
  void stop() { stop_ = true; }
  double now() const { return now_; }

private:
  /** A member's program in one tree of one lane (of its aggregation `k` there): in the reduce, op c < children is the
   *  receive from child c, op children the send to the parent; in the broadcast, op -1 the receive from the parent,
   *  op c the send to child c. */
  static constexpr int kInPlaceKids = 3; ///< children a member's program holds in place (Program::kid)
  struct alignas(64) Program {
    int phase = 2; ///< 0 reduce, 1 broadcast, 2 done
    int op = 0;
    std::uint64_t chunk = 0;
    std::size_t k = 0;
    // The member's place in the tree, the same in every lane, copied from TreeFlows beside its state (reset_programs)
    // so that a step of its program reads one line of memory, not the trees' nested lists (at 16,384 GPUs, a miss
    // each).
    int parent = -1; ///< -1: the root
    int kids = 0;    ///< its children: the first kInPlaceKids in `kid`, all in TreeFlows' lists
    int kid[kInPlaceKids] = {};
  };
  /** An edge's transfer in one direction: whether each end has posted it (of the sender's aggregation k), and when
   *  it started; and the network's edge (ComputedTrees: its links, latency and narrowest bandwidth), its parent and
   *  its route, copied beside them so that a send's cost, a transfer's start and its end read one line of memory, not
   *  the arrays and programs they come from (16,384 GPUs: a miss each). */
  struct alignas(64) Edge {
    bool sent = false, asked = false;
    std::uint32_t first = 0, count = 0; ///< its links: net_->links[first, first + count)
    int parent = -1;                    ///< the edge's parent member (its child: (e / 2) % members)
    std::size_t k = 0;
    std::uint64_t chunk = 0;
    double start = 0;
    double latency_s = 0, bandwidth = 0; ///< the route's (Route::latency_s: a solo world's, as handshake_s reads it)
    const CommWorld::Route* route = nullptr; ///< as the transfer's account gives it (the child's up or down)
  };
  static_assert(sizeof(Edge) == 64, "an edge's transfer in one line of memory");
  /** A lane's aggregations, in the order given (each member's place in them: queues_). */
  struct Lane {
    std::vector<std::uint64_t> bytes, chunks; ///< per aggregation k, per tree j: [k * trees + j]
    std::vector<double> delay;                ///< per aggregation k: what each member sleeps first (give_trees)
    int channel = 0;                          ///< its transfers' (CommWorld::account)
  };
  enum : int { kRun, kReceived, kStart, kBegin, kPostSend };
  // Indices: a lane's tree s = lane * trees + j; a member's program there prog_[s * members + v] (also its id on the
  // clock); an edge [(s * members + child) * 2 + up], the network's edge e of it that modulo trees * members * 2; a
  // member in a lane queues_.at(lane * members + v), on the clock at lanes * trees * members + that, its trees still
  // running its aggregation trees_left_[that]; an edge's sender, its cost slept, on the clock at
  // edge_clock() + e (kPostSend); the outer program's wake-ups past those (at).
  /** Member m (lane * members + v) begins its current aggregation in every tree of its lane. */
  void begin(std::size_t m);
  /** An aggregation was given to some lane (set_lanes and set_wire come before any). */
  bool any_given() const;
  /** `bytes` cut into one near-equal part per tree (chunk_bytes), in parts_. */
  const std::vector<std::uint64_t>& parts_of(std::uint64_t bytes);
  /** A lane's next aggregation: its parts per tree, their chunks, what each member sleeps first. */
  void push_aggregation(Lane& lane, const std::vector<std::uint64_t>& per_tree, double delay_s);
  std::uint64_t size_of(std::size_t s, std::size_t k, std::uint64_t chunk) const;
  void start_if_posted(std::size_t e);
  std::size_t edge_of(std::size_t s, std::size_t v) const;
  /** Member v's receive posted in tree s (its program waits on it). */
  void ask(std::size_t s, std::size_t v);
  /** Edge e's send posted by its sender (its chunk and aggregation written when its send began). */
  void post_send(std::size_t e);
  /** Edge e's clock id is edge_clock() + e: past the programs' and the members' (the outer program's past the edges').
   */
  std::size_t edge_clock() const { return prog_.size() + queues_.size(); }
  void run_tree(std::size_t s, std::size_t v);
  void wake(std::size_t who, int what);
  void tree_done(std::size_t s, std::size_t v);
  void schedule(std::size_t m);
  /** edges_ for net_'s edges, in every lane, each with nothing posted. */
  void reset_edges(std::size_t lanes);
  /** prog_ for every member of every tree in every lane, each done (phase 2), with its place in its tree. */
  void reset_programs(std::size_t lanes);
  /** Child c of member v (program p) in tree j. */
  int kid_of(const Program& p, std::size_t j, std::size_t v, int c) const
  {
    return c < kInPlaceKids ? p.kid[c] : t_.trees[j].children[v][static_cast<std::size_t>(c)];
  }

  Group& g_;
  CommWorld& world_;
  const CollectiveOptions& o_;
  TreeFlows& t_;
  ComputedTrees* net_;                        ///< the group's, or lanes_net_
  std::unique_ptr<ComputedTrees> lanes_net_;  ///< several lanes: the network without the links they may still fill
  std::vector<const CommWorld::Route*> kept_; ///< keep_links's
  bool lanes_set_ = false;
  AlgorithmId chunks_of_;
  std::size_t members_, trees_;
  std::vector<Lane> lanes_;
  std::vector<Program> prog_;
  std::vector<Edge> edges_;
  /// Each transfer started, (its start, its edge), in the order started (times never go back); those landed (their
  /// edge no longer in flight from that start) taken off the front by floor_s().
  mutable std::deque<std::pair<double, std::size_t>> started_;
  LaneQueues queues_;
  std::vector<int> trees_left_;
  std::vector<std::size_t> owner_; ///< flow id -> edge
  analytical::SimClock clock_;
  analytical::FluidNetwork::FlowSpec spec_;
  std::vector<std::uint64_t> parts_;                 ///< parts_of's scratch: each tree's bytes
  std::function<std::uint64_t(std::uint64_t)> wire_; ///< set_wire's
  /// give()'s parts per tree (wire_, then parts_of) of each size given, for the other members given it
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> given_parts_;
  std::vector<Ended>* ended_ = nullptr;
  const std::vector<char>* open_ = nullptr;
  Outer* outer_ = nullptr;
  bool stop_ = false;
  double now_ = 0;
};

/** @brief Double binary tree (NCCL): two binary trees, each carrying half of the vector at the same time. The
 *  second is the first with members mirrored (r -> P-1-r), so for an even P every member is an inner node
 *  in exactly one tree and a leaf in the other. Each tree uses its own mailbox channel. */
class DoubleBinaryTree final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** Outside a solo world, the flow plan's loads (tree_load_calls; mirrored lanes). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Under Fidelity::Auto above kFlowAboveRanks members of a whole stream (stream_dbtree) whose links are not each
   *  one member's own (member_timed_dbtree): every aggregation computed in one network (TreeStream). */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;
  /** Under Fidelity::Auto, above kFlowAboveRanks members: member_timed_dbtree (then the two trees are computed at
   *  message level, computed_trees_plan) or stream_dbtree (stream_program). */
  bool exact_flow_form(Group& group) const override;
};

/** @brief True when the double binary tree runs computed at message level on `group`: a member-timed group of a solo
 *  world, a flow form under its stack, and links each its member's own (trees_links_owned). */
bool member_timed_dbtree(Group& group);
/** @brief True when the double binary tree's whole stream may run computed at message level on `group` (TreeStream):
 *  a whole-stream group (Group::whole_stream) of a solo world, a flow form under its stack, and routes ddlsim's network
 *  computes as SimGrid does (TreeLinks::computable), whatever their links carry. */
bool stream_dbtree(Group& group);

/** @brief Two levels: every rank of a node sends its vector to the node's leader (its lowest rank),
 *  leaders allreduce with a flat algorithm over the network, leaders send the result back. */
class Hierarchical final : public Collective {
public:
  explicit Hierarchical(std::unique_ptr<Collective> inter)
      : inter_(std::move(inter))
  {
  }
  void prepare(CommWorld& world) const override { inter_->prepare(world); }
  std::vector<simgrid::s4u::ActorPtr> start(CommWorld& world, const std::vector<std::uint64_t>& sequence) const override
  {
    return inter_->start(world, sequence);
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** The flow form's calls: the gather, the inter algorithm's among the leaders, the scatter; none where the flow form
   *  is not taken or the inter algorithm lists none, nor under Fidelity::Auto with an inter algorithm it takes only
   *  where exact (FlowForm::WhenExact) under a stack's or a message's costs (the gather's lock step is a model there).
   */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  bool concurrent_flows(Group& group) const override;
  /** Where members' sends cost time (a message overhead, a stack): the gather and scatter (CommWorld::send_cost_s per
   *  message, a leader's one after the other), or the inter algorithm's. */
  bool posts_apart(Group& group) const override;
  /** Several in-order streams (lanes) over the tree or dbtree, computed at message level among the leaders
   *  (exact_flow_form there), nodes whose flows keep to links of their own: every lane's aggregations in one program
   *  (HierStream, hierarchical.cpp). Over rd, one stream or several, above kFlowAboveRanks leaders, where every node
   *  is node 0's image under the nodes' XOR translations: one program over node 0's members (HierRdStream). nullptr
   *  otherwise. */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;

private:
  std::unique_ptr<Collective> inter_;
};

/** @brief Parameter server: S servers; every worker pushes its shard of each tensor to the servers, a
 *  server aggregates once all P pushes arrived (and, with PsUpdate::Server, runs the update on its host), then
 *  every worker pulls. Incast on a server's link is ordinary link sharing. Each server serves every aggregation
 *  lane (communication stream) with its own actor, so concurrent aggregations keep all servers busy. */
class ParameterServer final : public Collective {
public:
  /** `leaders_only`: the workers are the node leaders (hier's inter algorithm), not every rank. */
  explicit ParameterServer(bool leaders_only = false)
      : leaders_only_(leaders_only)
  {
  }
  void prepare(CommWorld& world) const override;
  std::vector<simgrid::s4u::ActorPtr> start(CommWorld& world,
                                            const std::vector<std::uint64_t>& sequence) const override;
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool flow_plan(Group& group, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  /** Each server's pushes and pulls, for every server a tensor may go to (mirrored lanes). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  bool concurrent_flows(Group& group) const override;
  /** Where sends cost time (a message overhead, a stack): a server posts its pulls one after the other, a worker its
   *  pushes to several servers. */
  bool posts_apart(Group& group) const override;

private:
  bool leaders_only_;
};

/** @brief NCCL's ring and trees over the endpoints of `endpoints` (nccl_tuning.hpp), with the link class read from the
 *  link names (NVLink: every link of the ring's hops inside a node is named *nvlink* or *nvswitch*) and LL128 enabled
 *  on NVLink between V100 GPUs (the hosts' `gpu` property). */
NcclShape nccl_shape(const CommWorld& world, const std::vector<int>& endpoints);

/** @brief The bytes a protocol of efficiency `efficiency` (nccl_efficiency) puts on the wire for `bytes` of data. */
std::uint64_t nccl_wire_bytes(std::uint64_t bytes, double efficiency);

/** @brief NCCL shapes of the groups an algorithm has run on, computed once per membership (SimGrid's actors run one
 *  at a time, so no lock). */
class NcclShapes {
public:
  const NcclShape& of(const Group& group) const;

private:
  mutable std::map<std::vector<int>, NcclShape> shapes_;
};

/** @brief NCCL's ring (NCCL 2.4+): the ring of RingAllreduce through the topology, every GPU of a node then the next
 *  node, a node's GPUs in the order of its fastest hops. */
class NcclRing final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  /** The flow form's calls, as RingAllreduce's over NCCL's ring order (ring_plan). */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  static void run(Group& group, int self, std::uint64_t bytes, const NcclShape& shape);
  /** True when run() hands the ring's flow form to Group::flow_call (the flow level, not posted by the members). */
  static bool driven(const Group& group);
  /** The plan run() hands to Group::flow_call, for every member at once. */
  static void ring_plan(Group& group, std::uint64_t bytes, const NcclShape& shape);
  /** ring_plan's run_flows calls, where the ring runs its flow form (driven but for member flows); none otherwise. */
  static std::vector<std::vector<Flow>> ring_calls(Group& group, std::uint64_t bytes, const NcclShape& shape);

private:
  NcclShapes shapes_;
};

/** @brief NCCL's tree (NCCL 2.4+): two pipelined trees, each with half of the vector on its own channel; inside a
 *  node a chain of its GPUs, across nodes NCCL's double binary tree (ncclGetDtree) between the chains' heads. */
class NcclTree final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  static void run(Group& group, int self, std::uint64_t bytes, const NcclShape& shape);
  /** True when run() hands the trees' flow form to Group::flow_call: Fidelity::Flow, or under Fidelity::Auto above
   *  kFlowAboveRanks members where the trees run computed at message level (computed(), exact_flow_form). */
  static bool driven(Group& group);
  bool exact_flow_form(Group& group) const override;
  /** A member-timed group of a solo world, a flow form under its stack, and links each its member's own
   *  (trees_links_owned): NCCL's two trees computed at message level (computed_trees_plan). */
  static bool computed(Group& group);
  /** True when NCCL's two trees' whole stream may run computed at message level on `group` (TreeStream): a
   *  whole-stream group (Group::whole_stream) of a solo world, a flow form under its stack, and routes ddlsim's network
   *  computes as SimGrid does (TreeLinks::computable), whatever their links carry. */
  static bool streamed(Group& group);
  /** Under Fidelity::Auto above kFlowAboveRanks members where streamed() but not computed(): every aggregation
   *  computed in one network (TreeStream). */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;
  /** The plan run() hands to Group::flow_call, for every member at once (tree_flow_plan over NCCL's two trees). */
  static void tree_plan(Group& group, std::uint64_t bytes, const NcclShape& shape);
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** tree_plan's loads outside a solo world (tree_load_calls), where it is driven; none otherwise. */
  static std::vector<std::vector<Flow>> load_calls(Group& group, std::uint64_t bytes, const NcclShape& shape);

private:
  NcclShapes shapes_;
};

/** @brief NCCL's choice per call (getAlgoInfo): ring or tree, and the protocol, by NCCL's tuning model; then the
 *  protocol's base latency (slept by every rank) and its bandwidth efficiency (bytes on the wire = M / efficiency). */
class Nccl final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  /** The calls of the ring's or the trees' plan NCCL chooses for `bytes`, with its protocol's bytes on the wire. */
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Several lanes (streams) where every tensor of the phase takes NCCL's trees and their whole stream may run computed
   *  (NcclTree::streamed): the trees' program (TreeStream), each aggregation on the wire as NCCL's protocol puts it,
   *  after its base latency. One lane keeps the trees computed aggregation by aggregation (drive): nullptr. */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;

private:
  /** True when every tensor size of the group's phase (Group::sizes) takes NCCL's trees. */
  bool trees_only(Group& group) const;
  /** NCCL's choice for `bytes` and the bytes its protocol puts on the wire, after the protocol's base latency. */
  struct Call {
    NcclAlgo algo;
    std::uint64_t wire_bytes;
    double base_s; ///< the protocol's base latency, slept by enter()
    /** What a member sleeps for the base latency from its own start, computed (SimGrid's sleeps last at least its
     *  resolution: SimClock::sleep); 0 without one. */
    double computed_sleep_s() const;
  };
  /** The choice, without its sleep. */
  static Call choose(const NcclTopology& topology, std::uint64_t bytes);
  /** choose(), then the base latency slept by the calling actor. */
  static Call enter(const NcclShape& shape, std::uint64_t bytes);
  NcclShapes shapes_;
};

/** @brief Algorithms chosen by message size (spec "rd<=8KiB,hd"): the first choice whose max_bytes holds the
 *  message, the last one above every threshold. */
class SizeSwitch final : public Collective {
public:
  struct Choice {
    std::uint64_t max_bytes;
    std::unique_ptr<Collective> collective;
  };
  explicit SizeSwitch(std::vector<Choice> choices);
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** Any choice's (the phase mirrors every size's calls together). */
  bool posts_apart(Group& group) const override;
  bool concurrent_flows(Group& group) const override;

private:
  std::vector<Choice> choices_;
  bool mixed_ = false; ///< Group::set_mixed for the groups it runs on
};

/** @brief A library's choice by group size (a stack profile's rules): the first rule with size <= max_ranks
 *  (0: any). */
class RankSwitch final : public Collective {
public:
  struct Rule {
    int max_ranks;
    std::unique_ptr<Collective> collective;
  };
  explicit RankSwitch(std::vector<Rule> rules)
      : rules_(std::move(rules))
  {
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  /** The one rule's for this group (the choice depends on the group alone). */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;
  bool posts_apart(Group& group) const override;
  bool concurrent_flows(Group& group) const override;

private:
  std::vector<Rule> rules_;
};

/** @brief The stack's per-call costs (call_overhead_s + call_copy_s_per_byte x bytes, slept by every rank), then
 *  the algorithm. */
class StackCall final : public Collective {
public:
  explicit StackCall(std::unique_ptr<Collective> inner)
      : inner_(std::move(inner))
  {
  }
  void prepare(CommWorld& world) const override { inner_->prepare(world); }
  std::vector<simgrid::s4u::ActorPtr> start(CommWorld& world, const std::vector<std::uint64_t>& sequence) const override
  {
    return inner_->start(world, sequence);
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
  bool drivable(Group& group, std::uint64_t bytes) const override;
  void drive(Group& group, std::uint64_t bytes) const override;
  std::vector<std::vector<Flow>> flow_calls(Group& group, std::uint64_t bytes) const override;
  bool posts_apart(Group& group) const override { return inner_->posts_apart(group); }
  bool concurrent_flows(Group& group) const override { return inner_->concurrent_flows(group); }
  /** The inner algorithm's, every member sleeping the call cost first (StreamProgram::add_call_cost), as drive()
   *  delays each member's start by it. */
  std::unique_ptr<StreamProgram> stream_program(Group& group) const override;

private:
  std::unique_ptr<Collective> inner_;
};

} // namespace ddlsim::collectives
