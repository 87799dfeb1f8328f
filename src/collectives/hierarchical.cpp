// Hierarchical allreduce: reduce to each node's leader, allreduce among leaders, broadcast in the node.
#include "collectives/algorithms.hpp"

namespace ddlsim::collectives {

void Hierarchical::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  CommWorld& world = g.world();
  const int my_node = world.node(g.endpoint(self));
  // Members of my node, and the leader (lowest member) of every node, in order of first appearance.
  std::vector<int> local;
  std::vector<int> leaders;
  std::vector<int> seen_nodes;
  for (int m = 0; m < p; ++m) {
    const int node = world.node(g.endpoint(m));
    if (node == my_node)
      local.push_back(m);
    bool seen = false;
    for (int n : seen_nodes)
      seen = seen || n == node;
    if (!seen) {
      seen_nodes.push_back(node);
      leaders.push_back(m);
    }
  }
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

  std::vector<int> leader_endpoints;
  int my_index = 0;
  for (std::size_t i = 0; i < leaders.size(); ++i) {
    if (leaders[i] == self)
      my_index = static_cast<int>(i);
    leader_endpoints.push_back(g.endpoint(leaders[i]));
  }
  Group among_leaders(world, leader_endpoints, g.channel());
  inter_->allreduce(among_leaders, my_index, bytes);

  std::vector<std::pair<int, std::uint64_t>> to;
  for (std::size_t i = 1; i < local.size(); ++i)
    to.emplace_back(g.endpoint(local[i]), bytes);
  world.exchange(g.endpoint(self), to, {}, true, g.channel());
}

} // namespace ddlsim::collectives
