// Which routes the closed forms read: chosen by the algorithms' structure, O(P log P) pairs (no SimGrid).
#include "analytical/routes.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace ddlsim::analytical {
namespace {

/** Ring neighbours and XOR partners among `members`. */
void ring_and_xor_pairs(const std::vector<int>& members, std::vector<std::pair<int, int>>& pairs)
{
  const int n = static_cast<int>(members.size());
  for (int i = 0; i < n; ++i) {
    if (n > 1)
      pairs.emplace_back(members[i], members[(i + 1) % n]);
    for (int mask = 1; mask < n; mask <<= 1)
      if ((i ^ mask) < n)
        pairs.emplace_back(members[i], members[i ^ mask]);
  }
}

} // namespace

RoutePairs closed_form_route_pairs(const std::vector<int>& node_of_rank, int endpoints)
{
  const int p = static_cast<int>(node_of_rank.size());
  RoutePairs pairs;
  std::map<int, int> leader_of_node; // node -> its lowest rank
  std::vector<int> ranks, leaders;
  for (int r = 0; r < p; ++r) {
    ranks.push_back(r);
    if (leader_of_node.emplace(node_of_rank[r], r).second)
      leaders.push_back(r);
  }
  ring_and_xor_pairs(ranks, pairs.flat);
  ring_and_xor_pairs(leaders, pairs.leaders);
  for (int r = 0; r < p; ++r) {
    const int leader = leader_of_node[node_of_rank[r]];
    if (leader != r) {
      pairs.intra.emplace_back(r, leader);
      pairs.intra.emplace_back(leader, r);
    }
    for (int e = p; e < endpoints; ++e)
      pairs.server.emplace_back(r, e);
  }
  return pairs;
}

Hop worst_hop(const std::vector<std::pair<int, int>>& pairs, const RouteFn& route)
{
  if (pairs.empty())
    return {};
  Hop worst{0, std::numeric_limits<double>::infinity()};
  for (const auto& [a, b] : pairs) {
    const Hop h = route(a, b);
    worst.alpha_s = std::max(worst.alpha_s, h.alpha_s);
    worst.bandwidth_bytes_per_s = std::min(worst.bandwidth_bytes_per_s, h.bandwidth_bytes_per_s);
  }
  return worst;
}

RouteHops worst_hops(const RoutePairs& pairs, const RouteFn& route)
{
  return {worst_hop(pairs.flat, route), worst_hop(pairs.intra, route), worst_hop(pairs.leaders, route),
          worst_hop(pairs.server, route)};
}

} // namespace ddlsim::analytical
