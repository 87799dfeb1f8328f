// Closed-form prediction of an allreduce for an algorithm name, from a platform's worst routes.
#pragma once

#include "analytical/alpha_beta.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::analytical {

/** @brief What the closed forms need to know about the ranks and the platform. */
struct PredictInput {
  int ranks = 1;
  int nodes = 1;                 ///< hier: number of nodes
  int ranks_per_node = 1;        ///< hier: ranks of the largest node
  int servers = 1;               ///< ps
  bool servers_colocated = false; ///< ps: servers share hosts with ranks (no closed form)
  bool round_robin = false;      ///< ps: tensors whole on one server instead of split
  std::uint64_t chunk_bytes = 0; ///< tree
  std::string inter_algorithm = "ring";
  Hop hop;                       ///< worst route among ring neighbours and XOR partners
  Hop intra;                     ///< hier: worst route inside a node
  Hop leaders;                   ///< hier: worst route between node leaders
  Hop server;                    ///< ps: worst route from a rank to a server
  Costs costs;
};

/** @brief Alpha-beta-gamma time of `algorithm` (a name, or "SMALL<=SIZE,LARGE") for `bytes`; exact where
 *  docs/collectives.md says so (uniform, contention-free routes), a lower bound or estimate elsewhere. */
double predict_allreduce_s(const std::string& algorithm, std::uint64_t bytes, const PredictInput& in);

/** @brief The formula used, for the table header (e.g. "2(P-1)(alpha + o + M/(P B)) + (P-1) gamma M/P"). */
std::string formula(const std::string& algorithm);

} // namespace ddlsim::analytical
