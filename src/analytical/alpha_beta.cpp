// Closed-form alpha-beta-gamma costs of the allreduce algorithms.
#include "analytical/alpha_beta.hpp"
#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ddlsim::analytical {
namespace {

int floor_log2(int p)
{
  int l = 0;
  while ((2 << l) <= p)
    ++l;
  return l;
}

/** The fold of a non-power-of-two group: one full-vector message and reduction before, one after. */
double fold_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& c)
{
  const int p2 = 1 << floor_log2(ranks);
  if (p2 == ranks)
    return 0.0;
  const double message = hop.alpha_s + c.overhead_s + double(bytes) / hop.bandwidth_bytes_per_s;
  return 2 * message + c.reduce_s_per_byte * double(bytes);
}

} // namespace

double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& costs)
{
  return ring_allreduce_s(ranks, bytes, &hop, 1, costs);
}

double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop* hops, int hop_count, const Costs& c)
{
  if (ranks <= 1)
    return 0.0;
  const double chunk = double(bytes) / ranks;
  double step = 0;
  for (int i = 0; i < hop_count; ++i)
    step = std::max(step, hops[i].alpha_s + c.overhead_s + chunk / hops[i].bandwidth_bytes_per_s);
  return 2.0 * (ranks - 1) * step + (ranks - 1) * c.reduce_s_per_byte * chunk;
}

double rd_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& c)
{
  if (ranks <= 1)
    return 0.0;
  const double m = double(bytes);
  const double step = hop.alpha_s + c.overhead_s + m / hop.bandwidth_bytes_per_s + c.reduce_s_per_byte * m;
  return floor_log2(ranks) * step + fold_s(ranks, bytes, hop, c);
}

double hd_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop, const Costs& c)
{
  if (ranks <= 1)
    return 0.0;
  const int l = floor_log2(ranks);
  const double p2 = double(1 << l);
  const double m = double(bytes) * (1.0 - 1.0 / p2);
  return 2 * l * (hop.alpha_s + c.overhead_s) + 2 * m / hop.bandwidth_bytes_per_s + c.reduce_s_per_byte * m +
         fold_s(ranks, bytes, hop, c);
}

double tree_allreduce_s(int ranks, std::uint64_t bytes, std::uint64_t chunk_bytes, const Hop& hop, const Costs& c)
{
  if (ranks <= 1)
    return 0.0;
  TreeShape heap = binary_heap(ranks);
  heap.up.assign(ranks, hop);
  return tree_allreduce_s(heap, bytes, chunk_bytes, c);
}

std::uint64_t pipeline_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes)
{
  const std::uint64_t chunk = chunk_bytes > 0 ? chunk_bytes : std::max<std::uint64_t>(bytes, 1); // 0: one piece
  return bytes == 0 ? 1 : bytes / chunk + (bytes % chunk != 0 ? 1 : 0); // no overflow near 2^64
}

TreeShape binary_heap(int members)
{
  TreeShape heap; // member r's children are 2r+1 and 2r+2: breadth-first order is 0, 1, ..., P-1
  heap.children.resize(static_cast<std::size_t>(members));
  for (int v = 0; v < members; ++v) {
    heap.order.push_back(v);
    for (int ch : {2 * v + 1, 2 * v + 2})
      if (ch < members)
        heap.children[v].push_back(ch);
  }
  return heap;
}

std::vector<int> tree_parents(const TreeShape& tree)
{
  std::vector<int> parents(tree.children.size(), -1);
  for (std::size_t v = 0; v < tree.children.size(); ++v)
    for (int c : tree.children[v])
      parents[static_cast<std::size_t>(c)] = static_cast<int>(v);
  return parents;
}

namespace {

/** A pipeline's chunks (pipeline_chunks): n of them, chunk i of `large` bytes for the first `larger`, else `small`. */
struct ChunkSizes {
  std::uint64_t n;
  double small, large;
  std::uint64_t larger;
  ChunkSizes(std::uint64_t bytes, std::uint64_t chunk_bytes)
      : n(pipeline_chunks(bytes, chunk_bytes))
      , small(double(bytes / n))
      , large(double(bytes / n + 1))
      , larger(bytes % n)
  {
  }
  double of(std::uint64_t i) const { return i < larger ? large : small; }
};

/** The pipelined-tree recurrence (docs/collectives.md), its callables inlined: `edge_time(child, up, chunk, size)`,
 *  `send_s(child, up, chunk, size)` (the sender's time before it posts), `seen(...)` (may do nothing). The edges are
 *  listed once in the order the recurrence visits them (flat, no per-member vectors), and the two chunk sizes
 *  computed once: the same operations in the same order as member by member, so the same doubles (where the compiler
 *  fuses no multiply-add, as for x86-64's baseline: an FMA may fuse other pairs here than there). */
template <class EdgeTimeFn, class SendFn, class SeenFn>
double pipelined_tree_s(const TreeShape& tree, const ChunkSizes& chunks, const Costs& c, EdgeTimeFn&& edge_time,
                        SendFn&& send_s, double recv_s, SeenFn&& seen, std::vector<double>& clock)
{
  const std::size_t ranks = tree.order.size();
  if (ranks <= 1)
    return ranks == 1 ? clock[0] : 0.0;
  // (member, child) in the reduce's order (members from the leaves up, each member's children in order); the
  // broadcast visits members from the root down.
  std::vector<std::pair<int, int>> up_edges, down_edges;
  up_edges.reserve(ranks);
  down_edges.reserve(ranks);
  for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it)
    for (int ch : tree.children[*it])
      up_edges.emplace_back(*it, ch);
  for (int v : tree.order)
    for (int ch : tree.children[v])
      down_edges.emplace_back(v, ch);
  // clock[v]: when member v is free for its next operation. Every member does one transfer at a time, so no
  // two transfers share a link; a transfer starts when the sender (after its overhead) and the receiver
  // are both ready.
  for (std::uint64_t i = 0; i < chunks.n; ++i) { // reduce: members from the leaves up, so children have posted chunk i
    const double size = chunks.of(i);
    const double reduce = c.reduce_s_per_byte * size;
    for (const auto& [v, ch] : up_edges) {
      const double start = std::max(clock[ch] + send_s(ch, true, i, size), clock[v]);
      const double end = start + edge_time(ch, true, i, size);
      seen(ch, true, i, size, start, end);
      clock[ch] = end;                  // the child's send is done
      clock[v] = end + recv_s + reduce; // it lands, the member adds the child's chunk
    }
  }
  for (std::uint64_t i = 0; i < chunks.n; ++i) { // broadcast: from the root down
    const double size = chunks.of(i);
    for (const auto& [v, ch] : down_edges) {
      const double start = std::max(clock[v] + send_s(ch, false, i, size), clock[ch]);
      const double end = start + edge_time(ch, false, i, size);
      seen(ch, false, i, size, start, end);
      clock[v] = end;
      clock[ch] = end + recv_s;
    }
  }
  return *std::max_element(clock.begin(), clock.end());
}

} // namespace

double tree_allreduce_floor_s(int ranks, std::uint64_t bytes, std::uint64_t chunk_bytes, const Hop& hop)
{
  if (ranks <= 1)
    return 0.0;
  // In the binary heap, member u's children are 2u+1 and 2u+2; the deepest member below u is on its leftmost path
  // (the heap fills each level from the left), `below(u)` transfers down.
  const auto below = [ranks](int u) {
    int steps = 0;
    for (long long v = 2LL * u + 1; v < ranks; v = 2 * v + 1)
      ++steps;
    return steps;
  };
  const auto children = [ranks](int u) {
    std::vector<int> c;
    for (int ch : {2 * u + 1, 2 * u + 2})
      if (ch < ranks)
        c.push_back(ch);
    return c;
  };
  const ChunkSizes chunks(bytes, chunk_bytes);
  const double e = hop.alpha_s + chunks.small / hop.bandwidth_bytes_per_s; // no transfer of a chunk is shorter
  const double all =
      double(chunks.n) * hop.alpha_s + double(bytes) / hop.bandwidth_bytes_per_s; // one edge, every chunk
  // Member u (the root, or member 1: the busiest others) does its transfers one at a time: each chunk over each of its
  // edges up and down, 2 d (n alpha + M/B). Its first, chunk 0 from its first child, waits for that chunk to climb
  // from the deepest member below that child; after its last, chunk n-1 to its last child, that chunk still goes
  // down to the deepest member below that child.
  // The recurrence sums these times one transfer after another, each sum rounded: less k units of rounding per
  // transfer summed (k = 4: each sum, and the floor's own few operations), relative, off the bound.
  const auto bound = [&](int u) {
    const std::vector<int> c = children(u);
    const int d = static_cast<int>(c.size()) + (u > 0 ? 1 : 0);
    double hops = 0;
    if (!c.empty())
      hops = double(below(c.front()) + below(c.back()));
    const double transfers = hops + 2.0 * d * double(chunks.n);
    return (hops * e + 2.0 * d * all) * (1.0 - 4.0 * (transfers + 8.0) * std::numeric_limits<double>::epsilon());
  };
  return std::max(bound(0), bound(1));
}

double tree_allreduce_s(const TreeShape& tree, std::uint64_t bytes, std::uint64_t chunk_bytes, const Costs& c)
{
  // Every edge's time for the two chunk sizes, computed once per edge (alpha + size / B, as member by member).
  const std::size_t ranks = tree.order.size();
  std::vector<double> clock(ranks, 0.0);
  if (ranks <= 1)
    return 0.0;
  const ChunkSizes chunks(bytes, chunk_bytes);
  std::vector<double> small_s(ranks, 0.0), large_s(ranks, 0.0);
  if (tree.up.size() < ranks)
    throw Error("internal: tree_allreduce_s needs a hop per member (TreeShape::up)");
  for (std::size_t v = 0; v < ranks; ++v) {
    small_s[v] = tree.up[v].alpha_s + chunks.small / tree.up[v].bandwidth_bytes_per_s;
    large_s[v] = tree.up[v].alpha_s + chunks.large / tree.up[v].bandwidth_bytes_per_s;
  }
  return pipelined_tree_s(
      tree, chunks, c,
      [&](int child, bool, std::uint64_t i, double) { return i < chunks.larger ? large_s[child] : small_s[child]; },
      [&c](int, bool, std::uint64_t, double) { return c.overhead_s; }, 0.0,
      [](int, bool, std::uint64_t, double, double, double) {}, clock);
}

double tree_allreduce_s(const TreeShape& tree, std::uint64_t bytes, std::uint64_t chunk_bytes, const Costs& c,
                        const EdgeTime& edge_time, const TransferSeen& seen, std::vector<double>* clocks,
                        const MessageCosts* message)
{
  const std::size_t ranks = tree.order.size();
  std::vector<double> zeros;
  std::vector<double>& clock = clocks != nullptr ? *clocks : zeros;
  if (clocks == nullptr)
    zeros.assign(ranks, 0.0);
  if (clock.size() != ranks)
    throw Error("internal: tree_allreduce_s needs one start time per member");
  auto send = [&](int child, bool up, std::uint64_t i, double s) {
    return message != nullptr ? message->send_s(child, up, i, s) : c.overhead_s;
  };
  const double recv_s = message != nullptr ? message->recv_overhead_s : 0.0;
  const ChunkSizes chunks(bytes, chunk_bytes);
  if (seen)
    return pipelined_tree_s(tree, chunks, c, edge_time, send, recv_s, seen, clock);
  return pipelined_tree_s(
      tree, chunks, c, edge_time, send, recv_s, [](int, bool, std::uint64_t, double, double, double) {}, clock);
}

double ps_allreduce_s(int ranks, int servers, std::uint64_t bytes, const Hop& hop, const Costs& c)
{
  if (ranks <= 1)
    return 0.0;
  const double m = double(bytes);
  const double flows = std::max(ranks, servers);
  const double push = hop.alpha_s + servers * c.overhead_s + m * flows / (servers * hop.bandwidth_bytes_per_s);
  const double pull = hop.alpha_s + ranks * c.overhead_s + m * flows / (servers * hop.bandwidth_bytes_per_s);
  return push + c.reduce_s_per_byte * ranks * m / servers + pull;
}

double hier_allreduce_s(int ranks_per_node, std::uint64_t bytes, const Hop& intra, double inter_s, const Costs& c)
{
  const double m = double(bytes);
  if (ranks_per_node <= 1)
    return inter_s;
  const double g = ranks_per_node - 1;
  const double gather = intra.alpha_s + c.overhead_s + m / intra.bandwidth_bytes_per_s;
  const double scatter = g * c.overhead_s + intra.alpha_s + m / intra.bandwidth_bytes_per_s;
  return gather + g * c.reduce_s_per_byte * m + inter_s + scatter;
}

} // namespace ddlsim::analytical
