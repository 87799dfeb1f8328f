// Recursive doubling allreduce: log2 P exchanges of the whole vector.
#include "analytical/fluid_network.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddlsim::collectives {

void RecursiveDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  run_folded(g, self, bytes, [&](const PowerOfTwoFold& fold, int v) {
    for (int mask = 1; mask < fold.p2; mask <<= 1) {
      const int partner = fold.member(v ^ mask);
      g.send_recv(self, partner, bytes, partner);
      g.reduce(self, bytes);
    }
  });
}

bool RecursiveDoubling::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && (g.use_flow(AlgorithmId::Rd) || exact_flow_form(g));
}

bool RecursiveDoubling::exact_flow_form(Group& g) const
{
  const CollectiveOptions& o = g.options();
  if (o.fidelity != Fidelity::Auto || entry(AlgorithmId::Rd).flow != FlowForm::WhenExact ||
      g.size() <= kFlowAboveRanks || !flow_form_allowed(AlgorithmId::Rd, o))
    return false;
  if (g.world().lanes_solo()) {
    // Several lanes: the members' XOR translations are symmetries of every flow in flight (Group::xor_symmetric,
    // verified by whoever set it), so each step's transfers, one orbit of them, start, run and end together in every
    // lane whatever the other lanes carry: members never part, as in the step form.
    const int p = g.size();
    return (p & (p - 1)) == 0 && g.xor_symmetric();
  }
  if (!g.world().solo())
    return false;
  if (steps_alike(g) || member_timed_blocks(g) != nullptr)
    return true;
  // Several lanes in one program (stream_program): the blocks' symmetry alone, their inner pairs' links shared or not.
  return g.world().lanes() > 1 && g.whole_stream() && blocks_of(g) != nullptr;
}

bool RecursiveDoubling::steps_alike(Group& g)
{
  return g.cached(kRdExactKey, [&g] {
    const int p = g.size();
    if ((p & (p - 1)) != 0)
      return 0.0;               // a fold: the folded members end later than the others at message level
    for (int v = 1; v < p; ++v) // hosts of other speeds start their aggregations at other times (nominal times)
      if (g.world().host(g.endpoint(v))->get_speed() != g.world().host(g.endpoint(0))->get_speed())
        return 0.0;
    // Every step's transfers alike (one latency, one max-min rate): each starts, runs and ends with the others.
    std::vector<std::pair<int, int>> ends(static_cast<std::size_t>(p));
    for (int mask = 1; mask < p; mask <<= 1) {
      for (int v = 0; v < p; ++v)
        ends[v] = {g.endpoint(v), g.endpoint(v ^ mask)};
      if (!g.world().alike(ends))
        return 0.0;
    }
    return 1.0;
  }) > 0;
}

namespace {
/** The main algorithm's steps over `fold`: in step k every member's M to member XOR 2^k. */
std::vector<std::vector<Flow>> rd_steps(Group& g, const PowerOfTwoFold& fold, std::uint64_t bytes)
{
  std::vector<std::vector<Flow>> steps;
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    steps.emplace_back();
    steps.back().reserve(static_cast<std::size_t>(fold.p2));
    for (int v = 0; v < fold.p2; ++v)
      steps.back().push_back({g.endpoint(fold.member(v)), g.endpoint(fold.member(v ^ mask)), bytes});
  }
  return steps;
}
} // namespace

struct RecursiveDoubling::Blocks {
  bool exact = false;           ///< the translations' symmetry holds and the classes' network is the whole one
  bool inner_pairs_own = false; ///< each pair of a step inside a block has links no other transfer of rd's crosses
  int block = 0;                ///< b: member v ^ m, for m a multiple of b, is member v's image (v < b its block's)
  int steps = 0;                ///< log2 P
  int images = 0;               ///< P / b, blocks
  /** Member v's transfer in step k, v < b, in the quotient network (one link per class of links). */
  struct Transfer {
    std::vector<std::uint32_t> classes; ///< the classes of the links it shares
    double latency_s = 0;               ///< its route's
    double bandwidth = 0;               ///< its route's narrowest link (a fat pipe's included): its bound
    int partner = 0;                    ///< v ^ 2^k
  };
  std::vector<Transfer> transfers;                          ///< [v * steps + k]
  std::vector<std::vector<const CommWorld::Route*>> routes; ///< [v * steps + k][j]: block j's image's route
  std::vector<CommWorld::LinkFlows> links;                  ///< [v * steps + k]: link_flows_of(routes[...])
  std::vector<Flow> images_scratch;                         ///< blocks_plan's: one transfer's images
  std::vector<double> ends_scratch;
  std::vector<double> last_end; ///< per class: when the latest transfer over it of the plans so far ended
  analytical::FluidNetwork net; ///< a link per class, of capacity bandwidth / multiplicity
};

namespace {
/** The members' images under m, as an endpoint permutation (endpoints outside the group stay). */
std::vector<int> xor_perm(Group& g, int m)
{
  std::vector<int> perm(static_cast<std::size_t>(g.world().endpoints()));
  std::iota(perm.begin(), perm.end(), 0);
  for (int v = 0; v < g.size(); ++v)
    perm[static_cast<std::size_t>(g.endpoint(v))] = g.endpoint(v ^ m);
  return perm;
}
} // namespace

RecursiveDoubling::Blocks* RecursiveDoubling::member_timed_blocks(Group& g)
{
  Blocks* b = blocks_of(g);
  return b != nullptr && b->inner_pairs_own ? b : nullptr;
}

RecursiveDoubling::Blocks* RecursiveDoubling::blocks_of(Group& g)
{
  // Where rd's steps are not alike (DGX-1 nodes: NVLink pairs of one or two links, GPUs behind the NIC at different
  // PCIe distances), the members part: each starts a step when it and its partner are done with the last. Computing
  // that for every member costs what SimGrid does. But where the translations v -> v ^ m, for every multiple m of
  // a block size b, map every transfer of every step onto one, and every route onto its image's link for link (a
  // node of b GPUs and its place in a symmetric network), every block does what block 0 does at the same instants:
  // its members start together (checked per plan), and the transfers of one step of all blocks are one orbit. Then
  // block 0's members, run step by step in a FluidNetwork over the classes of links (orbits), are the message level.
  if (!g.member_timed() || g.mixed())
    return nullptr;
  Blocks& b = g.cached_object<Blocks>(kRdBlocksKey, [&g] {
    Blocks b;
    CommWorld& world = g.world();
    const int p = g.size();
    if (p < 2 || (p & (p - 1)) != 0)
      return b; // a fold: its members sit steps out
    std::vector<std::vector<Flow>> steps;
    for (int mask = 1; mask < p; mask <<= 1) {
      steps.emplace_back();
      for (int v = 0; v < p; ++v)
        steps.back().push_back({g.endpoint(v), g.endpoint(v ^ mask), 1});
    }
    // The smallest block: halve it while the new translation is a symmetry too (each is checked link for link).
    int block = p;
    while (block > 1 && world.symmetric_under(steps, xor_perm(g, block / 2)))
      block /= 2;
    if (block == p)
      return b;
    b.block = block;
    b.steps = static_cast<int>(steps.size());
    b.images = p / block;
    // A step inside a block (mask < b): its pair's links must carry no other transfer of rd's, so that a pair's
    // next aggregation, which starts when both are done, meets none of another's on them. Steps between blocks come
    // after every step inside: a member reaches one only when its whole block is done with the aggregation before, and
    // so is every block (they run alike), so those links are then free of it too (checked per plan: last_end).
    std::unordered_map<std::uint32_t, std::pair<int, int>> pair_of; // link -> the pair of an inner step crossing it
    std::vector<const CommWorld::Route*> all;
    for (int k = 0; k < b.steps; ++k)
      for (const Flow& f : steps[static_cast<std::size_t>(k)]) {
        const CommWorld::Route& r = world.cached_route(f.from, f.to);
        all.push_back(&r);
        if ((1 << k) < block)
          for (std::uint32_t id : r.shared_ids)
            pair_of.emplace(id, std::make_pair(std::min(f.from, f.to), std::max(f.from, f.to)));
      }
    if (!CommWorld::fluid_exact(all))
      return b;
    b.inner_pairs_own = true;
    for (int k = 0; k < b.steps && b.inner_pairs_own; ++k)
      for (const Flow& f : steps[static_cast<std::size_t>(k)])
        for (std::uint32_t id : world.cached_route(f.from, f.to).shared_ids) {
          auto it = pair_of.find(id);
          if (it != pair_of.end() && it->second != std::make_pair(std::min(f.from, f.to), std::max(f.from, f.to)))
            b.inner_pairs_own = false; // (one plan at a time needs it; the lanes' program does not)
        }
    // The routes of block 0's transfers and of their images (the route's k-th link maps to the image route's k-th).
    for (int v = 0; v < block; ++v)
      for (int k = 0; k < b.steps; ++k) {
        b.routes.emplace_back();
        for (int j = 0; j < b.images; ++j) {
          const int m = j * block;
          b.routes.back().push_back(&world.cached_route(g.endpoint(v ^ m), g.endpoint(v ^ (1 << k) ^ m)));
        }
        b.links.push_back(CommWorld::link_flows_of(b.routes.back()));
      }
    ImageClasses classes = image_classes(b.routes);
    if (!classes.exact)
      return b;
    for (int v = 0; v < block; ++v)
      for (int k = 0; k < b.steps; ++k) {
        const int w = v ^ (1 << k);
        const CommWorld::Route& r = *b.routes[static_cast<std::size_t>(v * b.steps + k)][0];
        Blocks::Transfer t;
        t.latency_s = r.latency_s;
        t.bandwidth = r.bandwidth;
        t.partner = w;
        t.classes = std::move(classes.classes[static_cast<std::size_t>(v * b.steps + k)]);
        b.transfers.push_back(std::move(t));
      }
    b.net.solve_by_components(true);
    for (std::uint32_t c = 0; c < classes.capacity.size(); ++c)
      b.net.set_capacity(c, classes.capacity[c]);
    b.last_end.assign(classes.capacity.size(), -std::numeric_limits<double>::infinity());
    b.exact = true;
    return b;
  });
  return b.exact ? &b : nullptr;
}

void RecursiveDoubling::blocks_plan(Group& g, Blocks& b, std::uint64_t bytes)
{
  // As at message level (RecursiveDoubling::allreduce, CommWorld::exchange, post_send, received): in step k member v
  // posts its receive from w = v ^ 2^k when it starts the step, its send after its costs of sending
  // (CommWorld::send_cost_s); each transfer starts when both ends are posted and runs in SimGrid's model
  // (FluidNetwork, as run_fluid gives it flows); v goes on when its send and its receive are done, after its receive
  // overhead and the reduction. A partner in another block is v's image, whose times are v's.
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  Group::MemberTimes* times = g.member_times();
  if (times == nullptr || times->starts.size() != static_cast<std::size_t>(g.size()))
    throw Error("internal: rd's member-timed form needs every member's start");
  const int block = b.block, steps = b.steps;
  for (int v = 0; v < g.size(); ++v)
    if (times->starts[static_cast<std::size_t>(v)] != times->starts[static_cast<std::size_t>(v & (block - 1))])
      throw Error("internal: rd's member-timed form needs every block to start as block 0 does");
  const double message = double(bytes);
  const double after_s = o.stack.recv_overhead_s; // received(): one landed message per step
  const double reduce_s = o.reduce_s_per_byte > 0 && bytes > 0 ? o.reduce_s_per_byte * message : 0.0;
  // Time moves as SimGrid's clock does (analytical::SimClock): each sleep lasts at least 1 ns, and every event due
  // within 1 ns of a step happens at it. A member's sleeps: its costs before a send (post_send, one sleep), its receive
  // overhead (received), its reduction (CommWorld::reduce).
  struct Member {
    int step = 0;
    double at = 0;        ///< when it started its step (posted its receive)
    bool arrived = false; ///< it has started step `step` (its receive posted)
    bool posted = false;  ///< its send is posted
    bool sent = false, got = false;
    double done = 0; ///< the later end of its send and its receive
  };
  std::vector<Member> m(static_cast<std::size_t>(block));
  std::vector<double> starts(static_cast<std::size_t>(block * steps), 0.0), ends(starts.size(), 0.0);
  std::vector<int> owner; // flow id -> member
  analytical::FluidNetwork& net = b.net;
  net.restart();
  analytical::SimClock clock;
  enum : int { kArrive, kPostSend, kReceived, kReduced };
  analytical::FluidNetwork::FlowSpec spec;
  double now = 0;
  auto partner = [&](int v) { return b.transfers[static_cast<std::size_t>(v * steps + m[v].step)].partner; };
  // v's send starts when it is posted and its receiver has posted the receive (an image in another block: at once).
  auto start_send = [&](int v) {
    Member& me = m[static_cast<std::size_t>(v)];
    const int w = partner(v);
    if (!me.posted ||
        (w < block && !(m[static_cast<std::size_t>(w)].arrived && m[static_cast<std::size_t>(w)].step == me.step)))
      return;
    me.posted = false;
    const std::size_t slot = static_cast<std::size_t>(v * steps + me.step);
    const Blocks::Transfer& t = b.transfers[slot];
    for (std::uint32_t c : t.classes)
      if (now < b.last_end[c])
        throw Error("internal: rd's member-timed form found an aggregation's transfer meeting the last one's");
    spec.links = t.classes;
    set_cm02(spec, o.stack, t.latency_s, t.bandwidth, message, message);
    spec.tag = slot + 1;
    const std::size_t id = net.start(now, spec);
    world.note_computed(1);
    starts[slot] = now;
    if (owner.size() <= id)
      owner.resize(id + 1, -1);
    owner[id] = v;
  };
  auto wake = [&](int v, int what) {
    Member& me = m[static_cast<std::size_t>(v)];
    if (what == kReceived && reduce_s > 0) {
      clock.sleep(now, reduce_s, static_cast<std::size_t>(v), kReduced);
      return;
    }
    if (what == kReceived || what == kReduced) {
      ++me.step;
      what = kArrive;
    }
    if (what == kArrive) {
      me.at = now;
      if (me.step == steps)
        return; // done: its end
      me.arrived = true;
      me.sent = me.got = false;
      const int w = partner(v);
      const double cost = world.send_cost_s(g.endpoint(v), g.endpoint(w), bytes);
      if (cost > 0)
        clock.sleep(now, cost, static_cast<std::size_t>(v), kPostSend);
      else
        me.posted = true;
      start_send(v);
      if (w < block)
        start_send(w); // w's send waited for this receive
      return;
    }
    me.posted = true; // kPostSend
    start_send(v);
  };
  for (int v = 0; v < block; ++v)
    clock.at(times->starts[static_cast<std::size_t>(v)], static_cast<std::size_t>(v), kArrive);
  std::vector<std::pair<std::size_t, int>> woken;
  std::vector<std::size_t> finished;
  while (clock.next(net, now)) {
    clock.due(now, woken);
    finished = net.finished();
    for (std::size_t id : finished) {
      const int v = owner[id];
      net.release(id);
      Member& me = m[static_cast<std::size_t>(v)];
      ends[static_cast<std::size_t>(v * steps + me.step)] = now;
      const int w = partner(v);
      me.sent = true;
      if (w >= block)
        me.got = true; // its image's send to it
      else
        m[static_cast<std::size_t>(w)].got = true;
      for (int u : {v, w}) {
        if (u >= block)
          continue;
        Member& x = m[static_cast<std::size_t>(u)];
        if (x.arrived && x.sent && x.got) { // its exchange is done: received(), then the reduction
          x.arrived = false;
          if (after_s > 0)
            clock.sleep(now, after_s, static_cast<std::size_t>(u), kReceived);
          else
            wake(u, kReceived);
        }
      }
    }
    for (const auto& [who, what] : woken)
      wake(static_cast<int>(who), what);
  }
  for (const Member& me : m)
    if (me.step != steps)
      throw Error("internal: rd's member-timed form stalled");
  // Every block's transfers, reported at block 0's times, and the members' ends.
  const int channel = world.driver_channel();
  double last = 0;
  times->ends.assign(static_cast<std::size_t>(g.size()), 0.0);
  for (int v = 0; v < block; ++v)
    for (int k = 0; k < steps; ++k) {
      const std::size_t slot = static_cast<std::size_t>(v * steps + k);
      for (std::uint32_t c : b.transfers[slot].classes)
        b.last_end[c] = std::max(b.last_end[c], ends[slot]);
      b.images_scratch.clear();
      for (int j = 0; j < b.images; ++j)
        b.images_scratch.push_back(
            {g.endpoint(v ^ (j * block)), g.endpoint(b.transfers[slot].partner ^ (j * block)), bytes});
      b.ends_scratch.assign(b.images_scratch.size(), ends[slot]);
      world.account_batch(b.images_scratch, starts[slot], b.ends_scratch, b.routes[slot], b.links[slot], channel);
    }
  for (int v = 0; v < g.size(); ++v) {
    const double end = m[static_cast<std::size_t>(v & (block - 1))].at;
    times->ends[static_cast<std::size_t>(v)] = end;
    last = std::max(last, end);
  }
  CommWorld::delay_until(last);
}

namespace {
/** @brief rd's member-timed blocks (RecursiveDoubling::Blocks) for every aggregation of several in-order streams at
 *  once: block 0's members, each in one aggregation per lane, step by step in the blocks' network, every other block
 *  its image. Each step is blocks_plan's (the receive posted at the step's start, the send after its costs, starting
 *  once the partner has posted its receive of the same aggregation and step; the receive overhead and the reduction
 *  once both have landed), so that two lanes' transfers meet on the links they share as at message level. The
 *  translations that make the other blocks images map every transfer in flight onto one of block 0's at the same
 *  instants, whatever the lanes carry, provided every member starts each aggregation when its block-0 image does
 *  (checked as each starts): so the classes' network is the whole network's, lanes and all. */
class RdStream final : public ImageStream {
public:
  RdStream(Group& g, RecursiveDoubling::Blocks& b)
      : ImageStream(g, static_cast<std::size_t>(b.block), static_cast<std::size_t>(b.images), b.net,
                    "rd's lanes' program", "block")
      , g_(g)
      , b_(b)
      , block_(static_cast<std::size_t>(b.block))
      , steps_(static_cast<std::size_t>(b.steps))
  {
    ImageStream::set_lanes({g.channel()});
  }

private:
  enum : int { kBegin = kStart + 1, kPostSend, kReceived, kReduced };
  /** Block 0's member v in one lane, in its aggregation (queues_) at step `step`. */
  struct Member {
    std::size_t step = 0;
    bool arrived = false; ///< it has started step `step` (its receive posted)
    bool posted = false;  ///< its send is posted
    bool sent = false, got = false;
  };

  std::size_t image_of(std::size_t v, std::size_t j) const override { return v ^ (j * block_); }
  std::size_t representative_of(std::size_t v) const override { return v < block_ ? v : block_; }
  void reset_lanes() override { member_.assign(channels_.size() * block_, Member{}); }
  Member& m(std::size_t l, std::size_t v) { return member_[l * block_ + v]; }
  std::size_t partner(std::size_t l, std::size_t v) { return v ^ (std::size_t{1} << m(l, v).step); }

  void wake(std::size_t l, std::size_t v, int what) override
  {
    switch (what) {
    case kStart: // (its images with it: each was given this aggregation, ready no later)
      after(queues_.delay_s(l, start_images(l, v)), l, v, kBegin); // a stack's call cost first (StackCall)
      return;
    case kBegin:
      arrive(l, v);
      return;
    case kPostSend:
      m(l, v).posted = true;
      start_send(l, v);
      return;
    case kReceived:
      if (o_.reduce_s_per_byte > 0 && bytes_of(l, v) > 0) {
        after(o_.reduce_s_per_byte * double(bytes_of(l, v)), l, v, kReduced);
        return;
      }
      [[fallthrough]];
    case kReduced:
      ++m(l, v).step;
      arrive(l, v);
      return;
    default:
      throw Error("internal: rd's lanes' program woken for nothing");
    }
  }

  /** Member v starts its step (or, past the last, ends its aggregation, and so do its images). */
  void arrive(std::size_t l, std::size_t v)
  {
    Member& me = m(l, v);
    if (me.step == steps_) {
      me = Member{};
      end_images(l, v);
      return;
    }
    me.arrived = true;
    me.sent = me.got = false;
    const std::size_t w = partner(l, v);
    const double cost =
        world_.send_cost_s(g_.endpoint(static_cast<int>(v)), g_.endpoint(static_cast<int>(w)), bytes_of(l, v));
    if (cost > 0)
      after(cost, l, v, kPostSend);
    else
      me.posted = true;
    start_send(l, v);
    if (w < block_)
      start_send(l, w); // w's send waited for this receive
  }

  /** v's send starts once posted and its partner has posted its receive of the same step (an image in another block:
   *  at once, being v's). Of the same aggregation too: a pair goes through its steps together, so a partner at v's
   *  step has not ended the step in v's aggregation (v's send to it is not done) nor begun another. */
  void start_send(std::size_t l, std::size_t v)
  {
    Member& me = m(l, v);
    const std::size_t w = partner(l, v);
    if (!me.posted || (w < block_ && !(m(l, w).arrived && m(l, w).step == me.step)))
      return;
    me.posted = false;
    const std::size_t slot = v * steps_ + me.step;
    const RecursiveDoubling::Blocks::Transfer& t = b_.transfers[slot];
    start_transfer({l, v, slot, now_}, t.classes, t.latency_s, t.bandwidth, bytes_of(l, v));
  }

  /** Flow `id` landed: its images are reported; each end whose send and receive are both done goes on. */
  void landed(const InFlight& f) override
  {
    const std::size_t l = f.lane, v = f.rep;
    const std::uint64_t bytes = bytes_of(l, v);
    images_flows_.clear();
    for (std::size_t j = 0; j < images_; ++j)
      images_flows_.push_back({g_.endpoint(static_cast<int>(image_of(v, j))),
                               g_.endpoint(static_cast<int>(image_of(b_.transfers[f.slot].partner, j))), bytes});
    report_images(f, images_flows_, b_.routes[f.slot], b_.links[f.slot]);
    Member& me = m(l, v);
    const std::size_t w = partner(l, v);
    me.sent = true;
    if (w >= block_)
      me.got = true; // its image's send to it
    else
      m(l, w).got = true;
    for (std::size_t u : {v, w}) {
      if (u >= block_)
        continue;
      Member& x = m(l, u);
      if (x.arrived && x.sent && x.got) { // its exchange is done: the receive overhead, then the reduction
        x.arrived = false;
        after(o_.stack.recv_overhead_s, l, u, kReceived);
      }
    }
  }

  Group& g_;
  RecursiveDoubling::Blocks& b_;
  std::size_t block_, steps_;
  std::vector<Member> member_; ///< block 0's, [lane * block + v]
  std::vector<Flow> images_flows_;
};
} // namespace

std::unique_ptr<StreamProgram> RecursiveDoubling::stream_program(Group& g) const
{
  // One lane: aggregation by aggregation (flow_plan: the step form, or blocks_plan). Several lanes, where the blocks'
  // form is the message level for one: every lane's aggregations in one program over the blocks' network.
  if (g.world().lanes() <= 1 || !whole_stream_allowed(g, AlgorithmId::Rd) || !exact_flow_form(g))
    return nullptr;
  Blocks* blocks = blocks_of(g);
  if (blocks == nullptr)
    return nullptr;
  g.world().note_exact_form(AlgorithmId::Rd);
  return std::make_unique<RdStream>(g, *blocks);
}

std::vector<std::vector<Flow>> RecursiveDoubling::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (!drivable(g, bytes))
    return {};
  return folded_calls(g, bytes, rd_steps(g, PowerOfTwoFold(g.size()), bytes));
}

bool RecursiveDoubling::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps for every member at once: in step k every member sends M to member XOR 2^k, after the
  // overheads (CommWorld::run_step: with a stack's costs per message), then reduces M. On a uniform platform this
  // equals the message level exactly; every step waits for its slowest pair (docs/collectives.md, "Fidelity"); a solo
  // world simulates each step's components once per class.
  if (g.options().fidelity == Fidelity::Auto)
    g.world().note_exact_form(AlgorithmId::Rd); // exact_flow_form said so (drivable)
  if (g.options().fidelity == Fidelity::Auto && g.world().solo() && !steps_alike(g))
    if (Blocks* blocks = member_timed_blocks(g)) { // the only other way exact_flow_form says so in a solo world
      blocks_plan(g, *blocks, bytes);
      return true;
    }
  run_folded_flows(g, bytes, [&](const PowerOfTwoFold& fold) {
    const CollectiveOptions& o = g.options();
    for (const auto& flows : rd_steps(g, fold, bytes)) {
      g.world().run_step(flows);
      CommWorld::delay(o.reduce_s_per_byte * double(bytes));
    }
  });
  return true;
}

} // namespace ddlsim::collectives
