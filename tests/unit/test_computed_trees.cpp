// trees_links_owned (src/collectives/computed_trees.cpp): where one aggregation of the pipelined trees computed alone
// is the message level, because no link the trees' transfers share can meet two aggregations' transfers in a way
// that changes a rate. Routes built by hand (no platform, no engine): each member m has its own up link (id 2m) and
// down link (id 2m + 1) of bandwidth B; some routes also cross one shared link X (id 10).
#include "collectives/algorithms.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

using namespace ddlsim;
using collectives::CommWorld;

namespace {

constexpr double kB = 1e9;
constexpr std::uint32_t kX = 10;

/** One tree over 5 members (the heap: 1 and 2 under 0, 3 and 4 under 1), its routes made by `route(from, to)`. */
struct Trees {
  std::map<std::pair<int, int>, CommWorld::Route> routes; // (from, to): the route's storage
  collectives::TreeFlows flows;
};

/** A route from `from` to `to`: from's up link, X where `via_x`, to's down link; `first`/`last` false leave out the
 *  own link before or after X (a route that starts or ends on X). Its bandwidth: the narrowest of them, or `bound`. */
CommWorld::Route make_route(int from, int to, bool via_x, double x_bytes_per_s, bool first = true, bool last = true,
                            double bound = 0)
{
  CommWorld::Route r;
  auto cross = [&r](std::uint32_t id, double bw) {
    r.shared.push_back(nullptr);
    r.shared_ids.push_back(id);
    r.shared_bandwidth.push_back(bw);
  };
  if (first || !via_x)
    cross(static_cast<std::uint32_t>(2 * from), kB);
  if (via_x)
    cross(kX, x_bytes_per_s);
  if (last || !via_x)
    cross(static_cast<std::uint32_t>(2 * to + 1), kB);
  r.latency_s = 1e-6;
  r.bandwidth = bound > 0 ? bound : *std::min_element(r.shared_bandwidth.begin(), r.shared_bandwidth.end());
  return r;
}

/** The heap of 5 members; `x` lists the (from, to) routes that cross X (bandwidth `x_bytes_per_s`); `starts_on_x`
 *  and `ends_on_x` those of them without their own link before or after X; `bound` every route's bandwidth (0: its
 *  narrowest link). */
void build(Trees& t, const std::vector<std::pair<int, int>>& x, double x_bytes_per_s,
           const std::vector<std::pair<int, int>>& starts_on_x = {},
           const std::vector<std::pair<int, int>>& ends_on_x = {}, double bound = 0)
{
  const std::vector<int> parents = {-1, 0, 0, 1, 1};
  auto has = [](const std::vector<std::pair<int, int>>& v, int a, int b) {
    return std::find(v.begin(), v.end(), std::make_pair(a, b)) != v.end();
  };
  for (int c = 1; c < 5; ++c)
    for (const auto& [a, b] : {std::make_pair(c, parents[static_cast<std::size_t>(c)]),
                               std::make_pair(parents[static_cast<std::size_t>(c)], c)})
      t.routes[{a, b}] =
          make_route(a, b, has(x, a, b), x_bytes_per_s, !has(starts_on_x, a, b), !has(ends_on_x, a, b), bound);
  analytical::TreeShape shape;
  shape.children = {{1, 2}, {3, 4}, {}, {}, {}};
  t.flows.trees = {shape};
  t.flows.parents = {parents};
  t.flows.routes.assign(1, std::vector<std::array<const CommWorld::Route*, 2>>(5, {nullptr, nullptr}));
  for (int c = 1; c < 5; ++c) {
    const int p = parents[static_cast<std::size_t>(c)];
    t.flows.routes[0][static_cast<std::size_t>(c)] = {&t.routes.at({c, p}), &t.routes.at({p, c})};
  }
}

bool owned(const std::vector<std::pair<int, int>>& x, double x_bytes_per_s,
           const std::vector<std::pair<int, int>>& starts_on_x = {},
           const std::vector<std::pair<int, int>>& ends_on_x = {}, double bound = 0)
{
  Trees t;
  build(t, x, x_bytes_per_s, starts_on_x, ends_on_x, bound);
  return collectives::trees_links_owned(t.flows);
}

/** The links tree_links leaves out of the computed network for these routes. */
std::vector<std::uint32_t> left_out(const std::vector<std::pair<int, int>>& x, double x_bytes_per_s)
{
  Trees t;
  build(t, x, x_bytes_per_s);
  return collectives::tree_links(t.flows).left_out;
}

} // namespace

TEST_CASE("trees_links_owned: a link of one member's edges qualifies whatever its bandwidth")
{
  // 3 -> 1, 1 -> 3 and 4 -> 1 cross X: member 1 is in every one, and takes part in one aggregation at a time.
  CHECK(owned({{3, 1}, {1, 3}, {4, 1}}, 0.01 * kB));
  CHECK(left_out({{3, 1}, {1, 3}, {4, 1}}, 0.01 * kB).empty()); // it limits them: it stays
  // 2 -> 0 too: no member in common, and X (0.01 B) narrower than any transfer.
  CHECK_FALSE(owned({{3, 1}, {1, 3}, {4, 1}, {2, 0}}, 0.01 * kB));
}

TEST_CASE("trees_links_owned: a shared link qualifies where the transfers that may cross it at once fit")
{
  // 3 -> 1 and 2 -> 0 cross X, each route bound to B (as by a narrower fat pipe): at most one transfer per edge and
  // direction, 2 B at once. Their feeders (3's and 2's up links) and drains (1's and 0's down links) are 3 B wide, so
  // only this bound holds: X of 2 B qualifies, of 1.99 B not.
  auto wide = [](const std::vector<std::pair<int, int>>& x, double xb) {
    Trees t;
    build(t, x, xb, {}, {}, kB);
    for (auto& [ends, r] : t.routes)
      for (std::size_t k = 0; k < r.shared_ids.size(); ++k)
        if (r.shared_ids[k] != kX)
          r.shared_bandwidth[k] = 3 * kB;
    return collectives::trees_links_owned(t.flows);
  };
  CHECK(wide({{3, 1}, {2, 0}}, 2 * kB));
  CHECK_FALSE(wide({{3, 1}, {2, 0}}, 1.99 * kB));
  Trees t; // the bound holds without X too (each flow keeps its own): X is left out of the computed network
  build(t, {{3, 1}, {2, 0}}, 2 * kB, {}, {}, kB);
  CHECK(collectives::tree_links(t.flows).left_out == std::vector<std::uint32_t>{kX});
}

TEST_CASE("trees_links_owned: a shared link qualifies where the links before it, or after it, bound its load")
{
  // Up: 3 -> 1, 4 -> 1 and 2 -> 0 cross X: three transfers (3 B), fed by 3's, 4's and 2's up links (3 B), drained
  // into 1's and 0's down links (2 B: 3 -> 1 and 4 -> 1 share 1's). X of 2 B qualifies by its drains, of 1.99 B not.
  CHECK(owned({{3, 1}, {4, 1}, {2, 0}}, 2 * kB));
  CHECK_FALSE(owned({{3, 1}, {4, 1}, {2, 0}}, 1.99 * kB));
  // Down: 1 -> 3, 1 -> 4 and 0 -> 2: fed by 1's and 0's up links (2 B), drained into three (3 B): by its feeders.
  CHECK(owned({{1, 3}, {1, 4}, {0, 2}}, 2 * kB));
  CHECK_FALSE(owned({{1, 3}, {1, 4}, {0, 2}}, 1.99 * kB));
  // The feeders and drains here are members' own links, which stay in the computed network: X may go.
  CHECK(left_out({{3, 1}, {4, 1}, {2, 0}}, 2 * kB) == std::vector<std::uint32_t>{kX});
  CHECK(left_out({{1, 3}, {1, 4}, {0, 2}}, 2 * kB) == std::vector<std::uint32_t>{kX});
}

TEST_CASE("tree_links: two shared links bounded only by each other are exact, but both stay in the computed network")
{
  // 3 -> 1 and 2 -> 0 cross Y (id 11, 2 B) and then X (2 B); every member's own link is 3 B wide. Each transfer's
  // narrowest link before X is Y, after Y is X: X's feeders (Y: 2 B) bound X, Y's drains (X: 2 B) bound Y, and in the
  // full network both hold, so the form is exact. Without Y, X would no longer be bounded by it (nor Y without X):
  // two flows of 2 B each would load the one left to 4 B. So neither is left out.
  Trees t;
  build(t, {{3, 1}, {2, 0}}, 2 * kB);
  for (auto& [ends, r] : t.routes) {
    for (std::size_t k = 0; k < r.shared_ids.size(); ++k)
      if (r.shared_ids[k] != kX)
        r.shared_bandwidth[k] = 3 * kB;
    if (ends == std::make_pair(3, 1) || ends == std::make_pair(2, 0)) {
      r.shared.insert(r.shared.begin() + 1, nullptr);
      r.shared_ids.insert(r.shared_ids.begin() + 1, kX + 1);
      r.shared_bandwidth.insert(r.shared_bandwidth.begin() + 1, 2 * kB);
    }
    r.bandwidth = *std::min_element(r.shared_bandwidth.begin(), r.shared_bandwidth.end());
  }
  const collectives::TreeLinks links = collectives::tree_links(t.flows);
  CHECK(links.exact);
  CHECK(links.left_out.empty());
}

TEST_CASE("trees_links_owned: a route that starts or ends on the shared link leaves it unbounded on that side")
{
  // 3 -> 1 and 2 -> 0 cross X of 1.5 B (two transfers: 2 B). 3 -> 1 starts on X: its transfers are fed by nothing
  // before X, so the feeders (2's up link alone, 1 B) bound nothing; the drains (1's and 0's down links) are 2 B.
  CHECK_FALSE(owned({{3, 1}, {2, 0}}, 1.5 * kB, {{3, 1}}));
  // 2 -> 0 ends on X: the drains (1's down link alone) bound nothing; the feeders (3's and 2's up links) are 2 B.
  CHECK_FALSE(owned({{3, 1}, {2, 0}}, 1.5 * kB, {}, {{2, 0}}));
  // Neither: X of 2 B is bounded on both sides.
  CHECK(owned({{3, 1}, {2, 0}}, 2 * kB));
}
