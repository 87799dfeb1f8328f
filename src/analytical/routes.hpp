// Which routes the closed forms read: chosen by the algorithms' structure, O(P log P) pairs (no SimGrid).
#pragma once

#include "analytical/alpha_beta.hpp"

#include <functional>
#include <utility>
#include <vector>

namespace ddlsim::analytical {

/** @brief Pairs of endpoints (ranks 0..P-1, then servers) whose routes make up each RouteHops role. */
struct RoutePairs {
  std::vector<std::pair<int, int>> flat, intra, leaders, server;
};

/** @brief The pairs for ranks grouped by `node_of_rank` (a node's leader is its lowest rank) and endpoints
 *  P..endpoints-1 as servers: ring neighbours and XOR partners (flat, and among leaders), every rank with its
 *  leader both ways (intra), every rank with every server. */
RoutePairs closed_form_route_pairs(const std::vector<int>& node_of_rank, int endpoints);

/** @brief The route between two endpoints. */
using RouteFn = std::function<Hop(int from, int to)>;

/** @brief Largest latency and smallest bandwidth over `pairs` (a zero Hop when there are none). */
Hop worst_hop(const std::vector<std::pair<int, int>>& pairs, const RouteFn& route);

/** @brief worst_hop of every role. */
RouteHops worst_hops(const RoutePairs& pairs, const RouteFn& route);

} // namespace ddlsim::analytical
