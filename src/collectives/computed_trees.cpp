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

void dominated_links(const std::vector<const CommWorld::Route*>& routes, std::vector<std::uint32_t>& left_out)
{
  // Link l is left out where another link m, narrower by a margin, is crossed by every route that crosses l, and
  // neither is crossed twice by one route: the transfers on l are then always among those on m, so l is never full
  // while m has room, and in the fill (FluidNetwork::fill) m's level stays below l's as long as l has an unfixed flow
  // (it has at most l's bandwidth less the same fixed rates, shared by at least the same weights). m is filled first
  // and fixes every flow l has: l changes no rate, and no order in which other links are filled. Left out, the
  // computed shares are the same to the bit, and each transfer crosses fewer links (on DGX-1 nodes a route's PCIe
  // switch links, behind its NICs). The margin (relative 1e-6) keeps that order clear of rounding.
  constexpr double kNarrower = 1 - 1e-6;
  std::vector<std::uint32_t> crossed;     // per link: routes crossing it so far
  std::vector<std::uint32_t> candidate;   // per link: the narrower links every route crossing it crossed (flattened)
  std::vector<std::uint32_t> first, size; // per link: its candidates, candidate[first, first + size)
  std::vector<char> twice;                // per link: a route crosses it twice
  std::vector<double> capacity;
  std::vector<const CommWorld::Route*> distinct = routes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (const CommWorld::Route* r : distinct)
    for (std::size_t k = 0; k < r->shared_ids.size(); ++k) {
      const std::uint32_t id = r->shared_ids[k];
      if (id >= crossed.size()) {
        crossed.resize(id + 1, 0);
        first.resize(id + 1, 0);
        size.resize(id + 1, 0);
        twice.resize(id + 1, 0);
        capacity.resize(id + 1, 0);
      }
      capacity[id] = r->shared_bandwidth[k];
      for (std::size_t i = 0; i < k; ++i)
        if (r->shared_ids[i] == id)
          twice[id] = 1;
    }
  for (const CommWorld::Route* r : distinct) {
    const auto& ids = r->shared_ids;
    for (std::uint32_t l : ids) {
      if (crossed[l]++ == 0) { // the first route: its narrower links
        first[l] = static_cast<std::uint32_t>(candidate.size());
        for (std::uint32_t m : ids)
          if (m != l && capacity[m] < capacity[l] * kNarrower)
            candidate.push_back(m);
        size[l] = static_cast<std::uint32_t>(candidate.size()) - first[l];
        continue;
      }
      std::uint32_t kept = 0; // the others: only the candidates this route crosses too
      for (std::uint32_t i = 0; i < size[l]; ++i) {
        const std::uint32_t m = candidate[first[l] + i];
        if (std::find(ids.begin(), ids.end(), m) != ids.end())
          candidate[first[l] + kept++] = m;
      }
      size[l] = kept;
    }
  }
  std::vector<char> out(crossed.size(), 0);
  for (std::uint32_t id : left_out)
    out[id] = 1;
  for (std::uint32_t l = 0; l < crossed.size(); ++l) {
    if (crossed[l] == 0 || out[l] != 0 || twice[l] != 0)
      continue;
    for (std::uint32_t i = 0; i < size[l]; ++i)
      if (twice[candidate[first[l] + i]] == 0) {
        left_out.push_back(l);
        break;
      }
  }
}

TreeLinks tree_links(const TreeFlows& t, int lanes)
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
  // - One transfer at a time per (tree, edge, direction) and lane: in each tree a member sends over an edge one
  //   chunk at a time, and posts the next aggregation's transfers only once its own part of this one has ended.
  //   Their routes' narrowest bandwidths summed, times the lanes (NCCL's trees across a non-blocking fat tree's
  //   leaves: few tree edges cross a leaf's uplink).
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
  // narrowest bandwidth as its bound); feeders and drains do where they are all links that surely stay: one member's
  // own, or links no bound holds for (a DGX-1 node's NIC, which eight GPUs' tree edges cross: the feeders of a fat
  // tree's non-blocking leaf uplink). Two links bounded only by each other, each the other's feeder or drain, are
  // both exact and both needed: neither surely stays, so both do.
  auto owned = [&links](std::uint32_t id) { return links[id].common[0] >= 0 || links[id].common[1] >= 0; };
  enum Bound : char { kNone = 0, kByCount = 1, kByFeeders = 2, kByDrains = 4 };
  std::vector<char> bound(links.size(), kNone);
  bool bounded = true;
  for (std::uint32_t id = 0; id < links.size(); ++id) {
    Crossing& l = links[id];
    if (l.common[0] == -2 || owned(id))
      continue; // no transfer, or one member's own
    // Relative 1e-12: a capacity computed as the sum of the links it serves (a fat tree's uplink) may round below it.
    auto carries = [&l](double load) { return l.capacity >= load * (1 - 1e-12); };
    bound[id] = static_cast<char>((carries(lanes * l.sum_fastest) ? kByCount : kNone) |
                                  (!l.unfed && carries(sum_distinct(l.feeders)) ? kByFeeders : kNone) |
                                  (!l.undrained && carries(sum_distinct(l.drains)) ? kByDrains : kNone));
    if (bound[id] == kNone)
      bounded = false; // it may limit a transfer when aggregations meet there: computed with all of them (TreeStream)
  }
  auto stay = [&](const Links& v) {
    return std::all_of(v.begin(), v.end(),
                       [&](const auto& link) { return owned(link.first) || bound[link.first] == kNone; });
  };
  for (std::uint32_t id = 0; id < links.size(); ++id)
    if ((bound[id] & kByCount) != 0 || ((bound[id] & kByFeeders) != 0 && stay(links[id].feeders)) ||
        ((bound[id] & kByDrains) != 0 && stay(links[id].drains)))
      out.left_out.push_back(id);
  if (!CommWorld::fluid_exact(routes)) {
    out.left_out.clear();
    return out;
  }
  dominated_links(routes, out.left_out);
  out.computable = true;
  out.exact = bounded;
  return out;
}

bool whole_stream_allowed(Group& g, AlgorithmId id)
{
  return g.options().fidelity == Fidelity::Auto && g.whole_stream() && g.member_timed() && !g.mixed() &&
         g.world().solo() && g.size() > 1 && flow_form_allowed(id, g.options());
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
  // A tree's components chain nodes along the tree (hundreds of flows at 1,024 ranks), but an event moves a few
  // shares: 4 % of the flows in components of 64 or more at 1,024 GPUs (dbtree, docs/performance.md).
  c.fluid.solve_incrementally(true);
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
  // One aggregation: every member given it from its start, run to its end.
  Group::MemberTimes* times = g.member_times();
  const std::size_t members = static_cast<std::size_t>(g.size());
  if (times == nullptr || times->starts.size() != members)
    throw Error("internal: the computed trees need every member's start");
  TreeStream stream(g, t, net, chunks_of);
  for (std::size_t v = 0; v < members; ++v)
    stream.give_trees(0, static_cast<int>(v), bytes, times->starts[v]);
  std::vector<StreamProgram::Ended> ended;
  stream.run({}, ended);
  if (ended.size() != members)
    throw Error("internal: the computed trees stalled");
  times->ends.assign(members, 0.0);
  double last = 0;
  for (const StreamProgram::Ended& e : ended) {
    times->ends[static_cast<std::size_t>(e.member)] = e.end_s;
    last = std::max(last, e.end_s);
  }
  CommWorld::delay_until(last);
}

// Each member runs every tree at once (as fork_join's helper does its second one), and in each tree the message
// level's program (TreeAllreduce::allreduce): per chunk a receive from each child, then its reduction, then the send
// to the parent; then per chunk the receive from the parent and a send to each child. A receive is posted when the
// member reaches it, a send after the sender's costs (CommWorld::post_send: one sleep of send_cost_s), a transfer
// starts when both are posted and runs in SimGrid's model (FluidNetwork, as run_fluid gives it flows); the sender
// goes on when it ends, the receiver after its receive overhead (one sleep) and, in the reduce, its reduction
// (another). A member that is done in every tree goes on to its next aggregation (kStart). Time moves as SimGrid's
// clock does (SimClock): a sleep lasts at least 1 ns, and every event due within 1 ns of a step, a sleep's end or a
// transfer's, happens at that step.
TreeStream::TreeStream(Group& g, TreeFlows& t, ComputedTrees& net, AlgorithmId chunks_of)
    : g_(g)
    , world_(g.world())
    , o_(g.options())
    , t_(t)
    , net_(&net)
    , chunks_of_(chunks_of)
    , members_(static_cast<std::size_t>(g.size()))
    , trees_(t.trees.size())
    , lanes_(1)
    , trees_left_(members_)
{
  queues_.reset(1, members_);
  if (net.first.size() != trees_ * members_ * 2 + 1 || net.hops.size() != trees_ * members_ * 2)
    throw Error("internal: the computed trees' network is not of these trees (computed_trees_of)");
  reset_edges(1);
  reset_programs(1);
  lanes_.front().channel = g.world().driver_channel();
  net_->fluid.restart();
}

bool TreeStream::set_lanes(const std::vector<int>& channels)
{
  if (any_given() || channels.empty())
    throw Error("internal: a tree stream's lanes set after an aggregation was given, or none");
  const std::size_t lanes = channels.size();
  if (lanes > 1 || !kept_.empty()) {
    // A link one lane's transfers cannot fill by their count may be filled by several lanes'; one the outer
    // program's flows cross may be filled by them (keep_links).
    std::vector<std::uint32_t> kept;
    for (const CommWorld::Route* r : kept_)
      kept.insert(kept.end(), r->shared_ids.begin(), r->shared_ids.end());
    std::sort(kept.begin(), kept.end());
    TreeLinks links = tree_links(t_, static_cast<int>(lanes));
    links.left_out.erase(
        std::remove_if(links.left_out.begin(), links.left_out.end(),
                       [&kept](std::uint32_t id) { return std::binary_search(kept.begin(), kept.end(), id); }),
        links.left_out.end());
    lanes_net_ = std::make_unique<ComputedTrees>(computed_trees_of(t_, links));
    net_ = lanes_net_.get();
    net_->fluid.restart();
    for (const CommWorld::Route* r : kept_)
      for (std::size_t k = 0; k < r->shared_ids.size(); ++k)
        net_->fluid.set_capacity(r->shared_ids[k], r->shared_bandwidth[k]);
  }
  lanes_set_ = true;
  lanes_.assign(lanes, Lane{});
  for (std::size_t l = 0; l < lanes; ++l)
    lanes_[l].channel = channels[l];
  reset_programs(lanes);
  reset_edges(lanes);
  queues_.reset(lanes, members_);
  trees_left_.assign(lanes * members_, 0);
  return true;
}

void TreeStream::reset_edges(std::size_t lanes)
{
  const std::size_t n = trees_ * members_ * 2; // the network's edges, the same routes in every lane
  edges_.assign(lanes * n, Edge{});
  started_.clear();
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    Edge& x = edges_[e];
    x.first = net_->first[e % n];
    x.count = net_->first[e % n + 1] - x.first;
    x.latency_s = net_->hops[e % n].latency_s;
    x.bandwidth = net_->hops[e % n].bandwidth;
    // Edge e is up (e odd) or down between member (e / 2) % members and its parent, in tree (e / 2 / members) % trees.
    const std::size_t j = e / 2 / members_ % trees_, child = e / 2 % members_;
    x.parent = t_.parents[j][child];
    x.route = t_.routes[j][child][e % 2 == 1 ? 0 : 1];
  }
}

void TreeStream::reset_programs(std::size_t lanes)
{
  prog_.assign(lanes * trees_ * members_, Program{});
  for (std::size_t i = 0; i < prog_.size(); ++i) {
    const std::size_t j = i / members_ % trees_, v = i % members_;
    Program& p = prog_[i];
    const std::vector<int>& children = t_.trees[j].children[v];
    p.parent = t_.parents[j][v];
    p.kids = static_cast<int>(children.size());
    for (int c = 0; c < std::min(p.kids, kInPlaceKids); ++c)
      p.kid[c] = children[static_cast<std::size_t>(c)];
  }
}

bool TreeStream::any_given() const
{
  return std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& x) { return !x.bytes.empty(); });
}

void TreeStream::set_wire(std::function<std::uint64_t(std::uint64_t)> wire)
{
  if (any_given())
    throw Error("internal: a tree stream's wire set after an aggregation was given");
  wire_ = std::move(wire);
}

void TreeStream::give(int lane, int member, std::uint64_t bytes, double ready_s)
{
  // Each member is given each aggregation: its parts (wire_, parts_of) kept by size for the members given it later.
  auto [at, added] = given_parts_.try_emplace(bytes);
  if (added)
    at->second = parts_of(wire_ ? wire_(bytes) : bytes);
  give_trees(lane, member, at->second, ready_s, call_cost_s(bytes));
}

void TreeStream::give_trees(int lane, int member, const std::vector<std::uint64_t>& per_tree, double ready_s,
                            double delay_s)
{
  const std::size_t v = static_cast<std::size_t>(member), l = static_cast<std::size_t>(lane);
  if (v >= members_ || l >= lanes_.size() || per_tree.size() != trees_)
    throw Error("internal: a tree stream given an aggregation of another group");
  Lane& x = lanes_[l];
  const std::size_t mi = l * members_ + v, k = queues_.at(mi).given;
  if (queues_.is_new(mi)) { // the first member given its k-th aggregation: the aggregation's chunks
    push_aggregation(x, per_tree, delay_s);
  } else if (!std::equal(per_tree.begin(), per_tree.end(), x.bytes.begin() + static_cast<std::ptrdiff_t>(k * trees_)))
    throw Error("internal: a tree stream's members given different aggregations");
  if (queues_.give(mi, ready_s, now_)) // idle: it starts this one next
    schedule(mi);
}

const std::vector<std::uint64_t>& TreeStream::parts_of(std::uint64_t bytes)
{
  parts_.clear();
  for (std::size_t j = 0; j < trees_; ++j)
    parts_.push_back(chunk_bytes(bytes, trees_, j));
  return parts_;
}

void TreeStream::push_aggregation(Lane& x, const std::vector<std::uint64_t>& per_tree, double delay_s)
{
  for (std::size_t j = 0; j < trees_; ++j) {
    x.bytes.push_back(per_tree[j]);
    x.chunks.push_back(analytical::pipeline_chunks(per_tree[j], pipeline_chunk_bytes(chunks_of_, o_, per_tree[j])));
  }
  x.delay.push_back(delay_s);
}

void TreeStream::add_aggregation(int lane, std::uint64_t bytes)
{
  if (outer_ == nullptr || lane < 0 || static_cast<std::size_t>(lane) >= lanes_.size())
    throw Error("internal: a tree stream's aggregation added without an outer program, or in no lane of it");
  push_aggregation(lanes_[static_cast<std::size_t>(lane)], parts_of(bytes), 0);
}

void TreeStream::begin_member(int lane, int member)
{
  const std::size_t mi = static_cast<std::size_t>(lane) * members_ + static_cast<std::size_t>(member);
  if (outer_ == nullptr || mi >= queues_.size() || queues_.at(mi).k * trees_ >= lanes_[mi / members_].bytes.size())
    throw Error("internal: a tree stream's member begun without an outer program or an aggregation added");
  queues_.started(mi, now_);
  begin(mi);
}

void TreeStream::at(double t, std::size_t who, int what)
{
  clock_.at(std::max(t, now_), edge_clock() + edges_.size() + who, what);
}

void TreeStream::keep_links(const CommWorld::Route& route)
{
  if (lanes_set_)
    throw Error("internal: a tree stream's links kept after its lanes were set");
  kept_.push_back(&route);
}

void TreeStream::start_flow(const CommWorld::Route& route, std::uint64_t bytes, std::size_t token, std::uint64_t tag)
{
  spec_.links = route.shared_ids;
  set_cm02(spec_, o_.stack, route.latency_s, route.bandwidth, double(bytes), double(bytes));
  spec_.tag = edges_.size() + 1 + tag; // past the edges' (start_if_posted)
  const std::size_t id = net_->fluid.start(now_, spec_);
  world_.note_computed(1);
  if (owner_.size() <= id)
    owner_.resize(id + 1);
  owner_[id] = edges_.size() + token;
}

void TreeStream::schedule(std::size_t mi)
{
  clock_.at(queues_.start_at(mi, now_), prog_.size() + mi, kStart);
}

std::uint64_t TreeStream::size_of(std::size_t s, std::size_t k, std::uint64_t chunk) const
{
  const Lane& x = lanes_[s / trees_];
  const std::size_t i = k * trees_ + s % trees_;
  return chunk_bytes(x.bytes[i], x.chunks[i], chunk);
}

void TreeStream::start_if_posted(std::size_t e)
{
  Edge& x = edges_[e];
  if (!x.sent || !x.asked)
    return;
  const std::size_t s = e / 2 / members_;
  const double size = double(size_of(s, x.k, x.chunk));
  spec_.links.data = net_->links.data() + x.first;
  spec_.links.size = x.count;
  set_cm02(spec_, o_.stack, x.latency_s, x.bandwidth, size, size);
  spec_.tag = e + 1;
  const std::size_t id = net_->fluid.start(now_, spec_);
  world_.note_computed(1);
  x.start = now_;
  started_.emplace_back(now_, e);
  if (owner_.size() <= id)
    owner_.resize(id + 1);
  owner_[id] = e;
}

std::size_t TreeStream::edge_of(std::size_t s, std::size_t v) const
{
  // The edge and the sender of member v's current op in tree s (a send or a receive).
  const Program& p = prog_[s * members_ + v];
  const std::size_t j = s % trees_;
  if (p.phase == 0) // the reduce: from child op, or to the parent (the member's own edge, up)
    return (s * members_ + (p.op < p.kids ? static_cast<std::size_t>(kid_of(p, j, v, p.op)) : v)) * 2 + 1;
  return (s * members_ + (p.op < 0 ? v : static_cast<std::size_t>(kid_of(p, j, v, p.op)))) * 2;
}

void TreeStream::ask(std::size_t s, std::size_t v)
{
  const std::size_t e = edge_of(s, v);
  edges_[e].asked = true;
  start_if_posted(e);
}

void TreeStream::post_send(std::size_t e)
{
  edges_[e].sent = true;
  start_if_posted(e);
}

void TreeStream::run_tree(std::size_t s, std::size_t v)
{
  // Member v's program in tree s from now until it waits on a transfer or a sleep.
  Program& p = prog_[s * members_ + v];
  const std::size_t j = s % trees_;
  const int parent = p.parent;
  const int kids = p.kids;
  const std::uint64_t chunks = lanes_[s / trees_].chunks[p.k * trees_ + j];
  for (;;) {
    if (p.phase == 0 && p.chunk == chunks) {
      p.phase = 1;
      p.chunk = 0;
      p.op = parent >= 0 ? -1 : 0;
    }
    if (p.phase == 1 && p.chunk == chunks) {
      p.phase = 2;
      tree_done(s, v);
      return;
    }
    const bool send = p.phase == 0 ? p.op == kids && parent >= 0 : p.op >= 0 && p.op < kids;
    const bool receive = p.phase == 0 ? p.op < kids : p.op == -1;
    if (receive) {
      ask(s, v);
      return;
    }
    if (send) {
      // The sender says which chunk of which aggregation (the receiver's next receive on the edge is it; nothing
      // reads them before both have posted), then posts it after its cost (its route's latency the edge's).
      const std::size_t e = edge_of(s, v);
      Edge& x = edges_[e];
      x.chunk = p.chunk;
      x.k = p.k;
      const double cost = world_.solo_send_cost_s(size_of(s, p.k, p.chunk), x.latency_s);
      if (cost > 0)
        clock_.sleep(now_, cost, edge_clock() + e, kPostSend);
      else
        post_send(e);
      return;
    }
    ++p.chunk;
    p.op = p.phase == 0 || parent < 0 ? 0 : -1;
  }
}

void TreeStream::tree_done(std::size_t s, std::size_t v)
{
  const std::size_t lane = s / trees_, mi = lane * members_ + v;
  if (--trees_left_[mi] > 0)
    return;
  // Done in every tree of its lane: the aggregation ends on the member now; it goes on to its next one there if it
  // was given it (the outer program's ends are its own).
  if (outer_ != nullptr) {
    LaneQueues::Member& m = queues_.at(mi);
    m.end = now_;
    ++m.k;
    outer_->trees_ended(lane, v);
    return;
  }
  if (queues_.end(mi, now_, open_, watched_lane_, watched_k_, ended_, stop_))
    schedule(mi);
}

void TreeStream::begin(std::size_t mi)
{
  trees_left_[mi] = static_cast<int>(trees_);
  const std::size_t lane = mi / members_, v = mi % members_, k = queues_.at(mi).k;
  for (std::size_t j = 0; j < trees_; ++j) {
    const std::size_t s = lane * trees_ + j;
    Program& p = prog_[s * members_ + v];
    p.phase = 0;
    p.op = 0;
    p.chunk = 0;
    p.k = k;
    run_tree(s, v);
  }
}

void TreeStream::wake(std::size_t who, int what)
{
  if (who >= edge_clock() + edges_.size()) { // the outer program's (at)
    outer_->woken(who - edge_clock() - edges_.size(), what);
    return;
  }
  if (who >= edge_clock()) { // kPostSend: a send's cost slept, it is posted on its edge
    post_send(who - edge_clock());
    return;
  }
  if (what == kStart) { // a member starts its next aggregation: its call cost first (a sleep), if any
    const std::size_t mi = who - prog_.size();
    queues_.started(mi, now_);
    const double delay = lanes_[mi / members_].delay[queues_.at(mi).k];
    if (delay > 0)
      clock_.sleep(now_, delay, who, kBegin);
    else
      begin(mi);
    return;
  }
  if (what == kBegin) {
    begin(who - prog_.size());
    return;
  }
  const std::size_t s = who / members_, v = who % members_;
  Program& p = prog_[who];
  if (what == kReceived) { // the receive overhead slept; in the reduce, the reduction
    const double reduce = o_.reduce_s_per_byte * double(size_of(s, p.k, p.chunk));
    ++p.op;
    if (p.phase == 0 && o_.reduce_s_per_byte > 0 && reduce > 0)
      clock_.sleep(now_, reduce, who, kRun);
    else
      run_tree(s, v);
  } else {
    run_tree(s, v);
  }
}

std::size_t TreeStream::run(const std::vector<char>& open, std::vector<Ended>& ended)
{
  ended_ = &ended;
  open_ = &open;
  stop_ = false;
  analytical::FluidNetwork& fluid = net_->fluid;
  const double recv_s = o_.stack.recv_overhead_s;
  const std::size_t steps = run_clock(
      clock_, fluid, now_, stop_,
      [&](std::size_t id) {
        const std::size_t e = owner_[id];
        fluid.release(id);
        if (e >= edges_.size()) { // the outer program's (start_flow)
          outer_->flow_ended(e - edges_.size());
          return;
        }
        Edge& x = edges_[e];
        x.sent = x.asked = false;
        const std::size_t s = e / 2 / members_, child = e / 2 % members_;
        const bool up = e % 2 == 1;
        const std::size_t parent = static_cast<std::size_t>(x.parent);
        const std::size_t from = up ? child : parent, to = up ? parent : child;
        const int from_endpoint = g_.endpoint(static_cast<int>(from)), to_endpoint = g_.endpoint(static_cast<int>(to));
        world_.account({from_endpoint, to_endpoint, size_of(s, x.k, x.chunk)}, x.start, now_, *x.route,
                       lanes_[s / trees_].channel);
        note_reported(1);
        ++prog_[s * members_ + from].op; // the sender goes on
        run_tree(s, from);
        if (recv_s > 0) // the receiver: its receive overhead (CommWorld::received), then kReceived
          clock_.sleep(now_, recv_s, s * members_ + to, kReceived);
        else
          wake(s * members_ + to, kReceived);
      },
      [this](std::size_t who, int what) { wake(who, what); });
  ended_ = nullptr;
  open_ = nullptr;
  return steps;
}

double TreeStream::floor_s() const
{
  while (!started_.empty()) {
    const auto [start, e] = started_.front();
    const Edge& x = edges_[e];
    if (x.sent && x.asked && x.start == start)
      return std::min(now_, start); // in flight since
    started_.pop_front();           // landed (the edge idle, or in flight again from a later start)
  }
  return now_;
}

void LaneQueues::reset(std::size_t lanes, std::size_t members)
{
  members_ = members;
  member_.assign(lanes * members, Member{});
  ready_.assign(lanes, {});
  ended_.assign(lanes, {});
  sizes_.assign(lanes, {});
  active_ = 0;
}

bool LaneQueues::size_next(std::size_t mi, std::uint64_t bytes, double delay_s, const char* program)
{
  std::vector<std::pair<std::uint64_t, double>>& sizes = sizes_[mi / members_];
  if (is_new(mi)) { // the first member given its next aggregation
    sizes.emplace_back(bytes, delay_s);
    return true;
  }
  if (sizes[member_[mi].given].first != bytes)
    throw Error(std::string("internal: ") + program + " given different aggregations to its members");
  return false;
}

bool LaneQueues::give(std::size_t mi, double ready_s, double now)
{
  Member& m = member_[mi];
  const std::size_t l = mi / members_, k = m.given;
  if (is_new(mi))
    ended_[l].push_back(0);
  if (ready_[l].size() < (k + 1) * members_)
    ready_[l].resize((k + 1) * members_, 0.0);
  ready_[l][k * members_ + mi % members_] = ready_s;
  ++m.given;
  if (m.k != k)
    return false; // busy: it starts this one after those before
  if (std::max(ready_s, k > 0 ? m.end : ready_s) < now)
    throw Error("internal: a stream program given a member's aggregation after it would have started (the driver "
                "let the program run past it)");
  ++active_;
  return true;
}

double LaneQueues::start_at(std::size_t mi, double now)
{
  Member& m = member_[mi];
  const double ready = ready_[mi / members_][m.k * members_ + mi % members_];
  m.scheduled = true;
  return std::max({ready, m.k > 0 ? m.end : ready, now});
}

void LaneQueues::started(std::size_t mi, double now)
{
  member_[mi].scheduled = false;
  member_[mi].start = now;
}

bool LaneQueues::end(std::size_t mi, double now, const std::vector<char>* open, int watched_lane, std::size_t watched_k,
                     std::vector<StreamProgram::Ended>* out, bool& stop)
{
  Member& m = member_[mi];
  const std::size_t l = mi / members_;
  m.end = now;
  if (out != nullptr)
    out->push_back({static_cast<int>(mi % members_), m.k, m.start, now, static_cast<int>(l)});
  if (++ended_[l][m.k] == members_ && static_cast<int>(l) == watched_lane && m.k == watched_k)
    stop = true; // ended on every member: the driver frees its credit
  ++m.k;
  const char watch = open != nullptr && mi < open->size() ? (*open)[mi] : char(StreamProgram::kUnwatched);
  if (watch == StreamProgram::kAnyEnd)
    stop = true; // another of its lanes waits on what this one ends: the caller looks again
  if (m.k < m.given)
    return true;
  --active_;
  if (watch == StreamProgram::kAllEnded)
    stop = true; // it may need an aggregation it has not been given: the caller gives it first
  return false;
}

double LaneQueues::floor_s(double now) const
{
  double floor = now; // what starts from now on
  for (const Member& m : member_)
    if (m.k < m.given && !m.scheduled)
      floor = std::min(floor, m.start); // in progress: its transfers started at its start or later
  return floor;
}

} // namespace ddlsim::collectives
