// Closed-form alpha-beta-gamma costs of the allreduce algorithms (derivations in docs/collectives.md).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace ddlsim::analytical {

/** @brief One hop of a contention-free network: latency alpha (s) and bandwidth (bytes/s). */
struct Hop {
  double alpha_s = 0;
  double bandwidth_bytes_per_s = 0;
};

/** @brief The worst (largest-latency, smallest-bandwidth) route of each role a closed form needs. */
struct RouteHops {
  Hop flat;    ///< among ring neighbours and XOR partners of all ranks
  Hop intra;   ///< hier: between a rank and its node's leader (zero if every node has one rank)
  Hop leaders; ///< hier: among ring neighbours and XOR partners of the node leaders
  Hop server;  ///< ps: from a rank to a server (zero without servers)
};

/** @brief Per-message and per-byte software costs (the CollectiveOptions of the simulation). */
struct Costs {
  double overhead_s = 0;        ///< o: added before every message is sent
  double reduce_s_per_byte = 0; ///< gamma: reduction time per byte
};

/** @brief Ring: 2(P-1)(alpha + o + M/(P B)) + (P-1) gamma M/P. Exact when P divides M; 0 for one rank. */
double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& costs = {});

/** @brief Ring whose hops differ but do not contend: every step takes as long as the slowest hop,
 *  2(P-1) max_i(alpha_i + o + M/(P B_i)) + (P-1) gamma M/P. */
double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop* hops, int hop_count, const Costs& costs = {});

/** @brief Recursive doubling: log2(p') (alpha + o + M/B + gamma M), plus, when P is not a power of two
 *  (p' < P), the fold: (alpha + o + M/B + gamma M) before and (alpha + o + M/B) after. */
double rd_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& costs = {});

/** @brief Halving-doubling (Rabenseifner): 2 log2(p') (alpha + o) + 2 (1 - 1/p') M/B + (1 - 1/p') gamma M,
 *  plus the same fold as rd when P is not a power of two. Exact when p' divides M. */
double hd_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& costs = {});

/** @brief Pipelined binary tree (member r's children 2r+1, 2r+2; one transfer at a time per member, chunks
 *  of `chunk_bytes`, 0: one chunk): evaluated exactly by the max-plus recurrence of docs/collectives.md. */
double tree_allreduce_s(int ranks, std::uint64_t bytes, std::uint64_t chunk_bytes, const Hop& hop,
                        const Costs& costs = {});

/** @brief A lower bound of tree_allreduce_s(ranks, bytes, chunk_bytes, hop, any costs), in O(log P): the root and
 *  member 1 (the busiest members) each do their transfers one at a time, every chunk over each of their d edges up
 *  and down, 2 d (n alpha + M/B); the first waits for chunk 0 to climb from the deepest member below its first child,
 *  and after the last chunk n-1 goes down to the deepest member below its last child, each hop at least one chunk's
 *  alpha + M/(n B). Less 4 units of rounding (epsilon) per transfer summed, relative: the recurrence's sums round. For
 * searches that would evaluate the recurrence many times (mgwfbp's planner): a group whose floor already loses needs no
 * recurrence. */
double tree_allreduce_floor_s(int ranks, std::uint64_t bytes, std::uint64_t chunk_bytes, const Hop& hop);

/** @brief A rooted tree for the pipelined-tree recurrence: member v serves children[v] one at a time, in order, and
 *  reaches its parent over up[v] (unused for the root). Members must be listed parents before children
 *  (`order`, breadth first from the root). */
struct TreeShape {
  std::vector<int> order;
  std::vector<std::vector<int>> children;
  std::vector<Hop> up;
};

/** @brief How many chunks a pipelined tree cuts `bytes` into with chunks of `chunk_bytes` (0: one piece; at least one
 *  chunk, of 0 bytes for an empty message); chunk i then has chunk_bytes(bytes, n, i) bytes (nearly equal). */
std::uint64_t pipeline_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes);

/** @brief Each member's parent in `tree` (-1: the root). */
std::vector<int> tree_parents(const TreeShape& tree);

/** @brief The binary heap over `members` members: member r's children are 2r+1 and 2r+2, root 0; `order` is
 *  breadth-first (0, 1, ..., P-1); no hops (`up` empty). */
TreeShape binary_heap(int members);

/** @brief The max-plus recurrence of tree_allreduce_s on any tree with its own hop per edge: reduce chunk by chunk
 *  from the leaves up, then broadcast from the root down; exact when no two transfers share a link. */
double tree_allreduce_s(const TreeShape& tree, std::uint64_t bytes, std::uint64_t chunk_bytes, const Costs& costs = {});

/** @brief Seconds the transfer of chunk `chunk` (from 0), of `bytes`, takes over the edge between `child` and its
 *  parent: up (the reduce) or down (the broadcast). */
using EdgeTime = std::function<double(int child, bool up, std::uint64_t chunk, double bytes)>;
/** @brief What the recurrence saw of one transfer: chunk `chunk` of `bytes` over the edge of `child`, up or down, from
 *  `start_s` to `end_s` (seconds from the allreduce's start). */
using TransferSeen =
    std::function<void(int child, bool up, std::uint64_t chunk, double bytes, double start_s, double end_s)>;
/** @brief A software stack's per-message costs in the pipelined-tree recurrence (LogP's o_s and o_r): the sender's
 *  time before it posts chunk `chunk` on an edge, in place of Costs::overhead_s (its overheads, its copy and, above an
 *  eager limit, a rendezvous round trip), and the receiver's time after each chunk has landed. */
struct MessageCosts {
  EdgeTime send_s;
  double recv_overhead_s = 0;
};
/** @brief The same recurrence with every transfer's time given by `edge_time` (e.g. under contention); `seen`, if
 *  given, is told of every transfer. `clocks`, if given (one per member): in, when each member starts (seconds from
 *  the origin the times count from; by default every member at 0); out, when each member is done. `message`, if
 *  given, the stack's per-message costs. */
double tree_allreduce_s(const TreeShape& tree, std::uint64_t bytes, std::uint64_t chunk_bytes, const Costs& costs,
                        const EdgeTime& edge_time, const TransferSeen& seen = {}, std::vector<double>* clocks = nullptr,
                        const MessageCosts* message = nullptr);

/** @brief Parameter server, S servers on their own hosts, split sharding, every link of bandwidth B:
 *  push and pull each take alpha + o_S + M max(P, S) / (S B) (the server link carries P flows, the worker
 *  link S flows; o_S = S o for the worker's S sequential posts, P o for the server's), plus the server's
 *  aggregation gamma P M / S. */
double ps_allreduce_s(int ranks, int servers, std::uint64_t bytes, const Hop& hop, const Costs& costs = {});

/** @brief Hierarchical on nodes of G ranks whose members reach the leader over their own links (no
 *  sharing): (alpha_i + o + M/B_i) + (G-1) gamma M + inter + ((G-1) o + alpha_i + M/B_i). */
double hier_allreduce_s(int ranks_per_node, std::uint64_t bytes, const Hop& intra, double inter_s,
                        const Costs& costs = {});

} // namespace ddlsim::analytical
