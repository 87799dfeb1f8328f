// Hierarchical allreduce: reduce to each node's leader, allreduce among leaders, broadcast in the node.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <unordered_map>

namespace ddlsim::collectives {
namespace {

/** The nodes of a group (computed once per group): each node's members, leader (lowest member) first, in order
 *  of first appearance, and the leaders as a group of their own. */
struct Layout {
  std::vector<std::vector<int>> nodes; ///< member ids
  std::vector<int> node_of_member;     ///< index into nodes
  std::unique_ptr<Group> leaders;      ///< the leaders' endpoints, in node order
  std::size_t largest = 0;             ///< members of the largest node
  /** No link shared by the gather or scatter flows of two nodes (each node's on links of its own), so that every
   *  node's may run at its own times (member-timed). */
  bool nodes_private = false;
  /** xor_symmetric_nodes(), once asked (-1: not yet). */
  int xor_symmetric = -1;
};

bool nodes_private(Group& g, const Layout& l)
{
  const CommWorld& world = g.world();
  std::vector<int> owner; // per link number: the node whose flows cross it (-1: none yet)
  for (std::size_t n = 0; n < l.nodes.size(); ++n)
    for (std::size_t i = 1; i < l.nodes[n].size(); ++i) {
      const int member = g.endpoint(l.nodes[n][i]), leader = g.endpoint(l.nodes[n][0]);
      for (const auto* route : {&world.cached_route(member, leader), &world.cached_route(leader, member)})
        for (std::uint32_t id : route->shared_ids) {
          if (id >= owner.size())
            owner.resize(id + 1, -1);
          if (owner[id] >= 0 && owner[id] != static_cast<int>(n))
            return false;
          owner[id] = static_cast<int>(n);
        }
    }
  return true;
}

Layout layout_of(Group& g)
{
  Layout l;
  CommWorld& world = g.world();
  std::unordered_map<int, int> index; // world node -> index into l.nodes
  std::vector<int> leaders;
  for (int m = 0; m < g.size(); ++m) {
    auto [it, fresh] = index.emplace(world.node(g.endpoint(m)), static_cast<int>(l.nodes.size()));
    if (fresh) {
      l.nodes.emplace_back();
      leaders.push_back(g.endpoint(m));
    }
    l.nodes[it->second].push_back(m);
    l.node_of_member.push_back(it->second);
  }
  for (const auto& n : l.nodes)
    l.largest = std::max(l.largest, n.size());
  l.leaders = std::make_unique<Group>(world, std::move(leaders), g.channel());
  l.nodes_private = nodes_private(g, l);
  return l;
}

/** Hier's flow form member-timed (every member from its own start to its own end, as at message level): in a
 *  member-timed group whose nodes' gather and scatter flows keep to links of their own, over the tree where its own
 *  form is member-timed among the leaders (member_timed_tree). Sets the leaders' group member-timed accordingly. */
bool member_timed_hier(Group& g, Layout& l)
{
  const AlgorithmId inter = g.options().inter_algorithm;
  const bool timed = g.member_timed() && g.world().solo() && l.nodes_private &&
                     (inter == AlgorithmId::Tree || inter == AlgorithmId::Dbtree) && l.leaders->size() > 1;
  l.leaders->set_member_timed(timed);
  return timed && (inter == AlgorithmId::Tree ? member_timed_tree(*l.leaders) : member_timed_dbtree(*l.leaders));
}

/** Every node's flows between its members and its leader, node after node, member after member: the gather's
 *  (`to_leader`) or the scatter's. */
std::vector<Flow> node_flows(Group& g, const Layout& l, std::uint64_t bytes, bool to_leader)
{
  std::vector<Flow> flows;
  for (const auto& local : l.nodes)
    for (std::size_t i = 1; i < local.size(); ++i) {
      const int member = g.endpoint(local[i]), leader = g.endpoint(local[0]);
      flows.push_back(to_leader ? Flow{member, leader, bytes} : Flow{leader, member, bytes});
    }
  return flows;
}

/** True when, for every m < L (L leaders, a power of two, nodes of one size), mapping each node n's i-th member to
 *  node n ^ m's i-th member (other endpoints kept) maps the gather's flows, the scatter's and every step of rd among
 *  the leaders (leader v to v ^ 2^k) onto themselves, and their routes onto the images' link for link
 *  (CommWorld::symmetric_under). These are every flow of hier over rd's plans, whatever the tensor (each plan's flows
 *  carry one size), so in a lanes-solo world (several streams of these plans, nothing else) the leaders' XOR
 * translations are symmetries of all the network carries. That rests on every lane running this hier: hier is never a
 * side of a size or rank switch (algorithm_spec.cpp takes only flat algorithms there), and its inter algorithm is one.
 * Checking the generators m = 2^j suffices: their products are the rest. Nodes of one size and L a power of two come
 * first: the maps below index node n ^ m's i-th member. */
bool xor_symmetric_nodes(Group& g, const Layout& l)
{
  const std::size_t leaders = l.nodes.size();
  if (leaders < 2 || (leaders & (leaders - 1)) != 0 ||
      std::any_of(l.nodes.begin(), l.nodes.end(), [&](const auto& n) { return n.size() != l.largest; }))
    return false;
  CommWorld& world = g.world();
  std::vector<std::vector<Flow>> sets = {node_flows(g, l, 1, true), node_flows(g, l, 1, false)};
  for (std::size_t mask = 1; mask < leaders; mask <<= 1) {
    sets.emplace_back();
    for (std::size_t v = 0; v < leaders; ++v)
      sets.back().push_back({g.endpoint(l.nodes[v][0]), g.endpoint(l.nodes[v ^ mask][0]), 1});
  }
  sets.erase(std::remove_if(sets.begin(), sets.end(), [](const auto& s) { return s.empty(); }), sets.end());
  for (std::size_t m = 1; m < leaders; m <<= 1) {
    std::vector<int> perm(static_cast<std::size_t>(world.endpoints()));
    for (std::size_t e = 0; e < perm.size(); ++e)
      perm[e] = static_cast<int>(e);
    for (std::size_t n = 0; n < leaders; ++n)
      for (std::size_t i = 0; i < l.largest; ++i)
        perm[static_cast<std::size_t>(g.endpoint(l.nodes[n][i]))] = g.endpoint(l.nodes[n ^ m][i]);
    if (!world.symmetric_under(sets, perm))
      return false;
  }
  return true;
}

/** The member-timed plan (member_timed_hier): the message level's steps at each member's own times. A member's send
 *  to its leader starts once it is posted (its start + its costs of sending) and the leader is there (it posts its
 *  receives at its start); the leader pays a receive overhead per message and reduces (G - 1) gamma M after the last
 *  one lands; the leaders' tree runs from those times (member-timed); the leader's k-th send back is posted its first
 *  k sends' costs after its tree ends, and each member ends when its own lands (and its receive overhead is paid), the
 *  leader when its last send does. Each node's flows run in SimGrid at the node's times
 *  (CommWorld::run_timed: its links are its own). */
void timed_plan(Group& g, Layout& layout, const Collective& inter, std::uint64_t bytes)
{
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  Group::MemberTimes& times = *g.member_times();
  const std::size_t nodes = layout.nodes.size();
  // As at message level (Hierarchical::allreduce, CommWorld::post_send, received): a member posts its send after its
  // costs of sending (CommWorld::send_cost_s: o alone for the ideal stack), the leader its receives when it starts;
  // the leader pays a receive overhead per landed message, then sums. The scatter's sends leave one after the other,
  // each after its costs; a member pays its receive overhead when its message has landed.
  const double recv_s = o.stack.recv_overhead_s;
  std::vector<Flow> flows = node_flows(g, layout, bytes, true);
  std::vector<double> post_at;
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    for (std::size_t i = 1; i < local.size(); ++i, ++f)
      post_at.push_back(std::max(times.starts[local[i]] + world.send_cost_s(flows[f].from, flows[f].to, bytes),
                                 times.starts[local[0]]));
  }
  std::vector<double> landed = world.run_timed(flows, post_at);
  Group::MemberTimes leaders;
  leaders.starts.resize(nodes);
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    double gathered = times.starts[local[0]];
    for (std::size_t i = 1; i < local.size(); ++i)
      gathered = std::max(gathered, landed[f++]);
    leaders.starts[n] =
        gathered + recv_s * double(local.size() - 1) + o.reduce_s_per_byte * double(bytes) * double(local.size() - 1);
  }
  layout.leaders->set_member_times(&leaders);
  CommWorld::delay_until(*std::max_element(leaders.starts.begin(), leaders.starts.end()));
  const bool ran = inter.flow_plan(*layout.leaders, bytes);
  layout.leaders->set_member_times(nullptr);
  if (!ran || leaders.ends.size() != nodes)
    throw Error("internal: hier's member-timed form needs its inter algorithm's member-timed form");
  flows = node_flows(g, layout, bytes, false);
  post_at.clear();
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    double posted = 0; // the leader's sends one after the other
    for (std::size_t k = 1; k < layout.nodes[n].size(); ++k, ++f) {
      posted += world.send_cost_s(flows[f].from, flows[f].to, bytes);
      post_at.push_back(leaders.ends[n] + posted);
    }
  }
  landed = world.run_timed(flows, post_at);
  times.ends.assign(static_cast<std::size_t>(g.size()), 0.0);
  double last = 0;
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    double leader_end = leaders.ends[n];
    for (std::size_t k = 1; k < local.size(); ++k, ++f) {
      times.ends[local[k]] = landed[f] + recv_s;
      leader_end = std::max(leader_end, landed[f]);
    }
    times.ends[local[0]] = leader_end;
    last = std::max(last, leader_end);
  }
  CommWorld::delay_until(last);
}

/** Runs `flows`, flow i posted `after[i]` seconds from now (its sender's costs before it: CommWorld::send_cost_s,
 *  summed over a leader's earlier sends), and returns when the last has landed: all at once where every flow is posted
 *  at the same time (run_flows); in a solo world each component of flows as if alone from its first post (run_timed:
 *  nothing else runs meanwhile, and flows that share no link do not meet); otherwise posted in order of time. */
void run_posted(CommWorld& world, const std::vector<Flow>& flows, const std::vector<double>& after)
{
  if (std::all_of(after.begin(), after.end(), [&](double a) { return a == after.front(); })) {
    CommWorld::delay(after.front());
    world.run_flows(flows);
    return;
  }
  if (world.solo()) {
    const double now = simgrid::s4u::Engine::get_clock();
    std::vector<double> post_at;
    for (double a : after)
      post_at.push_back(now + a);
    const std::vector<double> ends = world.run_timed(flows, post_at);
    CommWorld::delay_until(*std::max_element(ends.begin(), ends.end()));
    return;
  }
  world.run_staggered(flows, after);
}

} // namespace

void Hierarchical::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  CommWorld& world = g.world();
  const int node = layout.node_of_member[self];
  const std::vector<int>& local = layout.nodes[node];
  const int leader = local.front();
  if (self != leader) {
    g.send(self, leader, bytes);
    g.recv(self, leader);
    return;
  }
  std::vector<int> from;
  for (std::size_t i = 1; i < local.size(); ++i)
    from.push_back(g.endpoint(local[i]));
  world.exchange(g.endpoint(self), {}, from, true, g.channel());
  g.reduce(self, bytes * (local.size() - 1));

  inter_->allreduce(*layout.leaders, node, bytes);

  std::vector<std::pair<int, std::uint64_t>> to;
  for (std::size_t i = 1; i < local.size(); ++i)
    to.emplace_back(g.endpoint(local[i]), bytes);
  world.exchange(g.endpoint(self), to, {}, true, g.channel());
}

bool Hierarchical::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  if (g.size() <= 1)
    return false;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  member_timed_hier(g, layout); // the leaders' group member-timed or not, before its exact_flow_form is asked
  const CollectiveOptions& o = g.options();
  if (g.world().lanes_solo() && o.inter_algorithm == AlgorithmId::Rd) { // before rd's exact_flow_form is asked too
    if (layout.xor_symmetric < 0)
      layout.xor_symmetric = xor_symmetric_nodes(g, layout) ? 1 : 0;
    layout.leaders->set_xor_symmetric(layout.xor_symmetric > 0);
  }
  return (uses_flow(o.inter_algorithm, o.fidelity, layout.leaders->size()) ||
          inter_->exact_flow_form(*layout.leaders)) &&
         flow_form_allowed(AlgorithmId::Hier, o) && flow_form_allowed(o.inter_algorithm, o);
}

std::vector<std::vector<Flow>> Hierarchical::flow_calls(Group& g, std::uint64_t bytes) const
{
  // flow_plan's run_flows calls: the gather (where a node has more than its leader), the leaders' plan, the scatter.
  std::vector<std::vector<Flow>> calls;
  if (g.size() <= 1 || g.options().msg_overhead_s > 0 || !g.options().stack.ideal() || !drivable(g, bytes))
    return calls; // the sends of a leader, or those of every member, posted apart (flow_plan: run_posted)
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  if (layout.leaders->size() > 1) {
    calls = inter_->flow_calls(*layout.leaders, bytes);
    if (calls.empty())
      return calls;
  }
  if (layout.largest > 1) { // some node has more than its leader
    calls.push_back(node_flows(g, layout, bytes, true));
    calls.push_back(node_flows(g, layout, bytes, false));
  }
  return calls;
}

bool Hierarchical::concurrent_flows(Group& g) const
{
  if (g.size() <= 1)
    return false;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  return layout.leaders->size() > 1 && inter_->concurrent_flows(*layout.leaders);
}

bool Hierarchical::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps, for every node at once: the gather (each member's flow to its leader, posted after the
  // member's costs of sending it: CommWorld::send_cost_s), the leader's G-1 receive overheads and reductions, the
  // inter algorithm's flow plan among the leaders, then the scatter, whose k-th flow of a leader is posted after the
  // leader's costs of its first k sends (it posts them one after the other), and each member's receive overhead.
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  if (g.member_times() != nullptr && member_timed_hier(g, layout)) {
    timed_plan(g, layout, *inter_, bytes);
    return true;
  }
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  std::vector<Flow> flows = node_flows(g, layout, bytes, true);
  std::vector<double> after;
  for (const Flow& f : flows)
    after.push_back(world.send_cost_s(f.from, f.to, bytes));
  if (!flows.empty()) {
    run_posted(world, flows, after);
    CommWorld::delay((o.stack.recv_overhead_s + o.reduce_s_per_byte * double(bytes)) * double(layout.largest - 1));
  }
  if (layout.leaders->size() > 1 && !inter_->flow_plan(*layout.leaders, bytes))
    throw Error("internal: hier's flow form needs a flow form of its inter algorithm");
  flows = node_flows(g, layout, bytes, false);
  after.clear();
  for (std::size_t n = 0, f = 0; n < layout.nodes.size(); ++n) {
    double posted = 0; // the leader's sends one after the other
    for (std::size_t k = 1; k < layout.nodes[n].size(); ++k, ++f) {
      posted += world.send_cost_s(flows[f].from, flows[f].to, bytes);
      after.push_back(posted);
    }
  }
  if (!flows.empty()) {
    run_posted(world, flows, after);
    CommWorld::delay(o.stack.recv_overhead_s);
  }
  return true;
}

} // namespace ddlsim::collectives
