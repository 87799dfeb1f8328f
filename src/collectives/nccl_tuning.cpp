// NCCL 2.5's tuning model for the allreduce, constant for constant (sources in docs/stacks.md, "nccl").
#include "collectives/nccl_tuning.hpp"

#include <algorithm>
#include <limits>

namespace ddlsim::collectives {
namespace {

// NCCL v2.5.6-1 src/graph/tuning.cc. Latencies in us, bandwidths in GB/s; [Tree, Ring][LL, LL128, Simple].
constexpr double kBaseLat[kNcclAlgos][kNcclProtos] = {{4.4, 4.4, 0}, {3.6, 3.6, 8.4}};
// hwLat[NVLink, PCI, NET][Tree, Ring][LL, LL128, Simple].
constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;
constexpr double kHwLat[3][kNcclAlgos][kNcclProtos] = {
    {{.5, 1.9, 28}, {.4, 2.5, 5.7}}, {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}}, {{5.0, 7.5, 50}, {.9, 2.5, 6.6}}};
// ll128MaxBw[ncclCollAllReduce].
constexpr double kLl128MaxBwAllreduce = 100.0;
// NCCL v2.5.6-1 src/enqueue.cc, treeCorrectionFactor[LL, LL128, Simple][log2(bytes / 64)], 64 B to 1 GB.
constexpr double kTreeCorrection[kNcclProtos][22] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .5, .5, .6, .7, .8, .9, .9, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .8, .7, .7, .7, .6, .6, .7, .7, .8, .8, .9, .9, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}};

/** NCCL's log2i (src/include/utils.h): floor(log2 n), 0 for n <= 1. */
long log2i(long n)
{
  long l = 0;
  while (n >>= 1)
    l++;
  return l;
}

int index(NcclAlgo a)
{
  return a == NcclAlgo::Tree ? 0 : 1;
}

int index(NcclProto p)
{
  return p == NcclProto::LL ? 0 : p == NcclProto::LL128 ? 1 : 2;
}

/** busBw after the "model refinements" of ncclSetThresholds, for a raw bus bandwidth `bus`. */
double refined_bus_gbps(const NcclTopology& t, NcclAlgo a, NcclProto p, double bus)
{
  if (a == NcclAlgo::Ring && p == NcclProto::LL)
    bus *= 1.0 / 4.0;
  if (a == NcclAlgo::Ring && p == NcclProto::LL128)
    bus = std::min(bus * 120.0 / 128.0, kLl128MaxBwAllreduce);
  if (a == NcclAlgo::Tree)
    bus = std::min(bus * .9, t.nodes > 1 ? 70.0 : 90.0);
  if (a == NcclAlgo::Tree && p == NcclProto::LL)
    bus *= 1.0 / 3.0;
  if (a == NcclAlgo::Tree && p == NcclProto::LL128)
    bus *= 7.0 / 9.0;
  return bus;
}

double raw_bus_gbps(const NcclTopology& t, NcclAlgo a)
{
  return a == NcclAlgo::Tree ? t.tree_bus_gbps : t.ring_bus_gbps;
}

} // namespace

double nccl_base_latency_us(NcclAlgo a, NcclProto p)
{
  return kBaseLat[index(a)][index(p)];
}

NcclCost nccl_cost(const NcclTopology& t, NcclAlgo a, NcclProto p)
{
  NcclCost c;
  if (t.ranks <= 1)
    return c;
  const int nsteps = 2 * (t.ranks - 1);
  const double ratio = a == NcclAlgo::Tree ? .5 : double(t.ranks) / nsteps;
  c.bandwidth_gbps = refined_bus_gbps(t, a, p, raw_bus_gbps(t, a)) * ratio;
  if (p == NcclProto::LL128 && !t.ll128)
    c.bandwidth_gbps = 0;
  const int intra_hw = t.nvlink ? kHwNvlink : kHwPci;
  c.latency_us = kBaseLat[index(a)][index(p)];
  if (a == NcclAlgo::Ring) {
    const int hw = t.nodes == 1 ? intra_hw : kHwNet;
    c.latency_us += nsteps * kHwLat[hw][index(a)][index(p)];
  } else {
    const double intra_lat = kHwLat[intra_hw][index(a)][index(p)];
    const double inter_lat = kHwLat[kHwNet][index(a)][index(p)];
    c.latency_us += 2 * ((t.ranks / t.nodes - 1) * intra_lat + double(log2i(t.nodes)) * inter_lat);
  }
  return c;
}

double nccl_efficiency(const NcclTopology& t, NcclAlgo a, NcclProto p)
{
  const double bus = raw_bus_gbps(t, a);
  return bus > 0 ? refined_bus_gbps(t, a, p, bus) / bus : 1.0;
}

double nccl_tree_correction(NcclProto p, std::uint64_t bytes)
{
  const long log_size = log2i(static_cast<long>(bytes >> 6));
  return log_size < 22 ? kTreeCorrection[index(p)][log_size] : 1.0;
}

NcclChoice nccl_choose(const NcclTopology& t, std::uint64_t bytes)
{
  NcclChoice best;
  double min_time = 3600000.0; // NCCL's: "Hopefully no operation will take an hour to complete."
  for (NcclAlgo a : {NcclAlgo::Tree, NcclAlgo::Ring})
    for (NcclProto p : {NcclProto::LL, NcclProto::LL128, NcclProto::Simple}) {
      const NcclCost c = nccl_cost(t, a, p);
      double bw = c.bandwidth_gbps;
      if (bw == 0)
        continue;
      if (a == NcclAlgo::Tree)
        bw *= nccl_tree_correction(p, bytes);
      const double time = c.latency_us + double(bytes) / (1000 * bw);
      if (time < min_time) {
        best = {a, p, time};
        min_time = time;
      }
    }
  return best;
}

namespace {

/** ncclGetBtree (trees.cc): root 0, node r's parent and children found from its lowest set bit. */
NcclTreeLinks btree(int nranks, int rank)
{
  int bit;
  for (bit = 1; bit < nranks; bit <<= 1)
    if (bit & rank)
      break;
  if (rank == 0)
    return {-1, nranks > 1 ? bit >> 1 : -1, -1};
  NcclTreeLinks l;
  l.up = (rank ^ bit) | (bit << 1);
  if (l.up >= nranks)
    l.up = rank ^ bit;
  int lowbit = bit >> 1;
  l.down0 = lowbit == 0 ? -1 : rank - lowbit; // always within bounds
  l.down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (l.down1 >= nranks) { // make sure down1 is within bounds
    l.down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
  return l;
}

/** The members of one node in the order whose slowest consecutive hop is fastest: for each bandwidth level from
 *  the highest down, a depth-first search for a path (a cycle when `cycle`) that uses only hops at least that fast;
 *  the first one found wins (members in their given order when every hop is alike). */
std::vector<int> order_node(const std::vector<int>& m, bool cycle, const MemberRoute& route)
{
  const std::size_t k = m.size();
  if (k <= 2)
    return m;
  std::vector<std::vector<double>> bw(k, std::vector<double>(k, 0));
  std::vector<double> levels;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      if (i != j)
        levels.push_back(bw[i][j] = route(m[i], m[j]).bandwidth_bytes_per_s);
  std::sort(levels.rbegin(), levels.rend());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  for (double level : levels) {
    std::vector<std::size_t> path{0};
    std::vector<bool> used(k, false);
    used[0] = true;
    long budget = 100000; // expansions per level: NCCL's search has a time limit too
    std::function<bool()> extend = [&]() -> bool {
      if (--budget < 0)
        return false;
      if (path.size() == k)
        return !cycle || bw[path.back()][0] >= level;
      for (std::size_t j = 1; j < k; ++j) {
        if (used[j] || bw[path.back()][j] < level)
          continue;
        used[j] = true;
        path.push_back(j);
        if (extend())
          return true;
        path.pop_back();
        used[j] = false;
      }
      return false;
    };
    if (extend()) {
      std::vector<int> out;
      for (std::size_t i : path)
        out.push_back(m[i]);
      return out;
    }
  }
  return m;
}

analytical::Hop worse(const analytical::Hop& a, const analytical::Hop& b)
{
  return {std::max(a.alpha_s, b.alpha_s), std::min(a.bandwidth_bytes_per_s, b.bandwidth_bytes_per_s)};
}

} // namespace

NcclTreeLinks nccl_dtree(int nodes, int node, int tree)
{
  if (tree == 0)
    return btree(nodes, node);
  auto map = [&](int x, auto f) { return x == -1 ? -1 : f(x); };
  if (nodes % 2 == 0) { // shift by one
    const NcclTreeLinks l = btree(nodes, (node - 1 + nodes) % nodes);
    auto shift = [&](int x) { return (x + 1) % nodes; };
    return {map(l.up, shift), map(l.down0, shift), map(l.down1, shift)};
  }
  const NcclTreeLinks l = btree(nodes, nodes - 1 - node); // mirror
  auto mirror = [&](int x) { return nodes - 1 - x; };
  return {map(l.up, mirror), map(l.down0, mirror), map(l.down1, mirror)};
}

NcclShape nccl_shape(const std::vector<int>& node_of_member, const MemberRoute& route, bool nvlink, bool ll128)
{
  NcclShape s;
  const int n = static_cast<int>(node_of_member.size());
  std::vector<int> node_ids;             // in order of first appearance
  std::vector<std::vector<int>> by_node; // members of each node, in group order
  for (int m = 0; m < n; ++m) {
    const auto it = std::find(node_ids.begin(), node_ids.end(), node_of_member[m]);
    if (it == node_ids.end()) {
      node_ids.push_back(node_of_member[m]);
      by_node.emplace_back();
    }
    by_node[std::find(node_ids.begin(), node_ids.end(), node_of_member[m]) - node_ids.begin()].push_back(m);
  }
  const int nodes = static_cast<int>(by_node.size());
  s.topology.ranks = n;
  s.topology.nodes = nodes;
  s.topology.nvlink = nvlink;
  s.topology.ll128 = ll128;
  const double inf = std::numeric_limits<double>::infinity();
  s.ring_hop = {0, inf};
  for (const auto& members : by_node)
    for (int m : order_node(members, nodes == 1, route))
      s.ring.push_back(m);
  for (int i = 0; i < n && n > 1; ++i)
    s.ring_hop = worse(s.ring_hop, route(s.ring[i], s.ring[(i + 1) % n]));
  std::vector<std::vector<int>> chains;
  for (const auto& members : by_node)
    chains.push_back(order_node(members, false, route));
  analytical::Hop tree_worst{0, inf};
  for (int t = 0; t < 2; ++t) {
    analytical::TreeShape& tree = s.trees[t];
    tree.children.assign(n, {});
    tree.up.assign(n, analytical::Hop{});
    int root = -1;
    for (int node = 0; node < nodes; ++node) {
      const auto& chain = chains[node];
      const NcclTreeLinks l = nccl_dtree(nodes, node, t);
      if (l.up == -1)
        root = chain.front();
      for (int down : {l.down0, l.down1})
        if (down != -1)
          tree.children[chain.front()].push_back(chains[down].front());
      for (std::size_t i = 0; i + 1 < chain.size(); ++i)
        tree.children[chain[i]].push_back(chain[i + 1]);
    }
    for (std::size_t i = 0; i < std::size_t(n) && root >= 0; ++i) { // breadth first from the root
      if (i == 0)
        tree.order.push_back(root);
      if (i >= tree.order.size())
        break;
      const int v = tree.order[i];
      for (int ch : tree.children[v]) {
        tree.up[ch] = route(ch, v);
        tree_worst = worse(tree_worst, tree.up[ch]);
        tree.order.push_back(ch);
      }
    }
  }
  for (std::size_t t = 0; t < s.trees.size(); ++t)
    s.parents[t] = analytical::tree_parents(s.trees[t]);
  if (n > 1) {
    s.topology.ring_bus_gbps = s.ring_hop.bandwidth_bytes_per_s / 1e9;
    s.topology.tree_bus_gbps = tree_worst.bandwidth_bytes_per_s / 1e9;
  }
  return s;
}

const char* to_string(NcclAlgo a)
{
  return a == NcclAlgo::Tree ? "tree" : "ring";
}

const char* to_string(NcclProto p)
{
  return p == NcclProto::LL ? "LL" : p == NcclProto::LL128 ? "LL128" : "Simple";
}

} // namespace ddlsim::collectives
