// Closed-form prediction of an allreduce for an algorithm name, from a platform's worst routes.
#include "analytical/predict.hpp"

#include "common/error.hpp"
#include "common/algorithm_spec.hpp"

namespace ddlsim::analytical {

double predict_allreduce_s(const std::string& algorithm, std::uint64_t bytes, const PredictInput& in)
{
  if (const auto sw = parse_size_switch(algorithm))
    return predict_allreduce_s(bytes <= sw->threshold_bytes ? sw->small : sw->large, bytes, in);
  if (algorithm == "ring") {
    const std::uint64_t per_slice = in.chunk_bytes * static_cast<std::uint64_t>(in.ranks);
    if (in.chunk_bytes == 0 || in.ranks <= 1 || bytes <= per_slice)
      return ring_allreduce_s(in.ranks, bytes, in.hop, in.costs);
    const std::uint64_t slices = (bytes + per_slice - 1) / per_slice; // equal slices when they divide M
    return double(slices) * ring_allreduce_s(in.ranks, bytes / slices, in.hop, in.costs);
  }
  if (algorithm == "rd")
    return rd_allreduce_s(in.ranks, bytes, in.hop, in.costs);
  if (algorithm == "hd")
    return hd_allreduce_s(in.ranks, bytes, in.hop, in.costs);
  if (algorithm == "tree")
    return tree_allreduce_s(in.ranks, bytes, in.chunk_bytes, in.hop, in.costs);
  if (algorithm == "dbtree") // lower bound: each tree alone with half the vector (the two trees share links)
    return tree_allreduce_s(in.ranks, bytes - bytes / 2, in.chunk_bytes, in.hop, in.costs);
  if (algorithm == "ps") {
    if (in.servers_colocated)
      throw ConfigError("no closed form for parameter servers sharing hosts with ranks");
    // Round-robin: the whole tensor goes to one server, as if there were one.
    return ps_allreduce_s(in.ranks, in.round_robin ? 1 : in.servers, bytes, in.server, in.costs);
  }
  if (algorithm == "hier") {
    PredictInput leaders = in;
    leaders.ranks = in.nodes;
    leaders.hop = in.leaders;
    const double inter = predict_allreduce_s(in.inter_algorithm, bytes, leaders);
    return in.ranks <= 1 ? 0.0 : hier_allreduce_s(in.ranks_per_node, bytes, in.intra, inter, in.costs);
  }
  throw ConfigError("no closed form for algorithm '" + algorithm + "'");
}

std::string formula(const std::string& algorithm)
{
  if (algorithm == "ring")
    return "2(P-1)(alpha + o + M/(P B)) + (P-1) gamma M/P";
  if (algorithm == "rd")
    return "log2(p')(alpha + o + M/B + gamma M) [+ fold if P is not a power of two]";
  if (algorithm == "hd")
    return "2 log2(p')(alpha + o) + (1 - 1/p')(2 M/B + gamma M) [+ fold]";
  if (algorithm == "tree")
    return "max-plus recurrence of the pipelined binary tree (docs/collectives.md)";
  if (algorithm == "dbtree")
    return "lower bound: one pipelined tree with M/2 (the two trees contend for links)";
  if (algorithm == "ps")
    return "2(alpha + M max(P,S)/(S B)) + overheads + gamma P M/S";
  if (algorithm == "hier")
    return "2(alpha_intra + M/B_intra) + (G-1) gamma M + inter-node allreduce among leaders + overheads";
  return "per size: the closed form of the algorithm chosen";
}

} // namespace ddlsim::analytical
