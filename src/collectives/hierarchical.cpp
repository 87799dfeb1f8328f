// Hierarchical allreduce: reduce to each node's leader, allreduce among leaders, broadcast in the node.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

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
};

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
  return l;
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
  const Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  const CollectiveOptions& o = g.options();
  return (uses_flow(o.inter_algorithm, o.fidelity, layout.leaders->size()) ||
          inter_->exact_flow_form(*layout.leaders)) &&
         flow_form_allowed(AlgorithmId::Hier, o) && flow_form_allowed(o.inter_algorithm, o);
}

bool Hierarchical::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's own steps, for every node at once: the gather (one flow per member to its leader, after
  // the overhead), the leader's G-1 reductions, the inter algorithm's flow plan among the leaders, then the
  // scatter, whose k-th flow of a leader starts after k overheads (the leader posts its sends one after the other).
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  std::vector<Flow> flows;
  for (const auto& local : layout.nodes)
    for (std::size_t i = 1; i < local.size(); ++i)
      flows.push_back({g.endpoint(local[i]), g.endpoint(local[0]), bytes});
  if (!flows.empty()) {
    CommWorld::delay(o.msg_overhead_s);
    world.run_flows(flows);
    CommWorld::delay(o.reduce_s_per_byte * double(bytes) * double(layout.largest - 1));
  }
  if (layout.leaders->size() > 1 && !inter_->flow_plan(*layout.leaders, bytes))
    throw Error("internal: hier's flow form needs a flow form of its inter algorithm");
  if (o.msg_overhead_s <= 0) { // no overhead between a leader's sends: every scatter flow starts at once
    flows.clear();
    for (const auto& local : layout.nodes)
      for (std::size_t k = 1; k < local.size(); ++k)
        flows.push_back({g.endpoint(local[0]), g.endpoint(local[k]), bytes});
    world.run_flows(flows);
    return true;
  }
  for (std::size_t k = 1; k < layout.largest; ++k) {
    flows.clear();
    for (const auto& local : layout.nodes)
      if (k < local.size())
        flows.push_back({g.endpoint(local[0]), g.endpoint(local[k]), bytes});
    CommWorld::delay(o.msg_overhead_s);
    world.start_flows(flows);
  }
  world.finish_flows();
  return true;
}

} // namespace ddlsim::collectives
