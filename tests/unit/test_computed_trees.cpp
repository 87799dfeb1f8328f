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

/** The links tree_links leaves out of the computed network for these routes, sorted. */
std::vector<std::uint32_t> left_out(const std::vector<std::pair<int, int>>& x, double x_bytes_per_s)
{
  Trees t;
  build(t, x, x_bytes_per_s);
  std::vector<std::uint32_t> out = collectives::tree_links(t.flows).left_out;
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("trees_links_owned: a link of one member's edges qualifies whatever its bandwidth")
{
  // 3 -> 1, 1 -> 3 and 4 -> 1 cross X: member 1 is in every one, and takes part in one aggregation at a time.
  CHECK(owned({{3, 1}, {1, 3}, {4, 1}}, 0.01 * kB));
  // It limits them: it stays. The own links that only routes across X cross (3's up and down links, 6 and 7, and
  // 4's up link, 8) are wider than X (1 B against 0.01 B) and carry only transfers that cross it (dominated_links):
  // they go. 1's, crossed by routes to 0 too, stay.
  CHECK(left_out({{3, 1}, {1, 3}, {4, 1}}, 0.01 * kB) == std::vector<std::uint32_t>{6, 7, 8});
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

TEST_CASE("tree_links: under several lanes the count bound counts every lane's transfers")
{
  // The routes above (3 -> 1 and 2 -> 0 across X, each bound to B, the other links 3 B wide), run by `lanes` in-order
  // streams at once (TreeStream::set_lanes): one transfer per edge, direction and lane may cross X at once. Under two
  // lanes that is 4 B: X of 2 B may now fill and stays in the computed network; of 4 B it still cannot, and goes.
  // (The own links X is narrower than go either way: dominated_links.)
  auto left_out_under = [](double xb, int lanes) {
    Trees t;
    build(t, {{3, 1}, {2, 0}}, xb, {}, {}, kB);
    for (auto& [ends, r] : t.routes)
      for (std::size_t k = 0; k < r.shared_ids.size(); ++k)
        if (r.shared_ids[k] != kX)
          r.shared_bandwidth[k] = 3 * kB;
    const std::vector<std::uint32_t> out = collectives::tree_links(t.flows, lanes).left_out;
    return std::find(out.begin(), out.end(), kX) != out.end();
  };
  CHECK(left_out_under(2 * kB, 1));
  CHECK_FALSE(left_out_under(2 * kB, 2));
  CHECK(left_out_under(4 * kB, 2));
  CHECK_FALSE(left_out_under(4 * kB, 3));
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
  // Only the own links that X and Y make redundant go (3's and 2's up links, 6 and 4: crossed only by the routes
  // across X and Y, which are narrower: dominated_links); X and Y, equally wide, both stay.
  std::vector<std::uint32_t> out = links.left_out;
  std::sort(out.begin(), out.end());
  CHECK(out == std::vector<std::uint32_t>{4, 6});
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

namespace {

/** A route over `links` (id, bandwidth), in that order. */
CommWorld::Route route_over(const std::vector<std::pair<std::uint32_t, double>>& links)
{
  CommWorld::Route r;
  for (const auto& [id, bw] : links) {
    r.shared.push_back(nullptr);
    r.shared_ids.push_back(id);
    r.shared_bandwidth.push_back(bw);
  }
  return r;
}

/** dominated_links over `routes`, sorted. */
std::vector<std::uint32_t> dominated(const std::vector<CommWorld::Route>& routes,
                                     std::vector<std::uint32_t> left_out = {})
{
  std::vector<const CommWorld::Route*> ptrs;
  for (const auto& r : routes)
    ptrs.push_back(&r);
  collectives::dominated_links(ptrs, left_out);
  std::sort(left_out.begin(), left_out.end());
  return left_out;
}

} // namespace

TEST_CASE("dominated_links: a link goes where a narrower one is crossed by every route that crosses it")
{
  // Link 1 (1 B) and link 2 (0.5 B): both routes cross both, so every transfer on 1 is on 2 as well, whose bandwidth
  // is lower: 1 goes. Link 3 (4 B), crossed by the first route alone, goes too (2 is narrower); 2 stays.
  CHECK(dominated({route_over({{1, kB}, {2, 0.5 * kB}, {3, 4 * kB}}), route_over({{2, 0.5 * kB}, {1, kB}})}) ==
        std::vector<std::uint32_t>{1, 3});
  // A third route crosses 1 but not 2: 1 stays (2 no longer bounds its load); 3 still goes, and 4 (2 B), crossed by
  // the third route alone, goes behind 1.
  CHECK(dominated({route_over({{1, kB}, {2, 0.5 * kB}, {3, 4 * kB}}), route_over({{2, 0.5 * kB}, {1, kB}}),
                   route_over({{1, kB}, {4, 2 * kB}})}) == std::vector<std::uint32_t>{3, 4});
  // Links already left out are not listed twice.
  CHECK(dominated({route_over({{1, kB}, {2, 0.5 * kB}})}, {1}) == std::vector<std::uint32_t>{1});
}

TEST_CASE("dominated_links: a link as wide as the narrower one, within the margin, or crossed twice stays")
{
  // Equal bandwidths: the two links fill at one level, and which one comes first depends on the fill's order of
  // links: both stay.
  CHECK(dominated({route_over({{1, kB}, {2, kB}})}).empty());
  // Narrower by less than the margin (relative 1e-6): both stay; by more: the wider goes.
  CHECK(dominated({route_over({{1, kB}, {2, kB * (1 - 1e-7)}})}).empty());
  CHECK(dominated({route_over({{1, kB}, {2, kB * (1 - 1e-5)}})}) == std::vector<std::uint32_t>{1});
  // A route that crosses link 1 twice loads it with its transfer twice: 1 stays.
  CHECK(dominated({route_over({{1, kB}, {2, 0.25 * kB}, {1, kB}})}).empty());
  // One that crosses the narrower link twice loads that one twice: it no longer bounds link 1's load, which stays.
  CHECK(dominated({route_over({{1, kB}, {2, 0.75 * kB}, {2, 0.75 * kB}})}).empty());
}

TEST_CASE("tree_links: a link bounded by feeders no bound holds for is left out, though no member owns them")
{
  // Member m's own links (2m up, 2m + 1 down) are 1 B wide. 3 -> 1 and 2 -> 0 cross F1 (id 11, 0.5 B), 4 -> 1 and
  // 0 -> 2 cross F2 (id 12, 0.5 B); 3 -> 1, 4 -> 1 and 2 -> 0 then cross X (1 B). No member is in every transfer
  // across F1 or F2, and no bound holds for them (two transfers at 0.5 B each, fed by 2 B of own links, drained by X
  // or own links: 1 B or more): they stay, as a DGX-1 node's NIC does. X carries at most what F1 and F2 feed it, 1 B
  // (its feeders), though three transfers may cross it: it is left out (a non-blocking leaf uplink fed by NICs). No
  // one narrower link is on every route across X (not dominated_links'), and F1 and F2 stay.
  Trees t;
  build(t, {}, kB);
  auto over = [](const std::vector<std::pair<std::uint32_t, double>>& links) {
    CommWorld::Route r = route_over(links);
    r.latency_s = 1e-6;
    r.bandwidth = *std::min_element(r.shared_bandwidth.begin(), r.shared_bandwidth.end());
    return r;
  };
  t.routes[{3, 1}] = over({{6, kB}, {11, 0.5 * kB}, {kX, kB}, {3, kB}});
  t.routes[{2, 0}] = over({{4, kB}, {11, 0.5 * kB}, {kX, kB}, {1, kB}});
  t.routes[{4, 1}] = over({{8, kB}, {12, 0.5 * kB}, {kX, kB}, {3, kB}});
  t.routes[{0, 2}] = over({{0, kB}, {12, 0.5 * kB}, {5, kB}});
  const collectives::TreeLinks links = collectives::tree_links(t.flows);
  auto out = [&links](std::uint32_t id) {
    return std::find(links.left_out.begin(), links.left_out.end(), id) != links.left_out.end();
  };
  CHECK_FALSE(links.exact); // F1 and F2 may limit transfers of two aggregations at once
  CHECK(out(kX));
  CHECK_FALSE(out(11));
  CHECK_FALSE(out(12));
}

namespace {

/** A stream program that runs nothing: give() records the call cost each member would sleep (call_cost_s). */
class CostProbe final : public collectives::StreamProgram {
public:
  void give(int /*lane*/, int /*member*/, std::uint64_t bytes, double /*ready_s*/) override
  {
    slept.push_back(call_cost_s(bytes));
  }
  std::size_t run(const std::vector<char>& /*open*/, std::vector<Ended>& /*ended*/) override { return 0; }
  bool idle() const override { return true; }
  double floor_s() const override { return 0; }
  std::vector<double> slept;
};

} // namespace

TEST_CASE("stream program: each size's call cost is its own, and a cost added counts from then on")
{
  // The sums are kept per size (call_cost_s): 100 B, then 200 B, then 100 B again give 1e-7, 2e-7, 1e-7 s under a cost
  // of 1 ns per byte; a cost of 1 s added after them counts for every later aggregation, of a size seen or not.
  CostProbe p;
  p.add_call_cost([](std::uint64_t bytes) { return double(bytes) * 1e-9; });
  for (std::uint64_t bytes : {100, 200, 100})
    p.give(0, 0, bytes, 0);
  p.add_call_cost([](std::uint64_t /*bytes*/) { return 1.0; });
  for (std::uint64_t bytes : {100, 300})
    p.give(0, 1, bytes, 0);
  REQUIRE(p.slept.size() == 5);
  CHECK(p.slept[0] == 100 * 1e-9);
  CHECK(p.slept[1] == 200 * 1e-9);
  CHECK(p.slept[2] == 100 * 1e-9);
  CHECK(p.slept[3] == 100 * 1e-9 + 1.0);
  CHECK(p.slept[4] == 300 * 1e-9 + 1.0);
}
