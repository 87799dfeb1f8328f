// NCCL 2.5 as NCCL builds and tunes it (NCCL v2.5.6-1: src/graph/tuning.cc, src/enqueue.cc, src/graph/trees.cc):
// per algorithm and protocol a latency and a bandwidth, the choice of the fastest for a message size, and the ring
// and double binary tree over the nodes. Pure C++, no SimGrid (the routes come in as a function).
#pragma once

#include "analytical/alpha_beta.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace ddlsim::collectives {

/** @brief NCCL's algorithms (NCCL_ALGO_TREE, NCCL_ALGO_RING) and protocols (NCCL_PROTO_LL, LL128, SIMPLE). */
enum class NcclAlgo { Tree, Ring };
enum class NcclProto { LL, LL128, Simple };

inline constexpr int kNcclAlgos = 2;
inline constexpr int kNcclProtos = 3;

/** @brief What NCCL's model reads about a communicator (docs/stacks.md, "nccl"). */
struct NcclTopology {
  int ranks = 1;
  int nodes = 1;
  bool nvlink = false;      ///< intra-node paths are NVLink (NCCL_HW_NVLINK), else PCIe (NCCL_HW_PCI)
  bool ll128 = false;       ///< LL128 enabled: Volta GPUs (compute capability 7.0) on NVLink only
  double ring_bus_gbps = 0; ///< nChannels x speed of the ring graph, GB/s (ddlsim: its slowest hop)
  double tree_bus_gbps = 0; ///< the same for the tree graph
};

/** @brief NCCL's figures for one (algorithm, protocol) of an allreduce: comm->latencies (us) and
 *  comm->bandwidths (GB/s of algorithm bandwidth; 0: disabled). */
struct NcclCost {
  double latency_us = 0;
  double bandwidth_gbps = 0;
};

/** @brief ncclSetThresholds (tuning.cc) for the allreduce. */
NcclCost nccl_cost(const NcclTopology& t, NcclAlgo a, NcclProto p);

/** @brief baseLat[a][p] (us): the part of the latency NCCL charges once per call, whatever the hops. */
double nccl_base_latency_us(NcclAlgo a, NcclProto p);

/** @brief NCCL's bus bandwidth after its per-protocol refinements divided by the raw bus bandwidth: the fraction of
 *  the links' bandwidth a protocol reaches (Simple ring 1, LL ring 1/4, LL128 ring 120/128 below its cap, tree
 *  0.9 x (LL 1/3, LL128 7/9) below its cap). */
double nccl_efficiency(const NcclTopology& t, NcclAlgo a, NcclProto p);

/** @brief The tree correction factor of getAlgoInfo (enqueue.cc) for `bytes` (1 for the ring). */
double nccl_tree_correction(NcclProto p, std::uint64_t bytes);

/** @brief getAlgoInfo: the (algorithm, protocol) of least latency + bytes / bandwidth. */
struct NcclChoice {
  NcclAlgo algo = NcclAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  double model_us = 0; ///< NCCL's own estimate of the time, microseconds
};
NcclChoice nccl_choose(const NcclTopology& t, std::uint64_t bytes);

/** @brief "ring", "tree"; "LL", "LL128", "Simple" (NCCL's own names). */
const char* to_string(NcclAlgo a);
const char* to_string(NcclProto p);

/** @brief ncclGetBtree / ncclGetDtree (trees.cc) over `nodes` nodes: node `node`'s parent and two children in tree
 *  `tree` (0: the binary tree, 1: its mirror for an odd count, shifted by one for an even count); -1 for none. */
struct NcclTreeLinks {
  int up = -1;
  int down0 = -1;
  int down1 = -1;
};
NcclTreeLinks nccl_dtree(int nodes, int node, int tree);

/** @brief NCCL's ring and trees over the members of a group, and what its tuning model reads. */
struct NcclShape {
  NcclTopology topology;
  std::vector<int> ring;                      ///< members in ring order: a node's GPUs, then the next node's
  analytical::Hop ring_hop;                   ///< its slowest hop (largest latency, smallest bandwidth)
  std::array<analytical::TreeShape, 2> trees; ///< a chain inside each node, the double binary tree across nodes
  std::array<std::vector<int>, 2> parents;    ///< per tree, each member's parent (-1: the root)
};

/** @brief The route between two members of a group. */
using MemberRoute = std::function<analytical::Hop(int from, int to)>;

/** @brief NCCL's structures over `node_of_member.size()` members: nodes in order of first appearance; inside a node
 *  the GPUs in the order that keeps the slowest consecutive hop fastest (NCCL's search tries the highest speed
 *  first, src/graph/search.cc), a cycle on one node, a path when the ring leaves the node; the first GPU of a
 *  node's chain joins the tree across nodes. `nvlink` and `ll128` go into the topology as given. */
NcclShape nccl_shape(const std::vector<int>& node_of_member, const MemberRoute& route, bool nvlink, bool ll128);

} // namespace ddlsim::collectives
