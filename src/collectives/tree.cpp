// Binary-tree allreduce, pipelined in chunks: reduce to member 0, then broadcast from it; and the flow form of
// pipelined trees (tree, dbtree, nccl-tree).
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

namespace ddlsim::collectives {

TreeFlows tree_flows_of(Group& g, std::vector<analytical::TreeShape> trees)
{
  TreeFlows f;
  CommWorld& world = g.world();
  for (auto& t : trees) {
    t.up.assign(t.children.size(), analytical::Hop{});
    f.parents.push_back(analytical::tree_parents(t));
    f.routes.emplace_back(t.children.size(), std::array<const CommWorld::Route*, 2>{nullptr, nullptr});
    for (int v : t.order)
      for (int c : t.children[v]) {
        t.up[c] = g.route(c, v);
        f.routes.back()[c] = {&world.cached_route(g.endpoint(c), g.endpoint(v)),
                              &world.cached_route(g.endpoint(v), g.endpoint(c))};
      }
  }
  f.trees = std::move(trees);
  return f;
}

double TreeFlows::Rates::of(std::size_t j, std::size_t members, std::uint64_t n, std::uint64_t i, int child,
                            bool up) const
{
  const std::uint64_t half = chunks / 2;
  const std::uint64_t s = n <= chunks ? i : i < half ? i : i >= n - (chunks - half) ? chunks - (n - i) : half;
  return rate[j][(s * members + static_cast<std::size_t>(child)) * 2 + (up ? 1 : 0)];
}

const TreeFlows::Rates& pipeline_rates(Group& g, TreeFlows& t, std::uint64_t chunks)
{
  chunks = std::min(chunks, TreeFlows::kScheduledChunks);
  auto& r = t.rates[chunks];
  if (r.chunks != chunks)
    r = schedule_rates(g, t, chunks);
  return r;
}

const std::vector<double>& TreeFlows::step_rates(CommWorld& world, const std::vector<std::pair<int, int>>& sorted_ends)
{
  std::uint64_t hash = kFnv1aBasis; // over the endpoints, as CommWorld::plan_shape's
  for (const auto& [from, to] : sorted_ends)
    hash = fnv1a(fnv1a(hash, static_cast<std::uint32_t>(from)), static_cast<std::uint32_t>(to));
  for (const StepRates& known : memo_[hash])
    if (known.ends == sorted_ends)
      return known.rates;
  if (memo_pairs_ + sorted_ends.size() > kMemoPairs) { // sets of ever new shapes: keep the memory bounded
    memo_.clear();
    memo_pairs_ = 0;
  }
  memo_pairs_ += sorted_ends.size();
  auto& bucket = memo_[hash];
  bucket.push_back({sorted_ends, world.max_min_rates(sorted_ends)});
  return bucket.back().rates;
}

TreeFlows::Rates schedule_rates(Group& g, TreeFlows& t, std::uint64_t chunks)
{
  TreeFlows::Rates r;
  // The recurrence in unit steps, both phases (the broadcast starts when the root has the last chunk: no transfer of
  // the reduce runs with one of the broadcast): which step each transfer starts at.
  struct Transfer {
    int tree;
    std::size_t slot; ///< (chunk * members + child) * 2 + up
    int from, to;
  };
  std::vector<std::vector<Transfer>> steps;
  r.rate.resize(t.trees.size());
  for (std::size_t j = 0; j < t.trees.size(); ++j) {
    const analytical::TreeShape& tree = t.trees[j];
    const std::size_t members = tree.children.size();
    r.rate[j].assign(chunks * members * 2, 0.0);
    std::vector<std::size_t> clock(members, 0);
    auto add = [&](std::uint64_t i, int child, int parent, bool up) {
      const std::size_t step = std::max(clock[child], clock[parent]);
      if (steps.size() <= step)
        steps.resize(step + 1);
      steps[step].push_back({static_cast<int>(j), (i * members + child) * 2 + (up ? 1 : 0),
                             g.endpoint(up ? child : parent), g.endpoint(up ? parent : child)});
      clock[child] = clock[parent] = step + 1;
    };
    for (std::uint64_t i = 0; i < chunks; ++i)
      for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it)
        for (int c : tree.children[*it])
          add(i, c, *it, true);
    for (std::uint64_t i = 0; i < chunks; ++i)
      for (int v : tree.order)
        for (int c : tree.children[v])
          add(i, c, v, false);
  }
  // Each step's rates by its set of (from, to) pairs, sorted: one computation per set (TreeFlows::step_rates).
  std::vector<std::pair<int, int>> ends;
  std::vector<std::size_t> order;
  for (const auto& step : steps) {
    order.resize(step.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&step](std::size_t a, std::size_t b) {
      return std::tie(step[a].from, step[a].to) < std::tie(step[b].from, step[b].to);
    });
    ends.clear();
    for (std::size_t k : order)
      ends.emplace_back(step[k].from, step[k].to);
    const std::vector<double>& rates = t.step_rates(g.world(), ends);
    for (std::size_t m = 0; m < order.size(); ++m)
      r.rate[step[order[m]].tree][step[order[m]].slot] = rates[m];
  }
  r.chunks = chunks;
  return r;
}

void tree_flow_plan(Group& g, TreeFlows& t, const std::vector<std::uint64_t>& bytes, AlgorithmId id, bool member_timed)
{
  // The message level is each tree's recurrence with every transfer as long as SimGrid makes it: alpha + size / B
  // without contention (a member does one transfer at a time, so where every member has links of its own no two
  // transfers share one), longer where they share links (a node's GPUs its NIC). Here each transfer gets the rate
  // max-min sharing gives it among the transfers that run with it (pipeline_rates).
  const CollectiveOptions& o = g.options();
  CommWorld& world = g.world();
  const analytical::Costs costs{o.msg_overhead_s, o.reduce_s_per_byte};
  // A stack's per-message costs, as the message level pays them (CommWorld::post_send, received): each chunk posted
  // after its sender's costs (CommWorld::send_cost_s), each landed chunk's receive overhead on the receiver.
  const bool stack = !o.stack.ideal();
  const double start = simgrid::s4u::Engine::get_clock();
  const int channel = world.driver_channel();
  double end = 0;
  // Member-timed (in a solo world: nothing runs in SimGrid here): every member starts at its own time, and ends when
  // it is done in every tree, as at message level; the recurrence's times count from now, the last start.
  Group::MemberTimes* times = member_timed && world.solo() ? g.member_times() : nullptr;
  std::vector<double> clocks, done;
  if (times != nullptr)
    done.assign(static_cast<std::size_t>(g.size()), 0.0);
  for (std::size_t j = 0; j < t.trees.size(); ++j) {
    const analytical::TreeShape& tree = t.trees[j];
    const std::uint64_t chunk = pipeline_chunk_bytes(id, o, bytes[j]);
    const std::uint64_t n = analytical::pipeline_chunks(bytes[j], chunk);
    const TreeFlows::Rates& r = pipeline_rates(g, t, n);
    const std::size_t members = tree.children.size();
    auto time = [&](int child, bool up, std::uint64_t i, double size) {
      if (stack) // SimGrid's factors for a message of `size` bytes (CommWorld's callbacks): latency, progress
        return tree.up[child].alpha_s * factor_for(o.stack.latency_factor, size) +
               size / (r.of(j, members, n, i, child, up) * factor_for(o.stack.bandwidth_factor, size));
      return tree.up[child].alpha_s + size / r.of(j, members, n, i, child, up);
    };
    const analytical::MessageCosts message{[&](int child, bool up, std::uint64_t, double size) {
                                             const int a = g.endpoint(child), b = g.endpoint(t.parents[j][child]);
                                             return world.send_cost_s(up ? a : b, up ? b : a,
                                                                      static_cast<std::uint64_t>(size));
                                           },
                                           o.stack.recv_overhead_s};
    auto seen = [&](int child, bool up, std::uint64_t, double size, double from_s, double to_s) {
      const int a = g.endpoint(child), b = g.endpoint(t.parents[j][child]);
      world.account({up ? a : b, up ? b : a, static_cast<std::uint64_t>(size)}, start + from_s, start + to_s,
                    *t.routes[j][static_cast<std::size_t>(child)][up ? 0 : 1], channel);
    };
    if (times != nullptr) {
      clocks.resize(members);
      for (std::size_t v = 0; v < members; ++v)
        clocks[v] = times->starts[v] - start;
    }
    end = std::max(end, analytical::tree_allreduce_s(tree, bytes[j], chunk, costs, time, seen,
                                                     times != nullptr ? &clocks : nullptr, stack ? &message : nullptr));
    for (std::size_t v = 0; v < done.size(); ++v)
      done[v] = std::max(done[v], clocks[v]);
  }
  if (times != nullptr) {
    times->ends.resize(done.size());
    for (std::size_t v = 0; v < done.size(); ++v)
      times->ends[v] = start + done[v];
  }
  if (!world.solo()) // the load on the links, for the traffic that shares them; the plan lasts at least as long
    for (const auto& flows : tree_load_calls(g, t, bytes))
      world.load(flows);
  CommWorld::delay_until(start + end);
}

std::vector<std::vector<Flow>> tree_load_calls(Group& g, const TreeFlows& t, const std::vector<std::uint64_t>& bytes)
{
  std::vector<std::vector<Flow>> calls;
  for (bool up : {true, false}) {
    calls.emplace_back();
    for (std::size_t j = 0; j < t.trees.size(); ++j)
      for (std::size_t c = 0; c < t.parents[j].size(); ++c) {
        if (t.parents[j][c] < 0)
          continue; // the root
        const int child = g.endpoint(static_cast<int>(c)), parent = g.endpoint(t.parents[j][c]);
        calls.back().push_back(up ? Flow{child, parent, bytes[j]} : Flow{parent, child, bytes[j]});
      }
  }
  return calls;
}

void TreeAllreduce::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  const std::uint64_t chunk = pipeline_chunk_bytes(AlgorithmId::Tree, g.options(), bytes);
  const std::uint64_t chunks = analytical::pipeline_chunks(bytes, chunk);
  std::vector<int> children;
  for (int c : {2 * self + 1, 2 * self + 2})
    if (c < p)
      children.push_back(c);
  const int parent = (self - 1) / 2;
  for (std::uint64_t i = 0; i < chunks; ++i) { // reduce: gather chunk i from each child, add it, pass it up
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    for (int c : children) {
      g.recv(self, c);
      g.reduce(self, size);
    }
    if (self != 0)
      g.send(self, parent, size);
  }
  for (std::uint64_t i = 0; i < chunks; ++i) { // broadcast
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    if (self != 0)
      g.recv(self, parent);
    for (int c : children)
      g.send(self, c, size);
  }
}

bool TreeAllreduce::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && (g.use_flow(AlgorithmId::Tree) || exact_flow_form(g));
}

namespace {
TreeFlows& binary_tree_flows(Group& g)
{
  return g.cached_object<TreeFlows>(kTreeFlowsKey,
                                    [&] { return tree_flows_of(g, {analytical::binary_heap(g.size())}); });
}
} // namespace

bool member_timed_tree(Group& g)
{
  return g.member_timed() && g.world().solo() && flow_form_allowed(AlgorithmId::Tree, g.options()) &&
         g.cached(kTreeExactKey, [&g] { return tree_links_private(binary_tree_flows(g)) ? 1.0 : 0.0; }) > 0;
}

bool stream_tree(Group& g)
{
  return whole_stream_allowed(g, AlgorithmId::Tree) &&
         g.cached_object<TreeLinks>(kTreeLinksKey, [&g] { return tree_links(binary_tree_flows(g)); }).computable;
}

bool TreeAllreduce::exact_flow_form(Group& g) const
{
  return g.options().fidelity == Fidelity::Auto && entry(AlgorithmId::Tree).flow == FlowForm::WhenExact &&
         g.size() > kFlowAboveRanks && (member_timed_tree(g) || stream_tree(g));
}

std::unique_ptr<StreamProgram> TreeAllreduce::stream_program(Group& g) const
{
  // One lane: aggregation by aggregation (flow_plan), member-timed where every link is one edge's. Several lanes (a
  // member in one aggregation per lane at once): the program wherever the routes are computable.
  if (!exact_flow_form(g) || (member_timed_tree(g) && g.world().lanes() <= 1) || !stream_tree(g))
    return nullptr;
  g.world().note_computed_form(AlgorithmId::Tree);
  TreeFlows& t = binary_tree_flows(g);
  ComputedTrees& net = g.cached_object<ComputedTrees>(kTreeComputedKey, [&] {
    return computed_trees_of(t, g.cached_object<TreeLinks>(kTreeLinksKey, [&t] { return tree_links(t); }));
  });
  return std::make_unique<TreeStream>(g, t, net, AlgorithmId::Tree);
}

bool tree_links_private(const TreeFlows& t)
{
  if (t.trees.size() != 1)
    throw Error("internal: tree_links_private takes one tree (a member does one transfer at a time in it)");
  // Per link: the members every edge crossing it so far has (at most two: the first edge's ends; -1 none left), and,
  // for the capacity rule, the senders and receivers of the transfers crossing it and the fastest route's bandwidth
  // among them (no sender yet: no edge crosses it).
  struct Crossing {
    std::array<int, 2> common{-1, -1};
    std::vector<int> senders, receivers;
    double fastest = 0;
    double capacity = 0;
  };
  std::vector<Crossing> links;
  const std::vector<int>& parents = t.parents[0];
  for (std::size_t c = 0; c < parents.size(); ++c) {
    const int p = parents[c];
    if (p < 0)
      continue; // the root
    const int child = static_cast<int>(c);
    for (const bool up : {true, false}) { // routes[0][c]: the child's send up, then the parent's send down
      const CommWorld::Route* route = t.routes[0][c][up ? 0 : 1];
      for (std::size_t k = 0; k < route->shared_ids.size(); ++k) {
        const std::uint32_t id = route->shared_ids[k];
        if (id >= links.size())
          links.resize(id + 1);
        Crossing& l = links[id];
        if (l.senders.empty())
          l.common = {child, p};
        for (int& v : l.common)
          if (v != child && v != p)
            v = -1;
        l.senders.push_back(up ? child : p);
        l.receivers.push_back(up ? p : child);
        l.fastest = std::max(l.fastest, route->bandwidth);
        l.capacity = route->shared_bandwidth[k];
      }
    }
  }
  // A link crossed by edges without a common member is still never a bottleneck when it can carry every transfer
  // that may cross it at once at the rate that transfer gets alone (its route's narrowest bandwidth). In one tree a
  // member does one transfer at a time, so the transfers crossing a link at once have distinct senders and distinct
  // receivers: at most min(senders, receivers) of them, each at most `fastest`. Then max-min sharing gives every
  // transfer its rate alone (each is limited where it is alone: its narrowest link), as on private links.
  for (Crossing& l : links) {
    if (l.senders.empty() || l.common[0] >= 0 || l.common[1] >= 0)
      continue; // no edge, or one transfer at a time: every edge crossing it has a member in common
    auto distinct = [](std::vector<int>& v) {
      std::sort(v.begin(), v.end());
      return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    const double at_once = std::min(distinct(l.senders), distinct(l.receivers));
    // Relative 1e-12: a capacity computed as the sum of the links it serves (a fat tree's uplink) may round below it.
    if (l.capacity < at_once * l.fastest * (1 - 1e-12))
      return false;
  }
  return true;
}

bool TreeAllreduce::flow_plan(Group& g, std::uint64_t bytes) const
{
  if (g.member_times() != nullptr && !member_timed_tree(g) && stream_tree(g) && exact_flow_form(g))
    throw Error("internal: the tree's whole stream driven aggregation by aggregation (stream_program)");
  if (g.options().fidelity == Fidelity::Auto)
    g.world().note_exact_form(AlgorithmId::Tree); // exact_flow_form said so (drivable)
  tree_flow_plan(g, binary_tree_flows(g), {bytes}, AlgorithmId::Tree, member_timed_tree(g));
  return true;
}

std::vector<std::vector<Flow>> TreeAllreduce::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (!drivable(g, bytes) || g.world().solo())
    return {};
  return tree_load_calls(g, binary_tree_flows(g), {bytes});
}

} // namespace ddlsim::collectives
