// Pipelined trees at message level, computed transfer by transfer in ddlsim's own network (analytical::FluidNetwork)
// where every link is its member's own: docs/collectives.md, "The double binary tree, member-timed and computed".
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

namespace ddlsim::collectives {

TreeLinks tree_links(const TreeFlows& t)
{
  TreeLinks out;
  // Per link: the members every transfer crossing it so far has (at most two: the first one's ends; -1: none left),
  // the sum of the narrowest bandwidths of the routes crossing it (one per tree, edge and direction), each such
  // route's narrowest shared link before it and after it (its feeder and its drain: id, bandwidth; `unfed`,
  // `undrained` where a route has none), its capacity.
  using Links = std::vector<std::pair<std::uint32_t, double>>;
  struct Crossing {
    std::array<int, 2> common{-2, -2};
    double sum_fastest = 0;
    Links feeders, drains;
    bool unfed = false, undrained = false;
    double capacity = 0;
  };
  std::vector<Crossing> links;
  std::vector<const CommWorld::Route*> routes;
  for (std::size_t j = 0; j < t.trees.size(); ++j)
    for (std::size_t c = 0; c < t.parents[j].size(); ++c) {
      const int p = t.parents[j][c];
      if (p < 0)
        continue; // the root
      const int child = static_cast<int>(c);
      for (const CommWorld::Route* route : t.routes[j][c]) {
        if (route == nullptr)
          return out;
        routes.push_back(route);
        const std::size_t n = route->shared_ids.size();
        for (std::size_t k = 0; k < n; ++k) {
          const std::uint32_t id = route->shared_ids[k];
          if (id >= links.size())
            links.resize(id + 1);
          Crossing& l = links[id];
          if (l.common[0] == -2)
            l.common = {child, p};
          for (int& v : l.common)
            if (v != child && v != p)
              v = -1;
          l.sum_fastest += route->bandwidth;
          l.capacity = route->shared_bandwidth[k];
          auto narrowest = [&](std::size_t from, std::size_t to, Links& into, bool& none) {
            std::size_t m = to;
            for (std::size_t i = from; i < to; ++i)
              if (m == to || route->shared_bandwidth[i] < route->shared_bandwidth[m])
                m = i;
            if (m == to)
              none = true;
            else
              into.emplace_back(route->shared_ids[m], route->shared_bandwidth[m]);
          };
          narrowest(0, k, l.feeders, l.unfed);
          narrowest(k + 1, n, l.drains, l.undrained);
        }
      }
    }
  // A link crossed by transfers without a common member still never meets two aggregations' transfers in a way that
  // changes a rate when no set of transfers can load it past its bandwidth: then it limits none, and max-min sharing
  // gives every transfer the rate it gets without it. Three bounds on its load, any one enough:
  // - One transfer at a time per (tree, edge, direction): in each tree a member sends over an edge one chunk at a time,
  //   and posts the next aggregation's transfers only once its own part of this one has ended. Their routes' narrowest
  //   bandwidths summed (NCCL's trees across a non-blocking fat tree's leaves: few tree edges cross a leaf's uplink).
  // - Every transfer crossing it crossed its feeder first, whose own bandwidth bounds all that crosses it: the distinct
  //   feeders' bandwidths summed (the NICs of a leaf's nodes, whose sum is a non-blocking leaf uplink's bandwidth,
  //   however many tree edges cross it: dbtree's heaps).
  // - The same with the drains, the links every transfer crosses after it (the way down into a leaf).
  auto sum_distinct = [](Links& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    double sum = 0;
    for (const auto& link : v)
      sum += link.second;
    return sum;
  };
  // Left out of the computed network: a link whose bound holds there too. The count does (each flow keeps its route's
  // narrowest bandwidth as its bound); feeders and drains do where they are all links that stay, one member's own
  // (two links bounded only by each other, each the other's feeder or drain, are both exact and both needed).
  auto owned = [&links](std::uint32_t id) { return links[id].common[0] >= 0 || links[id].common[1] >= 0; };
  auto all_owned = [&owned](const Links& v) {
    return std::all_of(v.begin(), v.end(), [&owned](const auto& link) { return owned(link.first); });
  };
  for (std::uint32_t id = 0; id < links.size(); ++id) {
    Crossing& l = links[id];
    if (l.common[0] == -2 || owned(id))
      continue; // no transfer, or one member's own
    // Relative 1e-12: a capacity computed as the sum of the links it serves (a fat tree's uplink) may round below it.
    auto carries = [&l](double load) { return l.capacity >= load * (1 - 1e-12); };
    const bool by_count = carries(l.sum_fastest);
    const bool by_feeders = !l.unfed && carries(sum_distinct(l.feeders));
    const bool by_drains = !l.undrained && carries(sum_distinct(l.drains));
    if (!by_count && !by_feeders && !by_drains)
      return out;
    if (by_count || (by_feeders && all_owned(l.feeders)) || (by_drains && all_owned(l.drains)))
      out.left_out.push_back(id);
  }
  if (!CommWorld::fluid_exact(routes)) {
    out.left_out.clear();
    return out;
  }
  out.exact = true;
  return out;
}

bool trees_links_owned(const TreeFlows& t)
{
  return tree_links(t).exact;
}

ComputedTrees computed_trees_of(const TreeFlows& t, const TreeLinks& found)
{
  // A link that limits no transfer (tree_links) is left out of the flows: their max-min shares are the same
  // without it, and it would join every flow across it into one component to solve again at each event (a fat tree's
  // leaf uplinks join all the leaves).
  ComputedTrees c;
  c.fluid.solve_by_components(true);
  std::vector<char> left_out;
  for (const std::uint32_t id : found.left_out) {
    if (id >= left_out.size())
      left_out.resize(id + 1, 0);
    left_out[id] = 1;
  }
  c.first.push_back(0);
  for (const auto& tree : t.routes)
    for (const auto& up_down : tree) {
      for (const bool up : {false, true}) { // edge e's direction: e % 2 == 1 up (routes[.][.][0]), 0 down ([1])
        const CommWorld::Route* r = up_down[up ? 0 : 1];
        c.hops.push_back(r != nullptr ? ComputedTrees::Hop{r->latency_s, r->bandwidth} : ComputedTrees::Hop{});
        if (r != nullptr)
          for (std::size_t k = 0; k < r->shared_ids.size(); ++k) {
            const std::uint32_t id = r->shared_ids[k];
            if (id < left_out.size() && left_out[id] != 0)
              continue;
            c.links.push_back(id);
            c.fluid.set_capacity(id, r->shared_bandwidth[k]);
          }
        c.first.push_back(static_cast<std::uint32_t>(c.links.size()));
      }
    }
  return c;
}

void computed_trees_plan(Group& g, TreeFlows& t, const std::vector<std::uint64_t>& bytes, ComputedTrees& net,
                         AlgorithmId chunks_of)
{
  // Each member runs every tree at once (as fork_join's helper does its second one), and in each tree the message
  // level's program (TreeAllreduce::allreduce): per chunk a receive from each child, then its reduction, then the send
  // to the parent; then per chunk the receive from the parent and a send to each child. A receive is posted when the
  // member reaches it, a send after the sender's costs (CommWorld::post_send: one sleep of send_cost_s), a transfer
  // starts when both are posted and runs in SimGrid's model (FluidNetwork, as run_fluid gives it flows); the sender
  // goes on when it ends, the receiver after its receive overhead (one sleep) and, in the reduce, its reduction
  // (another). Time moves as SimGrid's clock does (SimClock): a sleep lasts at least 1 ns, and every event due within
  // 1 ns of a step, a sleep's end or a transfer's, happens at that step.
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  Group::MemberTimes* times = g.member_times();
  const std::size_t members = static_cast<std::size_t>(g.size());
  if (times == nullptr || times->starts.size() != members)
    throw Error("internal: the computed trees need every member's start");
  const std::size_t trees = t.trees.size();
  if (net.first.size() != trees * members * 2 + 1)
    throw Error("internal: the computed trees' network is not of these trees (computed_trees_of)");
  std::vector<std::uint64_t> chunks(trees);
  for (std::size_t j = 0; j < trees; ++j)
    chunks[j] = analytical::pipeline_chunks(bytes[j], pipeline_chunk_bytes(chunks_of, o, bytes[j]));
  auto size_of = [&](std::size_t j, std::uint64_t i) { return chunk_bytes(bytes[j], chunks[j], i); };
  // A member's program in one tree: in the reduce, op c < children is the receive from child c, op children the send
  // to the parent; in the broadcast, op -1 the receive from the parent, op c the send to child c.
  struct Program {
    int phase = 0; ///< 0 reduce, 1 broadcast, 2 done
    std::uint64_t chunk = 0;
    int op = 0;
    double end = 0;
  };
  // An edge's transfer in one direction: whether each end has posted it, and when it started.
  struct Edge {
    bool sent = false, asked = false;
    std::uint64_t chunk = 0;
    double start = 0;
  };
  std::vector<Program> prog(trees * members);
  std::vector<Edge> edges(trees * members * 2); // [(j * members + child) * 2 + up]
  std::vector<std::size_t> owner;               // flow id -> edge
  analytical::FluidNetwork& fluid = net.fluid;
  fluid.restart();
  analytical::SimClock clock;
  enum : int { kRun, kPostSend, kReceived };
  analytical::FluidNetwork::FlowSpec spec;
  double now = 0;
  auto start_if_posted = [&](std::size_t e) {
    Edge& x = edges[e];
    if (!x.sent || !x.asked)
      return;
    const std::size_t j = e / 2 / members;
    const double size = double(size_of(j, x.chunk));
    spec.links.data = net.links.data() + net.first[e];
    spec.links.size = net.first[e + 1] - net.first[e];
    set_cm02(spec, o.stack, net.hops[e].latency_s, net.hops[e].bandwidth, size, size);
    spec.tag = e + 1;
    const std::size_t id = fluid.start(now, spec);
    world.note_computed(1);
    x.start = now;
    if (owner.size() <= id)
      owner.resize(id + 1);
    owner[id] = e;
  };
  // The edge and the sender of member v's current op in tree j (a send or a receive).
  auto edge_of = [&](std::size_t j, std::size_t v) {
    const Program& p = prog[j * members + v];
    if (p.phase == 0) // the reduce: from child op, or to the parent (the member's own edge, up)
      return (j * members + (p.op < static_cast<int>(t.trees[j].children[v].size())
                                 ? static_cast<std::size_t>(t.trees[j].children[v][static_cast<std::size_t>(p.op)])
                                 : v)) *
                 2 +
             1;
    return (j * members +
            (p.op < 0 ? v : static_cast<std::size_t>(t.trees[j].children[v][static_cast<std::size_t>(p.op)]))) *
           2;
  };
  auto post = [&](std::size_t j, std::size_t v, bool send) {
    const std::size_t e = edge_of(j, v);
    edges[e].chunk = prog[j * members + v].chunk;
    (send ? edges[e].sent : edges[e].asked) = true;
    start_if_posted(e);
  };
  // Runs member v's program in tree j from now until it waits on a transfer or a sleep.
  auto run = [&](std::size_t j, std::size_t v) {
    Program& p = prog[j * members + v];
    const std::vector<int>& children = t.trees[j].children[v];
    const int parent = t.parents[j][v];
    const int kids = static_cast<int>(children.size());
    for (;;) {
      if (p.phase == 0 && p.chunk == chunks[j]) {
        p.phase = 1;
        p.chunk = 0;
        p.op = parent >= 0 ? -1 : 0;
      }
      if (p.phase == 1 && p.chunk == chunks[j]) {
        p.phase = 2;
        p.end = now;
        return;
      }
      const bool send = p.phase == 0 ? p.op == kids && parent >= 0 : p.op >= 0 && p.op < kids;
      const bool receive = p.phase == 0 ? p.op < kids : p.op == -1;
      if (receive) {
        post(j, v, false);
        return;
      }
      if (send) {
        const int to = p.phase == 0 ? parent : children[static_cast<std::size_t>(p.op)];
        const double cost = world.send_cost_s(g.endpoint(static_cast<int>(v)), g.endpoint(to), size_of(j, p.chunk));
        if (cost > 0)
          clock.sleep(now, cost, j * members + v, kPostSend);
        else
          post(j, v, true);
        return;
      }
      ++p.chunk;
      p.op = p.phase == 0 || parent < 0 ? 0 : -1;
    }
  };
  auto wake = [&](std::size_t who, int what) {
    const std::size_t j = who / members, v = who % members;
    Program& p = prog[who];
    if (what == kPostSend) {
      post(j, v, true);
    } else if (what == kReceived) { // the receive overhead slept; in the reduce, the reduction
      const double reduce = o.reduce_s_per_byte * double(size_of(j, p.chunk));
      ++p.op;
      if (p.phase == 0 && o.reduce_s_per_byte > 0 && reduce > 0)
        clock.sleep(now, reduce, who, kRun);
      else
        run(j, v);
    } else {
      run(j, v);
    }
  };
  for (std::size_t v = 0; v < members; ++v)
    for (std::size_t j = 0; j < trees; ++j)
      clock.at(times->starts[v], j * members + v, kRun); // each member from its start
  const int channel = world.driver_channel();
  const double recv_s = o.stack.recv_overhead_s;
  std::vector<std::size_t> finished;
  std::vector<std::pair<std::size_t, int>> woken;
  while (clock.next(fluid, now)) {
    clock.due(now, woken);
    finished = fluid.finished();
    for (std::size_t id : finished) {
      const std::size_t e = owner[id];
      fluid.release(id);
      Edge& x = edges[e];
      x.sent = x.asked = false;
      const std::size_t j = e / 2 / members, child = e / 2 % members;
      const bool up = e % 2 == 1;
      const std::size_t parent = static_cast<std::size_t>(t.parents[j][child]);
      const std::size_t from = up ? child : parent, to = up ? parent : child;
      world.account({g.endpoint(static_cast<int>(from)), g.endpoint(static_cast<int>(to)), size_of(j, x.chunk)},
                    x.start, now, *t.routes[j][child][up ? 0 : 1], channel);
      ++prog[j * members + from].op; // the sender goes on
      run(j, from);
      if (recv_s > 0) // the receiver: its receive overhead (CommWorld::received), then kReceived
        clock.sleep(now, recv_s, j * members + to, kReceived);
      else
        wake(j * members + to, kReceived);
    }
    for (const auto& [who, what] : woken)
      wake(who, what);
  }
  times->ends.assign(members, 0.0);
  double last = 0;
  for (std::size_t v = 0; v < members; ++v) {
    for (std::size_t j = 0; j < trees; ++j) {
      const Program& p = prog[j * members + v];
      if (p.phase != 2)
        throw Error("internal: the computed trees stalled");
      times->ends[v] = std::max(times->ends[v], p.end);
    }
    last = std::max(last, times->ends[v]);
  }
  CommWorld::delay_until(last);
}

} // namespace ddlsim::collectives
