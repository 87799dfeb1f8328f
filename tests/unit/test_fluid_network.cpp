// Unit tests: ddlsim's own network (analytical::FluidNetwork) on hand-worked flows, every time worked out by hand.
#include "analytical/fluid_network.hpp"
#include "common/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <vector>

using namespace ddlsim;
using Net = analytical::FluidNetwork;

namespace {

/** `links` links of 1e9 B/s (numbers 0 to links - 1), solved by components or as one set. */
Net gigabyte_links(std::uint32_t links, bool by_components)
{
  Net net;
  net.solve_by_components(by_components);
  for (std::uint32_t l = 0; l < links; ++l)
    net.set_capacity(l, 1e9);
  return net;
}

Net::FlowSpec spec(std::vector<std::uint32_t> links, double work, double latency_s = 0, double penalty = 1,
                   double bound = 0, std::uint64_t tag = 0)
{
  static std::deque<std::vector<std::uint32_t>> kept; // FlowSpec::links is a view: the lists outlive the specs
  kept.push_back(std::move(links));
  Net::FlowSpec s;
  s.links = kept.back();
  s.work = work;
  s.latency_s = latency_s;
  s.penalty = penalty;
  s.bound = bound;
  s.tag = tag;
  return s;
}

/** Advances `net` event by event until every flow of `ids` is done. */
void run(Net& net, const std::vector<std::size_t>& ids)
{
  for (int guard = 0; guard < 1000; ++guard) {
    bool all = true;
    for (std::size_t id : ids)
      all = all && net.done(id);
    if (all)
      return;
    const double next = net.next_event();
    REQUIRE(std::isfinite(next));
    net.advance(next);
  }
  FAIL("the flows never ended");
}

} // namespace

TEST_CASE("fluid network: one flow waits its latency, then takes the whole link")
{
  Net net;
  net.set_capacity(0, 1e9);
  const auto a = net.start(0, spec({0}, 1e6, 1e-6, 1e-6));
  CHECK(net.next_event() == 1e-6); // its latency ends
  run(net, {a});
  CHECK(net.end(a) == Approx(1e-6 + 1e-3).epsilon(1e-14));
}

TEST_CASE("fluid network: a flow that starts later shares the link, then the first's end gives the second all of it")
{
  // A alone for 0.5 ms (5e5 B of 1e6), then A and B at 5e8 B/s each: A's 5e5 B left take 1 ms (ends 1.5 ms), when B
  // has 5e5 B; alone again at 1e9, B ends 0.5 ms later, at 2 ms.
  Net net;
  net.set_capacity(0, 1e9);
  const auto a = net.start(0, spec({0}, 1e6));
  net.advance(0.5e-3);
  const auto b = net.start(0.5e-3, spec({0}, 1e6));
  run(net, {a, b});
  CHECK(net.end(a) == Approx(1.5e-3).epsilon(1e-14));
  CHECK(net.end(b) == Approx(2e-3).epsilon(1e-14));
}

TEST_CASE("fluid network: a flow in its latency takes no bandwidth")
{
  // A shares from 0; B waits 1 ms first: A has the link alone and ends at 1 ms; B then sends 1e6 B alone: 2 ms.
  Net net;
  net.set_capacity(0, 1e9);
  const auto a = net.start(0, spec({0}, 1e6));
  const auto b = net.start(0, spec({0}, 1e6, 1e-3, 1e-3));
  net.advance(0.5e-3);
  CHECK(net.rate(a) == Approx(1e9).epsilon(1e-15));
  CHECK(net.rate(b) == 0);
  run(net, {a, b});
  CHECK(net.end(a) == Approx(1e-3).epsilon(1e-14));
  CHECK(net.end(b) == Approx(2e-3).epsilon(1e-14));
}

TEST_CASE("fluid network: the sharing penalty weighs the shares (SimGrid's RTT unfairness), a bound caps one")
{
  // Penalties 1 and 3 on one link of 1.2e9: shares in the ratio 1/1 : 1/3, 9e8 and 3e8.
  Net net;
  net.set_capacity(0, 1.2e9);
  const auto a = net.start(0, spec({0}, 1e9, 0, 1));
  const auto b = net.start(0, spec({0}, 1e9, 0, 3));
  net.advance(0);
  net.next_event();
  CHECK(net.rate(a) == Approx(9e8).epsilon(1e-14));
  CHECK(net.rate(b) == Approx(3e8).epsilon(1e-14));
  // A third flow bound at 1e8 (its route's narrowest link elsewhere): it takes 1e8, the others share 1.1e9 as 3 : 1.
  const auto c = net.start(0, spec({0}, 1e9, 0, 1, 1e8));
  net.advance(0); // its latency (none) paid: it shares
  net.next_event();
  CHECK(net.rate(c) == Approx(1e8).epsilon(1e-14));
  CHECK(net.rate(a) == Approx(8.25e8).epsilon(1e-14));
  CHECK(net.rate(b) == Approx(2.75e8).epsilon(1e-14));
}

TEST_CASE("fluid network: a link's weights summed afresh where fixing a flow cancels them")
{
  // One link of 10 B/s, flows of penalties 1e-20 and 1: the link's sum of 1 / penalty is 1e20, the second flow's 1
  // lost in its rounding. The first is bound at 1 B/s (level 1e-20, below the link's 1e-19) and fixed first; taking
  // its 1e20 off leaves 0 for a link that still has a flow. Summed afresh: 1, and the second flow takes the 9 B/s left
  // (with 0 its level would be infinite, and the second flow fixed at an infinite rate).
  Net net;
  net.set_capacity(0, 10);
  const auto a = net.start(0, spec({0}, 1e9, 0, 1e-20, 1));
  const auto b = net.start(0, spec({0}, 1e9, 0, 1));
  net.advance(0);
  net.next_event();
  CHECK(net.rate(a) == Approx(1).epsilon(1e-14));
  CHECK(net.rate(b) == Approx(9).epsilon(1e-14));
}

TEST_CASE("fluid network: max-min over two links, the bottleneck first")
{
  // Link 0 (1e9) carries a and b, link 1 (2e9) carries b and c: link 0 fills first at 5e8 each; c takes the 1.5e9 left
  // on link 1. a and b end at 2 ms (1e6 B at 5e8); c has 3e6 B done by then and 1e6 B left, now at 2e9: 2.5 ms.
  Net net;
  net.set_capacity(0, 1e9);
  net.set_capacity(1, 2e9);
  const auto a = net.start(0, spec({0}, 1e6));
  const auto b = net.start(0, spec({0, 1}, 1e6));
  const auto c = net.start(0, spec({1}, 4e6));
  net.advance(0); // their latencies (none) paid: they share
  net.next_event();
  CHECK(net.rate(a) == Approx(5e8).epsilon(1e-14));
  CHECK(net.rate(b) == Approx(5e8).epsilon(1e-14));
  CHECK(net.rate(c) == Approx(1.5e9).epsilon(1e-14));
  run(net, {a, b, c});
  CHECK(net.end(a) == Approx(2e-3).epsilon(1e-14));
  CHECK(net.end(b) == Approx(2e-3).epsilon(1e-14));
  CHECK(net.end(c) == Approx(2.5e-3).epsilon(1e-14));
}

TEST_CASE("fluid network: events within a nanosecond of one are taken with it, as SimGrid's action heap does")
{
  // Alone on their links, a ends at 1 ms and b 0.5 ns later: both end at 1 ms; c, 2 ns later, at its own time.
  Net net;
  for (std::uint32_t l = 0; l < 3; ++l)
    net.set_capacity(l, 1e9);
  const auto a = net.start(0, spec({0}, 1e6));
  const auto b = net.start(0, spec({1}, 1e6 + 0.5));
  const auto c = net.start(0, spec({2}, 1e6 + 2));
  run(net, {a, b, c});
  CHECK(net.end(a) == Approx(1e-3).epsilon(1e-15));
  CHECK(net.end(b) == net.end(a));
  CHECK(net.end(c) == Approx(1e-3 + 2e-9).epsilon(1e-15));
}

TEST_CASE("fluid network: shares computed once per set of tags, and not taken for another set of the same size")
{
  // Round 1: tags 1 and 2 both on link 0: 5e8 each. Round 2: tags 1 and 3, 3 alone on link 1: 1e9 each (a cache keyed
  // by anything less than the tags themselves would hand round 1's shares). Round 3: tags 1 and 2 again: 5e8 each.
  Net net;
  net.set_capacity(0, 1e9);
  net.set_capacity(1, 1e9);
  auto round = [&](std::uint64_t tag, std::uint32_t link) {
    const double t = net.now();
    const auto a = net.start(t, spec({0}, 1e6, 0, 1, 0, 1));
    const auto b = net.start(t, spec({link}, 1e6, 0, 1, 0, tag));
    net.advance(t); // past the latency (none): sharing
    net.next_event();
    const std::vector<double> rates{net.rate(a), net.rate(b)};
    run(net, {a, b});
    net.release(a);
    net.release(b);
    return rates;
  };
  const auto first = round(2, 0);
  CHECK(first[0] == Approx(5e8).epsilon(1e-15));
  CHECK(first[1] == Approx(5e8).epsilon(1e-15));
  const std::size_t fills = net.fills(); // one set, the two flows (they end together)
  CHECK(fills == 1);
  const auto second = round(3, 1);
  CHECK(second[0] == Approx(1e9).epsilon(1e-15));
  CHECK(second[1] == Approx(1e9).epsilon(1e-15));
  CHECK(net.fills() > fills); // {1, 3} is new
  const std::size_t before = net.fills();
  CHECK(round(2, 0) == first);
  CHECK(net.fills() == before); // every set of round 1 found computed
  CHECK(net.flows() == 0);
}

TEST_CASE("fluid network: two sets of tags filed under one hash keep their own shares")
{
  // Tags {1, 2} (both on link 0: 5e8 each) and {3, t} with t chosen so that FNV-1a over them gives the same hash;
  // t's flow alone on link 1: 1e9 each. Only the entries' own tags tell the sets apart.
  const std::uint64_t prime = 1099511628211ULL, basis = 1469598103934665603ULL;
  const std::uint64_t t = ((basis ^ 1) * prime) ^ 2 ^ ((basis ^ 3) * prime);
  REQUIRE(t > 3); // sorted after 3
  REQUIRE(Net::hash_tags({1, 2}) == Net::hash_tags({3, t}));
  Net net;
  net.set_capacity(0, 1e9);
  net.set_capacity(1, 1e9);
  const auto a = net.start(0, spec({0}, 1e6, 0, 1, 0, 1));
  const auto b = net.start(0, spec({0}, 1e6, 0, 1, 0, 2));
  net.advance(0);
  net.next_event();
  CHECK(net.rate(a) == Approx(5e8).epsilon(1e-15));
  run(net, {a, b});
  const double t0 = net.now();
  const auto c = net.start(t0, spec({0}, 1e6, 0, 1, 0, 3));
  const auto d = net.start(t0, spec({1}, 1e6, 0, 1, 0, t));
  net.advance(t0);
  net.next_event();
  CHECK(net.rate(c) == Approx(1e9).epsilon(1e-15));
  CHECK(net.rate(d) == Approx(1e9).epsilon(1e-15));
}

TEST_CASE("fluid network: bad input is an internal error, not a wrong time")
{
  Net net;
  CHECK_THROWS_WITH(net.set_capacity(0, 0), Catch::Contains("capacities > 0"));
  net.set_capacity(0, 1e9);
  CHECK_THROWS_WITH(net.start(0, spec({1}, 1e6)), Catch::Contains("link without a capacity"));
  CHECK_THROWS_WITH(net.start(0, spec({0}, 1e6, 0, 0)), Catch::Contains("penalty > 0"));
  const auto a = net.start(0, spec({0}, 1e6));
  CHECK_THROWS_WITH(net.release(a), Catch::Contains("not done"));
  net.advance(1);
  CHECK(net.done(a));
  CHECK_THROWS_WITH(net.start(0.5, spec({0}, 1e6)), Catch::Contains("now >= the time advanced to"));
}

TEST_CASE("fluid network: a restart goes back to time 0 with the capacities and the computed shares kept")
{
  // Two tagged flows on link 0 from 0.5 ms: 5e8 B/s each, 1e6 B: they end at 2.5 ms. After a restart the same two
  // flows from 0.1 ms (earlier than the time advanced to before) end at 2.1 ms, on the capacity given once, with the
  // shares found computed (no second fill). A restart with a flow in flight is refused.
  Net net;
  net.set_capacity(0, 1e9);
  auto pair = [&](double t) {
    const auto a = net.start(t, spec({0}, 1e6, 0, 1, 0, 1));
    const auto b = net.start(t, spec({0}, 1e6, 0, 1, 0, 2));
    run(net, {a, b});
    return std::vector<double>{net.end(a), net.end(b)};
  };
  const auto first = pair(0.5e-3);
  CHECK(first[0] == Approx(2.5e-3).epsilon(1e-14));
  CHECK(first[1] == Approx(2.5e-3).epsilon(1e-14));
  CHECK(net.fills() == 1);
  net.restart();
  CHECK(net.now() == 0);
  CHECK(net.flows() == 0);
  const auto second = pair(0.1e-3);
  CHECK(second[0] == Approx(2.1e-3).epsilon(1e-14));
  CHECK(second[1] == Approx(2.1e-3).epsilon(1e-14));
  CHECK(net.fills() == 1);
  net.start(net.now(), spec({0}, 1e6));
  CHECK_THROWS_WITH(net.restart(), Catch::Contains("flows in flight"));
}

TEST_CASE("fluid network: a step takes every event due within a nanosecond of it, as SimGrid's engine does")
{
  // A flow of 1e6 B at 1e9 B/s ends at 1 ms. A step at 1 ms - 0.4 ns (another model's event, a sleep's end) ends it
  // there; a step at 1 ms - 1.5 ns does not (it ends at its own time, the next event). A step past the next event, or
  // before the time advanced to, is refused.
  Net net;
  net.set_capacity(0, 1e9);
  const auto a = net.start(0, spec({0}, 1e6));
  CHECK_FALSE(net.step(1e-3 - 1.5e-9));
  CHECK_FALSE(net.done(a));
  CHECK(net.now() == 1e-3 - 1.5e-9);
  CHECK(net.step(1e-3 - 0.4e-9));
  REQUIRE(net.done(a));
  CHECK(net.end(a) == 1e-3 - 0.4e-9);
  CHECK(net.finished() == std::vector<std::size_t>{a});
  const auto b = net.start(net.now(), spec({0}, 1e6));
  CHECK_THROWS_WITH(net.step(1), Catch::Contains("between the time advanced to and the next event"));
  CHECK_THROWS_WITH(net.step(0), Catch::Contains("between the time advanced to and the next event"));
  run(net, {b});
}

TEST_CASE("SimGrid's clock: a sleep lasts at least a nanosecond, and events within one of a step happen at it")
{
  // Sleeps of 0.26 ns and 2 us from 0; an event at 2 us + 0.5 ns (within 1 ns of the second) and one at 2 us + 1.5 ns
  // (not); a flow of the network ending at 3 us - 0.3 ns with an event at 3 us (taken with the flow's end).
  Net net;
  net.set_capacity(0, 1e9);
  analytical::SimClock clock;
  clock.sleep(0, 0.26e-9, 1, 10);
  clock.sleep(0, 2e-6, 2, 20);
  clock.at(2e-6 + 0.5e-9, 3, 30);
  clock.at(2e-6 + 1.5e-9, 4, 40);
  clock.at(3e-6, 5, 50);
  const auto f = net.start(0, spec({0}, 3e3 - 0.3)); // 3 us - 0.3 ns at 1e9 B/s
  std::vector<std::pair<std::size_t, int>> due;
  double now = -1;
  std::vector<std::pair<double, std::vector<std::pair<std::size_t, int>>>> steps;
  while (clock.next(net, now)) {
    clock.due(now, due);
    steps.emplace_back(now, due);
  }
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].first == 1e-9); // the 0.26 ns sleep: 1 ns
  CHECK(steps[0].second == std::vector<std::pair<std::size_t, int>>{{1, 10}});
  CHECK(steps[1].first == 2e-6);
  CHECK(steps[1].second == std::vector<std::pair<std::size_t, int>>{{2, 20}, {3, 30}});
  CHECK(steps[2].first == 2e-6 + 1.5e-9);
  CHECK(steps[2].second == std::vector<std::pair<std::size_t, int>>{{4, 40}});
  CHECK(steps[3].first == Approx(3e-6 - 0.3e-9).epsilon(1e-12)); // the flow's end, the event at 3 us with it
  CHECK(steps[3].second == std::vector<std::pair<std::size_t, int>>{{5, 50}});
  CHECK(net.done(f));
}

TEST_CASE("fluid network: solved by components, each component's shares are found computed on their own")
{
  // Three links of 1e9 B/s; every flow of a round ends at 2 ms (1e6 B at 5e8 on link 0 with another, 2e6 B alone on
  // links 1 and 2). Round 1: tags 1, 2 on link 0 and 4 on link 1; round 2 adds tag 5 on link 2; round 3: tags 1, 2 and
  // 5. By components, round 1 fills {1, 2} (a flow alone takes its share without a fill), rounds 2 and 3 nothing (each
  // component found computed); as one set, every round's set is new.
  for (const bool components : {true, false}) {
    Net net = gigabyte_links(3, components);
    std::vector<std::size_t> fills;
    for (const auto& round : std::vector<std::vector<std::uint64_t>>{{1, 2, 4}, {1, 2, 4, 5}, {1, 2, 5}}) {
      const double t = net.now();
      std::vector<std::size_t> ids;
      for (std::uint64_t tag : round) {
        const std::uint32_t link = tag <= 2 ? 0 : tag == 4 ? 1 : 2;
        ids.push_back(net.start(t, spec({link}, tag <= 2 ? 1e6 : 2e6, 0, 1, 0, tag)));
      }
      net.next_event();
      for (std::size_t k = 0; k < ids.size(); ++k)
        CHECK(net.rate(ids[k]) == Approx(round[k] <= 2 ? 5e8 : 1e9).epsilon(1e-15));
      run(net, ids);
      for (std::size_t id : ids)
        CHECK(net.end(id) == Approx(t + 2e-3).epsilon(1e-12));
      for (std::size_t id : ids)
        net.release(id);
      fills.push_back(net.fills());
    }
    if (components)
      CHECK(fills == std::vector<std::size_t>{1, 1, 1});
    else
      CHECK(fills == std::vector<std::size_t>{1, 2, 3});
  }
}

TEST_CASE("fluid network: a flow's end frees its link for the others though its slot is taken before the next solve")
{
  // One link of 1e9 B/s: A (1e3 B) and B (3e3 B) share it at 5e8 until A ends at 2 us. There A is released and C, a
  // flow over no link capped at 1e9 B/s, takes its slot before the shares are solved again. B then has the link
  // alone: its 2e3 B left end at 4 us (at 6 us if A's link were not solved again); C ends at 3 us.
  for (const bool components : {true, false}) {
    Net net = gigabyte_links(1, components);
    const auto a = net.start(0, spec({0}, 1e3));
    const auto b = net.start(0, spec({0}, 3e3));
    CHECK(net.next_event() == Approx(2e-6).epsilon(1e-12));
    REQUIRE(net.step(net.next_event()));
    REQUIRE(net.finished() == std::vector<std::size_t>{a});
    net.release(a);
    const auto c = net.start(net.now(), spec({}, 1e3, 0, 1, 1e9));
    CHECK(c == a); // the slot reused
    run(net, {b, c});
    CHECK(net.end(c) == Approx(3e-6).epsilon(1e-12));
    CHECK(net.end(b) == Approx(4e-6).epsilon(1e-12));
  }
}

TEST_CASE("fluid network: by components, only the component a flow joins or leaves is solved again")
{
  // Links 0 and 1 of 1e9 B/s, untagged flows (every solve of two or more a fill). A and A' on link 0 (4e3 B each, at
  // 5e8 B/s: they end at 8 us), then B and C on link 1 (1e3 B each, from 1 us: they end at 3 us). By components each
  // event solves only the component it touched: the start of A and A' fills {A, A'}, that of B and C fills {B, C},
  // their end leaves link 1 empty (nothing to fill): 2 fills, where solving every component at each event would
  // fill {A, A'} again twice (4). As one set: {A, A'}, {A, A', B, C}, {A, A'} (3).
  for (const bool components : {true, false}) {
    Net net = gigabyte_links(2, components);
    const auto a = net.start(0, spec({0}, 4e3));
    const auto a2 = net.start(0, spec({0}, 4e3));
    CHECK(net.next_event() == Approx(8e-6).epsilon(1e-12));
    net.advance(1e-6);
    const auto b = net.start(1e-6, spec({1}, 1e3));
    const auto c = net.start(1e-6, spec({1}, 1e3));
    run(net, {b, c});
    CHECK(net.end(b) == Approx(3e-6).epsilon(1e-12));
    run(net, {a, a2});
    CHECK(net.end(a) == Approx(8e-6).epsilon(1e-12));
    CHECK(net.fills() == (components ? 2u : 3u));
  }
}

TEST_CASE("fluid network: a flow alone takes the share a fill gives it, to the bit")
{
  // A lone flow's share is set without a fill (FluidNetwork::alone), by the fill's own arithmetic: the same rate as
  // the fill of a set where it is alone on its links (a second flow on a link of its own, as one set), for penalties
  // and capacities whose quotients round, with and without a bound that binds.
  for (const double penalty : {1.0, 3e-6, 7.3e-7})
    for (const double bound : {0.0, 4.1e8}) {
      Net lone;
      lone.set_capacity(0, 1.25e9);
      lone.set_capacity(1, 9.7e9);
      const auto x = lone.start(0, spec({0, 1}, 1e6, 0, penalty, bound));
      lone.next_event();
      Net pair;
      pair.set_capacity(0, 1.25e9);
      pair.set_capacity(1, 9.7e9);
      pair.set_capacity(2, 1e9);
      const auto y = pair.start(0, spec({0, 1}, 1e6, 0, penalty, bound));
      pair.start(0, spec({2}, 1e6));
      pair.next_event();
      CHECK(pair.fills() == 1);
      CHECK(lone.fills() == 0);
      CHECK(lone.rate(x) == pair.rate(y));
      CHECK(lone.rate(x) == Approx(bound > 0 ? bound : 1.25e9).epsilon(1e-15));
    }
}

TEST_CASE("fluid network: flows that end at one step are listed in the order they were started, not by slot")
{
  // Links of 1e9 B/s. A (1e3 B on link 0) ends at 1 us; then B starts on link 1 (a new slot), A is released, and C
  // takes A's slot on link 2. Both carry 1e3 B alone and end together at 2 us: B first (started first), though C's slot
  // is the lower one (the heap's order).
  for (const bool components : {true, false}) {
    Net net = gigabyte_links(3, components);
    const auto a = net.start(0, spec({0}, 1e3));
    REQUIRE(net.step(net.next_event()));
    const auto b = net.start(net.now(), spec({1}, 1e3));
    net.release(a);
    const auto c = net.start(net.now(), spec({2}, 1e3));
    REQUIRE(c < b);
    CHECK(net.next_event() == Approx(2e-6).epsilon(1e-12));
    REQUIRE(net.step(net.next_event()));
    CHECK(net.finished() == std::vector<std::size_t>{b, c});
  }
}

TEST_CASE("fluid network: latencies end in time order whichever flow started first, past the queues' count too")
{
  // Twelve flows, each alone on its link of 1e9 B/s with 1e3 B (1 us of transfer), started at 0 and at 1 us with
  // twelve different latencies (more latencies than FluidNetwork keeps queues for: the rest wait on the heap), the
  // longest first: flow k's latency (12 - k) us ends it at 13 - k us (from 0, k even) or 14 - k us (from 1 us, k odd).
  // Each step finds the flows due then; they come out in time order.
  Net net;
  for (std::uint32_t l = 0; l < 12; ++l)
    net.set_capacity(l, 1e9);
  std::vector<std::size_t> ids;
  std::vector<double> due;
  ids.resize(12);
  due.resize(12);
  for (const int odd : {0, 1}) { // the even ones from 0, the odd ones from 1 us
    const double at = odd * 1e-6;
    net.advance(at);
    for (int k = odd; k < 12; k += 2) {
      const double latency = (12 - k) * 1e-6;
      ids[k] = net.start(at, spec({static_cast<std::uint32_t>(k)}, 1e3, latency, latency));
      due[k] = at + latency + 1e-6;
    }
  }
  std::vector<std::size_t> order;
  for (int guard = 0; guard < 100 && order.size() < ids.size(); ++guard) {
    const double t = net.next_event();
    REQUIRE(std::isfinite(t));
    net.step(t);
    for (std::size_t id : net.finished()) {
      const auto k = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
      CHECK(net.end(id) == Approx(due[k]).epsilon(1e-12));
      order.push_back(k);
    }
  }
  REQUIRE(order.size() == ids.size());
  for (std::size_t i = 1; i < order.size(); ++i) // by due time; flows due together (k, k + 1 from 0 and 1 us)
    CHECK(due[order[i - 1]] <= due[order[i]] + 1e-15);
}

TEST_CASE("SimGrid's clock: sleeps of many lengths end in time order, those due together in the order they were made")
{
  // From 0, seventy sleeps of (70 - k) us, the longest first: the first 64 lengths (70 to 7 us) on SimClock's queues,
  // the other six (6 to 1 us) on its heap; an event at 6 us made last. Then, at the 1 us step, two sleeps of 5 us (on
  // the heap: no queue is left for a new length; due at 6 us with the sleep of 6 us and the event, after them) and one
  // of 7 us (the queue of that length: due at 8 us, after the sleep of 8 us made first). Every step yields its events
  // in time order, those of one time in the order they were made, wherever they were kept.
  constexpr int kSleeps = 70;
  Net net;
  analytical::SimClock clock;
  for (int k = 0; k < kSleeps; ++k)
    clock.sleep(0, (kSleeps - k) * 1e-6, static_cast<std::size_t>(k), 0);
  clock.at(6e-6, 100, 0);
  std::vector<std::pair<std::size_t, int>> due;
  std::vector<std::size_t> order;
  std::vector<double> times;
  double now = -1;
  while (clock.next(net, now)) {
    clock.due(now, due);
    if (now == 1e-6) {
      clock.sleep(now, 5e-6, 101, 0);
      clock.sleep(now, 5e-6, 102, 0);
      clock.sleep(now, 7e-6, 103, 0);
    }
    for (const auto& [who, what] : due) {
      order.push_back(who);
      times.push_back(now);
    }
  }
  std::vector<std::size_t> expected{69, 68, 67, 66, 65, 64, 100, 101, 102, 63, 62, 103};
  for (std::size_t k = 62; k-- > 0;)
    expected.push_back(k);
  CHECK(order == expected);
  for (std::size_t i = 1; i < times.size(); ++i)
    CHECK(times[i - 1] <= times[i]);
  REQUIRE(times.size() == expected.size());
  CHECK(times[6] == Approx(6e-6).epsilon(1e-12));
  CHECK(times[8] == Approx(6e-6).epsilon(1e-12));
  CHECK(times[11] == Approx(8e-6).epsilon(1e-12));
}

TEST_CASE("queues by key: the earliest first item is kept through pushes and takes, and nothing is taken before it")
{
  // Items are their own due times. Queue 1 (key 1) gets 5 and 7, queue 2 (key 2) 3: the earliest is 3, the second
  // queue's, though the first queue came first. Taking up to 4 takes 3 and empties queue 2 (the earliest: 5); a new
  // item 4.5 on the emptied queue 2 is the earliest again. Taking up to 4.4 takes nothing; up to 6, 4.5 and 5.
  analytical::QueuesByKey<double> queues;
  const auto due = [](double item) { return item; };
  std::vector<double> taken;
  const auto take = [&taken](double item) { taken.push_back(item); };
  CHECK(queues.earliest() == std::numeric_limits<double>::infinity());
  REQUIRE(queues.push(1, 5, 5));
  REQUIRE(queues.push(1, 7, 7));
  CHECK(queues.earliest() == 5); // (a later item on a queue: not its first)
  REQUIRE(queues.push(2, 3, 3));
  CHECK(queues.earliest() == 3);
  queues.take_until(4, due, take);
  CHECK(taken == std::vector<double>{3});
  CHECK(queues.earliest() == 5);
  REQUIRE(queues.push(2, 4.5, 4.5));
  CHECK(queues.earliest() == 4.5);
  queues.take_until(4.4, due, take);
  CHECK(taken == std::vector<double>{3});
  queues.take_until(6, due, take);
  CHECK(taken == std::vector<double>{3, 5, 4.5}); // queue by queue
  CHECK(queues.earliest() == 7);
  for (int key = 3; key <= 8; ++key) // eight keys in all: a ninth is refused
    REQUIRE(queues.push(key, 10 + key, 10 + key));
  CHECK_FALSE(queues.push(9, 1, 1));
  CHECK(queues.earliest() == 7);
  queues.clear();
  CHECK(queues.earliest() == std::numeric_limits<double>::infinity());
}

TEST_CASE("queues by key, by due time: the queues are taken in the order of their first items, only those due")
{
  // As above, the first items on a heap: up to 6, 4.5 (queue 2) before 5 (queue 1), though queue 1 came first; a
  // queue with nothing due is not visited; three keys allowed, a fourth refused.
  analytical::QueuesByKey<double, 3, true> queues;
  const auto due = [](double item) { return item; };
  std::vector<double> taken;
  const auto take = [&taken](double item) { taken.push_back(item); };
  REQUIRE(queues.push(1, 5, 5));
  REQUIRE(queues.push(1, 7, 7));
  REQUIRE(queues.push(2, 3, 3));
  CHECK(queues.earliest() == 3);
  queues.take_until(4, due, take);
  CHECK(taken == std::vector<double>{3});
  CHECK(queues.earliest() == 5);
  REQUIRE(queues.push(2, 4.5, 4.5));
  REQUIRE(queues.push(3, 9, 9));
  CHECK_FALSE(queues.push(4, 1, 1));
  CHECK(queues.earliest() == 4.5);
  queues.take_until(6, due, take);
  CHECK(taken == std::vector<double>{3, 4.5, 5}); // by due time, not queue by queue
  CHECK(queues.earliest() == 7);
  queues.take_until(100, due, take);
  CHECK(taken == std::vector<double>{3, 4.5, 5, 7, 9});
  CHECK(queues.earliest() == std::numeric_limits<double>::infinity());
  REQUIRE(queues.push(2, 11, 11)); // an emptied queue takes items again
  CHECK(queues.earliest() == 11);
  queues.clear();
  CHECK(queues.earliest() == std::numeric_limits<double>::infinity());
}

TEST_CASE("queues by key, past 8 keys: each key found again through the index, 0 and -0 one key, cleared afresh")
{
  // 64 keys (SimClock's): sleep lengths of a stack's costs, 1 ns to 64 ns apart by 1 ns and some far apart. Once all
  // 64 have queues, a 65th is refused, so every key pushed again must be found (not added): a lookup that misses one
  // is refused. Every item comes back once.
  analytical::QueuesByKey<std::pair<double, int>, 64, true> queues;
  std::vector<double> keys;
  for (int k = 1; k <= 48; ++k)
    keys.push_back(k * 1e-9);
  for (int k = 0; k < 15; ++k)
    keys.push_back(std::ldexp(1.0, -k) * 3.7e-6);
  keys.push_back(0.0);
  REQUIRE(keys.size() == 64);
  int made = 0;
  for (double key : keys)
    REQUIRE(queues.push(key, {1.0, made++}, 1.0));
  CHECK_FALSE(queues.push(65e-9, {1.0, -1}, 1.0));          // a 65th key
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) // found again, in another order
    REQUIRE(queues.push(*key, {2.0, made++}, 2.0));
  REQUIRE(queues.push(-0.0, {3.0, made++}, 3.0)); // 0's queue
  std::vector<std::pair<double, int>> taken;
  queues.take_until(
      10, [](const std::pair<double, int>& item) { return item.first; },
      [&taken](const std::pair<double, int>& item) { taken.push_back(item); });
  REQUIRE(taken.size() == 129);
  std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (int i = 0; i < made; ++i)
    CHECK(taken[static_cast<std::size_t>(i)].second == i);
  queues.clear();
  for (int k = 0; k < 64; ++k) // new keys after clear(): none of the old ones' slots kept
    REQUIRE(queues.push(1.0 + k, {1.0, k}, 1.0));
  CHECK_FALSE(queues.push(0.0, {1.0, 0}, 1.0));
  CHECK(queues.push(64.0, {2.0, 0}, 2.0));
}

namespace {

/** Pushes 6,000 items on 5 keys in a fixed pseudo-random interleaving (each key's items due in the order pushed, over
 *  1,024 on some queues, so that their storage is compacted) and takes them at rising times: every item due by a take
 *  is taken by it, once, and no other; earliest() is the least due time of the items left. Reads of due(): by due
 *  time, only queues with an item due are visited (each taken item, and two more per such queue); by key, every queue
 *  is (three more per queue at most). Returns the items in the order taken. */
template <bool ByDue>
std::vector<std::pair<double, int>> check_queues_against_reference()
{
  analytical::QueuesByKey<std::pair<double, int>, 8, ByDue> queues;
  constexpr int kKeys = 5;
  std::vector<std::pair<double, int>> left, taken; // (due, item): the reference
  std::vector<int> key_of;
  std::vector<double> last(kKeys, 0.0);
  std::uint64_t state = 12345;
  auto next = [&state] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  std::size_t due_reads = 0;
  auto due = [&due_reads](const std::pair<double, int>& item) {
    ++due_reads;
    return item.first;
  };
  auto take = [&taken](const std::pair<double, int>& item) { taken.push_back(item); };
  double now = 0;
  int made = 0;
  while (made < 6000 || !left.empty()) {
    for (int k = 0; k < 8 && made < 6000; ++k, ++made) {
      const int key = static_cast<int>(next() % kKeys);
      last[key] = std::max(last[key], now) + double(next() % 100) * 1e-3; // no earlier than the key's last
      REQUIRE(queues.push(double(key), {last[key], made}, last[key]));
      left.emplace_back(last[key], made);
      key_of.push_back(key);
    }
    now += 0.05;
    const std::size_t before = taken.size();
    due_reads = 0;
    queues.take_until(now, due, take);
    std::vector<std::pair<double, int>> expected, rest;
    for (const auto& item : left)
      (item.first <= now ? expected : rest).push_back(item);
    std::vector<std::pair<double, int>> got(taken.begin() + static_cast<std::ptrdiff_t>(before), taken.end());
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    REQUIRE(got == expected);
    std::vector<char> visited(kKeys, 0);
    for (const auto& item : got)
      visited[static_cast<std::size_t>(key_of[static_cast<std::size_t>(item.second)])] = 1;
    const auto queues_due = static_cast<std::size_t>(std::count(visited.begin(), visited.end(), 1));
    CHECK(due_reads <= got.size() + (ByDue ? 2 * queues_due : 3 * std::size_t(kKeys)));
    left = rest;
    const double least =
        left.empty() ? std::numeric_limits<double>::infinity() : std::min_element(left.begin(), left.end())->first;
    REQUIRE(queues.earliest() == least);
  }
  return taken;
}

} // namespace

TEST_CASE("queues by key, both kinds, against a reference: every item due taken once, the earliest kept")
{
  const auto in_key_order = check_queues_against_reference<false>();
  const auto in_due_order = check_queues_against_reference<true>();
  CHECK(in_key_order.size() == 6000);
  CHECK(in_due_order.size() == 6000);
  CHECK(in_key_order != in_due_order); // the same items per take, in another order
}

TEST_CASE("fluid network: a bound just under every link it crosses limits its flow, one at a link capacity does not")
{
  // The fill leaves out of its order a flow's bound that a link it crosses already caps (a link's level never exceeds
  // its capacity times the flow's penalty): a bound of 0.9 of the narrowest link must stay in, and a bound equal to
  // it changes nothing. Two links of 1e9 and 2e9, penalty 2.
  for (const bool by_components : {false, true}) {
    Net net;
    net.solve_by_components(by_components);
    net.set_capacity(0, 1e9);
    net.set_capacity(1, 2e9);
    const auto under = net.start(0, spec({0, 1}, 1e9, 0, 2, 9e8));
    net.advance(0);
    net.next_event();
    CHECK(net.rate(under) == Approx(9e8).epsilon(1e-15));    // its bound, not the link's 1e9
    const auto at = net.start(0, spec({1}, 1e9, 0, 2, 2e9)); // bound equal to link 1's capacity
    net.advance(0);
    net.next_event();
    CHECK(net.rate(under) == Approx(9e8).epsilon(1e-15));
    CHECK(net.rate(at) == Approx(1.1e9).epsilon(1e-15)); // what link 1 has left
  }
}

TEST_CASE("fluid network: a wider link whose flows all cross a narrower one changes no share and no end, to the bit")
{
  // What lets dominated_links leave such links out of the computed trees: flows over "NICs" N0-N5 (1.22e10 B/s,
  // each flow up one and down another) with penalties and works that round; each flow also crosses wider links
  // (1.58e10 and 1.92e10 B/s, as PCIe switch links behind a NIC) crossed only by flows through that NIC, one of them a
  // flow's own link listed before the NIC, so that a flow's narrowest own link comes second in its list. Each flow has
  // its own tag, as each edge of the computed trees does: a component is filled in the order of its tags, not of the
  // search that found it over the links (which the wide links would change, and with it which of two links at one
  // level is filled first: a rounding apart). With and without the wide links, every rate after every event and every
  // end is equal to the bit, by components and as one.
  for (const bool components : {true, false}) {
    Net with, without;
    with.solve_by_components(components);
    without.solve_by_components(components);
    for (Net* net : {&with, &without})
      for (std::uint32_t n = 0; n < 6; ++n)
        net->set_capacity(n, 1.22e10);
    for (std::uint32_t w = 6; w < 12; ++w)
      with.set_capacity(w, 1.58e10);
    for (std::uint32_t w = 12; w < 18; ++w)
      with.set_capacity(w, 1.92e10);
    const double penalties[] = {1.1e-6, 2.7e-6, 1.3e-6};
    std::vector<std::size_t> a, b;
    std::uint32_t x = 7; // a small linear congruential sequence: the same flows in both
    double at = 0;
    for (int k = 0; k < 24; ++k) {
      x = x * 1103515245u + 12345u;
      const std::uint32_t up = (x >> 8) % 6, down = (up + 1 + (x >> 16) % 5) % 6;
      const double work = 1e5 * (1 + (x >> 4) % 97) / 3.0;
      const double penalty = penalties[k % 3];
      const double bound = k % 5 == 0 ? 9.1e9 : 0.0;
      at += 1e-7 * ((x >> 12) % 3); // never back in time
      // the wide links: one behind the sending NIC (before it), one behind the receiving NIC (after it)
      std::vector<std::uint32_t> full = {6 + up, up, down, 12 + down}, bare = {up, down};
      with.advance(at);
      without.advance(at);
      const std::uint64_t tag = static_cast<std::uint64_t>(k) + 1; // as the computed trees' edges (one flow each)
      a.push_back(with.start(at, spec(full, work, 0, penalty, bound, tag)));
      b.push_back(without.start(at, spec(bare, work, 0, penalty, bound, tag)));
    }
    for (int guard = 0; guard < 1000 && std::isfinite(with.next_event()); ++guard) {
      const double t = with.next_event();
      REQUIRE(without.next_event() == t);
      for (std::size_t k = 0; k < a.size(); ++k) {
        INFO("components " << components << " guard " << guard << " flow " << k);
        REQUIRE(with.rate(a[k]) == without.rate(b[k]));
      }
      with.advance(t);
      without.advance(t);
    }
    CHECK(std::isinf(without.next_event()));
    for (std::size_t k = 0; k < a.size(); ++k) {
      REQUIRE(with.done(a[k]));
      CHECK(with.end(a[k]) == without.end(b[k]));
    }
  }
}

TEST_CASE("fluid network: a flow's narrowest own link limits it wherever it comes in its list")
{
  // Flow A crosses its own links 0 (2e9 B/s) and 1 (1e9 B/s), then link 2 (1e10 B/s) with flow B: one component,
  // filled. Links 0 and 1 carry A alone; the narrower one, listed second, limits A to 1e9 B/s, and B takes the rest
  // of link 2, 9e9 B/s.
  Net net;
  net.set_capacity(0, 2e9);
  net.set_capacity(1, 1e9);
  net.set_capacity(2, 1e10);
  const auto a = net.start(0, spec({0, 1, 2}, 1e6));
  const auto b = net.start(0, spec({2}, 1e6));
  net.next_event();
  CHECK(net.fills() == 1);
  CHECK(net.rate(a) == Approx(1e9).epsilon(1e-15));
  CHECK(net.rate(b) == Approx(9e9).epsilon(1e-15));
}

TEST_CASE("fluid network: the shares' cache rests after a window of lookups that rarely find a set, then finds again")
{
  // Two tagged flows of 1e3 B on one link of 1e9 B/s, by components: each round is one lookup (they end together).
  // Round {1, 2} is filled and kept, then found (no fill). 1,022 rounds of new tags end the window of 1,024 lookups
  // with one found: the cache rests for 15 windows' worth of solves, so {1, 2} is filled again (at the same rate, to
  // the bit); after the rest it is found again, the cache kept all along, and {3, 4}, filled while it rested, was
  // not kept.
  Net net = gigabyte_links(1, true);
  auto round = [&net](std::uint64_t t1, std::uint64_t t2) {
    const auto a = net.start(net.now(), spec({0}, 1e3, 0, 1, 0, t1));
    const auto b = net.start(net.now(), spec({0}, 1e3, 0, 1, 0, t2));
    net.next_event();
    const double r = net.rate(a);
    run(net, {a, b});
    net.release(a);
    net.release(b);
    return r;
  };
  const double first = round(1, 2);
  std::size_t fills = net.fills();
  CHECK(round(1, 2) == first);
  CHECK(net.fills() == fills); // found
  for (std::uint64_t i = 0; i < 1022; ++i)
    round(10 + 2 * i, 11 + 2 * i);
  fills = net.fills();
  CHECK(round(1, 2) == first);
  CHECK(net.fills() == fills + 1); // resting: filled
  for (int i = 0; i < 15 * 1024 - 1; ++i)
    round(3, 4);
  fills = net.fills();
  CHECK(round(1, 2) == first);
  CHECK(net.fills() == fills); // found again
  round(3, 4);                 // first seen while the cache rested: not kept then, filled now
  CHECK(net.fills() == fills + 1);
}

TEST_CASE("fluid network: the shares' cache forgets every set at once past 4,096 sets, or past 4 M tags")
{
  // Tagged flows of 1e3 B on one link of 1e9 B/s, by components: each round one lookup. Set {3, 4} recurs every
  // eighth round, so the cache never rests (one in eight found). {1, 2} is kept first; 4,094 rounds of new sets bring
  // the sets kept to 4,096, and {1, 2} is still found; one new set more forgets them all, and {1, 2} is filled again.
  Net net = gigabyte_links(1, true);
  auto round = [&net](const std::vector<std::uint64_t>& tags) {
    std::vector<std::size_t> ids;
    for (std::uint64_t t : tags)
      ids.push_back(net.start(net.now(), spec({0}, 1e3, 0, 1, 0, t)));
    net.next_event();
    run(net, ids);
    for (std::size_t id : ids)
      net.release(id);
  };
  std::uint64_t fresh = 10;
  auto new_sets = [&](int n) { // n new two-flow sets, {3, 4} after every seventh
    for (int i = 0; i < n; ++i) {
      round({fresh, fresh + 1});
      fresh += 2;
      if (i % 7 == 6)
        round({3, 4});
    }
  };
  round({1, 2});
  round({3, 4});
  new_sets(4094);
  std::size_t fills = net.fills();
  round({1, 2});
  CHECK(net.fills() == fills); // found: 4,096 sets kept
  new_sets(1);
  fills = net.fills();
  round({1, 2});
  CHECK(net.fills() == fills + 1); // forgotten
  // Sets of 4,096 tags: {1, 2} and {3, 4} kept, then 1,023 of them (4,190,212 tags in all) still leave {1, 2} found;
  // the next would pass 4,194,304 tags (the bound) and forgets every set first.
  Net big = gigabyte_links(1, true);
  auto big_round = [&big](const std::vector<std::uint64_t>& tags) {
    std::vector<std::size_t> ids;
    for (std::uint64_t t : tags)
      ids.push_back(big.start(big.now(), spec({0}, 1e3, 0, 1, 0, t)));
    big.next_event();
    run(big, ids);
    for (std::size_t id : ids)
      big.release(id);
  };
  std::uint64_t next = 10;
  auto big_sets = [&](int n) { // n new sets of 4,096 tags, {3, 4} after each
    for (int i = 0; i < n; ++i) {
      std::vector<std::uint64_t> tags(4096);
      std::iota(tags.begin(), tags.end(), next);
      next += 4096;
      big_round(tags);
      big_round({3, 4});
    }
  };
  big_round({1, 2});
  big_round({3, 4});
  big_sets(1023); // 4 + 1,023 x 4,096 tags
  fills = big.fills();
  big_round({1, 2});
  CHECK(big.fills() == fills); // found
  big_sets(1);
  fills = big.fills();
  big_round({1, 2});
  CHECK(big.fills() == fills + 1); // forgotten
}

namespace {
/** One more flow at 85 us beside the star below (star_ends): none; over flow 7's own link only (it does not cross
 *  link 0); over link 0 and a link of 1e6 B/s (it would bind); over link 0 with a bound of 1e6 B/s; over link 0 and a
 *  link that a flow started at 80 us already crosses (not a member). */
enum class Newcomer { None, OffLink, NarrowLink, Bound, TakenLink };

/** 100 flows over link 0 (1e9 B/s), each also over its own link (1 + i, 1e9 B/s) and a link of four (1000 + i / 4,
 *  3e8 B/s), posted 1 us apart, 1e5 B each, and `newcomer`. Every flow's end, solved by components
 *  (processor-sharing groups; `incremental`: each event's neighbourhood) or as one set. */
std::vector<double> star_ends(bool by_components, Newcomer newcomer, std::size_t* groups = nullptr,
                              std::size_t* grouped = nullptr, bool incremental = false)
{
  Net net;
  net.solve_by_components(by_components);
  net.solve_incrementally(incremental);
  for (std::uint32_t l = 0; l < 1100; ++l)
    net.set_capacity(l, l < 1000 ? 1e9 : l == 1099 ? 1e6 : 3e8);
  std::vector<std::size_t> ids;
  for (std::uint32_t i = 0; i < 100; ++i) {
    const double t = 1e-6 * i;
    net.advance(t);
    ids.push_back(net.start(t, spec({0, 1 + i, 1000 + i / 4}, 1e5)));
    if (newcomer == Newcomer::TakenLink && i == 80)
      ids.push_back(net.start(t, spec({1098}, 1e5)));
    if (i != 85)
      continue;
    if (newcomer == Newcomer::OffLink)
      ids.push_back(net.start(t, spec({1 + 7}, 1e5)));
    else if (newcomer == Newcomer::NarrowLink)
      ids.push_back(net.start(t, spec({0, 1099}, 1e5)));
    else if (newcomer == Newcomer::Bound)
      ids.push_back(net.start(t, spec({0, 1097}, 1e5, 0, 1, 1e6)));
    else if (newcomer == Newcomer::TakenLink)
      ids.push_back(net.start(t, spec({0, 1098}, 1e5)));
  }
  run(net, ids);
  std::vector<double> ends;
  for (std::size_t id : ids)
    ends.push_back(net.end(id));
  if (groups != nullptr)
    *groups = net.groups();
  if (grouped != nullptr)
    *grouped = net.grouped();
  return ends;
}
} // namespace

TEST_CASE("fluid network: flows posted one after the other over one link share it as a group, as the set solved whole")
{
  // With n flows on link 0 each gets 1e9 / n there, and 3e8 / 4 = 7.5e7 on a full link of four: link 0 binds while
  // n >= 14. A processor-sharing group from the 64th flow on (FluidNetwork::Group), each later one joining it, each end
  // leaving it, until 13 are left and the links of four would bind (dissolved: the component solved again, the links
  // of four now the bottlenecks). The whole set, solved as one at every event, gives the same ends.
  // Solved incrementally, the group is made where the neighbourhood is the whole component, the same.
  for (const bool incremental : {false, true}) {
    INFO("incremental " << incremental);
    std::size_t groups = 0, grouped = 0;
    const std::vector<double> by_groups = star_ends(true, Newcomer::None, &groups, &grouped, incremental);
    const std::vector<double> whole = star_ends(false, Newcomer::None);
    REQUIRE(by_groups.size() == whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      INFO("flow " << i);
      CHECK(by_groups[i] == Approx(whole[i]).epsilon(1e-12));
    }
    CHECK(groups >= 1);
    CHECK(grouped >= 100); // 64 made it, 36 joined
    // By hand: the first flow runs alone 1 us (1e3 B at 1e9), then shares; all 100 are in flight until the first ends
    // (1e5 B each, far more than a microsecond's worth): the last to start ends last.
    CHECK(*std::max_element(whole.begin(), whole.end()) == whole.back());
  }
}

TEST_CASE("fluid network: a flow the group's share would not fit dissolves it, the shares as before")
{
  // The star above with one more flow at 85 us that cannot join the group: off its link (flow 7 and it share link 8),
  // held by a narrower link of its own or its own bound below the group's share, or on a link a flow outside the group
  // already crosses. Each time the group is dissolved and its component solved as any, then made again.
  for (const Newcomer newcomer : {Newcomer::OffLink, Newcomer::NarrowLink, Newcomer::Bound, Newcomer::TakenLink})
    for (const bool incremental : {false, true}) {
      INFO("newcomer " << static_cast<int>(newcomer) << " incremental " << incremental);
      std::size_t groups = 0;
      const std::vector<double> by_groups = star_ends(true, newcomer, &groups, nullptr, incremental);
      const std::vector<double> whole = star_ends(false, newcomer);
      REQUIRE(by_groups.size() == whole.size());
      for (std::size_t i = 0; i < whole.size(); ++i) {
        INFO("flow " << i);
        CHECK(by_groups[i] == Approx(whole[i]).epsilon(1e-12));
      }
      // Made again after the dissolution, except where the newcomer, held at 1e6 B/s, stays in the component with
      // another share until after the star's flows have all ended.
      const bool slow = newcomer == Newcomer::NarrowLink || newcomer == Newcomer::Bound;
      CHECK(groups == (slow ? 1u : 2u));
    }
}

TEST_CASE("fluid network: solved incrementally, every share and end is the whole component's, to rounding")
{
  // Flows up one "NIC" and down another (links 0-15, two capacities), every fourth also over a switch port (16-19),
  // penalties of three route latencies, every fifth bounded, every seventh waiting a latency, started over time so that
  // they come and go in components that chain the NICs. Each event's neighbourhood solved with the other flows held,
  // against the whole component filled: every share after every event, every event's time and every end equal to
  // rounding.
  for (const std::uint32_t seed : {7u, 11u, 23u, 91u, 1234u}) {
    Net whole, part;
    for (Net* net : {&whole, &part}) {
      net->solve_by_components(true);
      for (std::uint32_t l = 0; l < 20; ++l)
        net->set_capacity(l, l % 3 == 0 ? 1.22e10 : 2.5e10);
    }
    part.solve_incrementally(true);
    const double penalties[] = {1.1e-6, 2.7e-6, 1.3e-6};
    std::vector<std::size_t> a, b;
    std::uint32_t x = seed;
    auto compare = [&](int step) {
      for (std::size_t k = 0; k < a.size(); ++k) {
        INFO("seed " << seed << " step " << step << " flow " << k);
        REQUIRE(part.done(b[k]) == whole.done(a[k]));
        if (!whole.done(a[k]))
          REQUIRE(part.rate(b[k]) == Approx(whole.rate(a[k])).epsilon(1e-12));
      }
    };
    double at = 0;
    for (int k = 0; k < 300; ++k) {
      x = x * 1103515245u + 12345u;
      const std::uint32_t up = (x >> 8) % 16, down = (up + 1 + (x >> 16) % 15) % 16, port = 16 + (x >> 20) % 4;
      std::vector<std::uint32_t> links = {up, down};
      if (k % 4 == 1)
        links.push_back(port);
      const double work = 1e5 * (1 + (x >> 4) % 97);
      const double bound = k % 5 == 0 ? 9.1e9 : 0.0;
      const double latency = k % 7 == 0 ? 1e-6 : 0.0;
      at += 2e-6 * ((x >> 12) % 4);
      whole.advance(at);
      part.advance(at);
      compare(k);
      a.push_back(whole.start(at, spec(links, work, latency, penalties[k % 3], bound)));
      b.push_back(part.start(at, spec(links, work, latency, penalties[k % 3], bound)));
    }
    for (int step = 0; step < 10000 && std::isfinite(whole.next_event()); ++step) {
      const double t = whole.next_event(), u = part.next_event(); // (a rounding apart)
      REQUIRE(u == Approx(t).epsilon(1e-12));
      whole.advance(t);
      part.advance(u);
      compare(1000 + step);
    }
    CHECK(std::isinf(part.next_event()));
    for (std::size_t k = 0; k < a.size(); ++k)
      CHECK(part.end(b[k]) == Approx(whole.end(a[k])).epsilon(1e-12));
  }
}

TEST_CASE("fluid network: a fill that scans its links for the lowest, and a small one on its own arrays, give the "
          "heap's shares and ends, to the bit")
{
  // Flows up one "NIC" and down another (links 0-11; three capacities, each of every third link: links at one level,
  // where which of two comes first decides the rounding), every third also over a switch port (12-14), penalties
  // equal or mixed, every fifth bounded at a NIC's capacity or below, every seventh waiting a latency. The same flows
  // in a network that fills by scans alone (small sets on fill_small's arrays; its walks' stamps cleared every 5
  // walks), one that scans without fill_small, and one that fills by its heap alone, as one set, by components and
  // incrementally: every share after every event, every event's time and every end equal to the bit.
  for (const int mode : {0, 1, 2})
    for (const bool mixed : {false, true}) {
      Net small, scan, heap;
      for (Net* net : {&small, &scan, &heap}) {
        net->solve_by_components(mode > 0);
        net->solve_incrementally(mode == 2);
        for (std::uint32_t l = 0; l < 15; ++l)
          net->set_capacity(l, l % 3 == 0 ? 1.25e10 : l % 3 == 1 ? 2.5e10 : 1.25e10 / 3);
      }
      small.fill_by_scan_up_to(std::numeric_limits<std::size_t>::max());
      small.fill_small_up_to(Net::kSmallLinksMost);
      small.clear_stamps_after(5); // (and its walks' stamps cleared every 5 walks, the others' every 65,535)
      scan.fill_by_scan_up_to(std::numeric_limits<std::size_t>::max());
      scan.fill_small_up_to(0);
      heap.fill_by_scan_up_to(0);
      const double penalties[] = {1.1e-6, 2.7e-6, 1.3e-6};
      std::vector<std::size_t> a, b, c;
      std::uint32_t x = 17;
      auto compare = [&](int step) {
        for (std::size_t k = 0; k < a.size(); ++k) {
          INFO("mode " << mode << " mixed " << mixed << " step " << step << " flow " << k);
          REQUIRE(scan.done(a[k]) == heap.done(b[k]));
          REQUIRE(small.done(c[k]) == heap.done(b[k]));
          if (!heap.done(b[k])) {
            REQUIRE(scan.rate(a[k]) == heap.rate(b[k]));
            REQUIRE(small.rate(c[k]) == heap.rate(b[k]));
          }
        }
      };
      double at = 0;
      for (int k = 0; k < 240; ++k) {
        x = x * 1103515245u + 12345u;
        const std::uint32_t up = (x >> 8) % 12, down = (up + 1 + (x >> 16) % 11) % 12, port = 12 + (x >> 20) % 3;
        std::vector<std::uint32_t> links = {up, down};
        if (k % 3 == 1)
          links.push_back(port);
        const double work = 1e5 * (1 + (x >> 4) % 97);
        const double bound = k % 5 == 0 ? (k % 10 == 0 ? 1.25e10 : 3e9) : 0.0;
        const double latency = k % 7 == 0 ? 1e-6 : 0.0;
        const double penalty = mixed ? penalties[k % 3] : 1.0;
        at += 1e-6 * ((x >> 12) % 4);
        for (Net* net : {&small, &scan, &heap})
          net->advance(at);
        compare(k);
        a.push_back(scan.start(at, spec(links, work, latency, penalty, bound)));
        b.push_back(heap.start(at, spec(links, work, latency, penalty, bound)));
        c.push_back(small.start(at, spec(links, work, latency, penalty, bound)));
      }
      for (int step = 0; step < 10000 && std::isfinite(heap.next_event()); ++step) {
        const double t = heap.next_event();
        REQUIRE(scan.next_event() == t);
        REQUIRE(small.next_event() == t);
        for (Net* net : {&small, &scan, &heap})
          net->advance(t);
        compare(1000 + step);
      }
      CHECK(std::isinf(scan.next_event()));
      CHECK(std::isinf(small.next_event()));
      for (std::size_t k = 0; k < a.size(); ++k) {
        CHECK(scan.end(a[k]) == heap.end(b[k]));
        CHECK(small.end(c[k]) == heap.end(b[k]));
      }
      CHECK(scan.fills() == heap.fills());
      CHECK(small.fills() == heap.fills());
      CHECK(scan.small_fills() == 0);
      CHECK(heap.small_fills() == 0);
      INFO("mode " << mode << ": " << small.small_fills() << " of " << small.fills() << " fills small");
      CHECK(small.small_fills() >= 60); // (fill_small's: sets of at most 32 flows, most of the neighbourhoods')
      if (mode == 2)
        CHECK(small.small_fills() > small.fills() / 2);
    }
}

TEST_CASE("fluid network: solved incrementally, no group is made of a neighbourhood with a flow held on its links")
{
  // 72 flows posted 1 us apart over link 0 (1e9 B/s), each over its own link too; the sixth also over link 1000
  // (1.5e7 B/s), which a flow held at 1e6 B/s by its own link 1001 crosses. From the 72nd on, link 0 holds every flow
  // at 1e9 / 72 (so the sixth's neck is link 0, and the other flow on link 1000 is held, its neck elsewhere); a group
  // made of them would keep 1e9 / n for every member as they end, though the sixth then fills link 1000 (1e9 / 71 + 1e6
  // > 1.5e7). Ends against the whole component, solved as one set.
  auto ends = [](bool whole) {
    Net net;
    net.solve_by_components(!whole);
    net.solve_incrementally(!whole);
    for (std::uint32_t l = 0; l < 1002; ++l)
      net.set_capacity(l, l < 1000 ? 1e9 : l == 1000 ? 1.5e7 : 1e6);
    std::vector<std::size_t> ids = {net.start(0, spec({1000, 1001}, 1e4))};
    for (std::uint32_t i = 0; i < 72; ++i) {
      const double t = 1e-6 * i;
      net.advance(t);
      ids.push_back(net.start(t, i == 5 ? spec({0, 1 + i, 1000}, 1e5) : spec({0, 1 + i}, 1e5)));
    }
    run(net, ids);
    std::vector<double> out;
    for (std::size_t id : ids)
      out.push_back(net.end(id));
    CHECK(net.groups() == 0);
    return out;
  };
  const std::vector<double> part = ends(false), whole = ends(true);
  REQUIRE(part.size() == whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    INFO("flow " << i);
    CHECK(part[i] == Approx(whole[i]).epsilon(1e-12));
  }
}

TEST_CASE("small ids: in place up to four, on the heap past that, every id kept through growth, copies and moves")
{
  using analytical::SmallIds;
  SmallIds a;
  CHECK(a.empty());
  const std::vector<std::uint32_t> three{7, 8, 9}, six{1, 2, 3, 4, 5, 6};
  a.assign(three.data(), three.data() + three.size());
  CHECK(std::vector<std::uint32_t>(a.begin(), a.end()) == three);
  a.resize(6); // past the four in place: the three kept, the new ones 0
  CHECK(std::vector<std::uint32_t>(a.begin(), a.end()) == std::vector<std::uint32_t>{7, 8, 9, 0, 0, 0});
  a.assign(six.data(), six.data() + six.size());
  SmallIds copy = a; // its own block: writing one leaves the other
  copy[0] = 42;
  CHECK(a[0] == 1);
  SmallIds moved = std::move(copy); // the block taken, the source left empty
  CHECK(std::vector<std::uint32_t>(moved.begin(), moved.end()) == std::vector<std::uint32_t>{42, 2, 3, 4, 5, 6});
  CHECK(copy.empty()); // NOLINT(bugprone-use-after-move): a moved-from list is empty, and usable
  copy.assign(three.data(), three.data() + 2);
  CHECK(std::vector<std::uint32_t>(copy.begin(), copy.end()) == std::vector<std::uint32_t>{7, 8});
  CHECK(std::vector<std::uint32_t>(moved.begin(), moved.end()) == std::vector<std::uint32_t>{42, 2, 3, 4, 5, 6});
  SmallIds small;
  small.assign(three.data(), three.data() + 3);
  SmallIds small_moved = std::move(small); // in place: the ids copied into the new list's own place
  small = SmallIds{};
  small.resize(2);
  CHECK(std::vector<std::uint32_t>(small_moved.begin(), small_moved.end()) == three);
  std::vector<SmallIds> many(3, small_moved); // moved as the vector grows: each keeps its ids
  for (int k = 0; k < 100; ++k)
    many.push_back(k % 2 == 0 ? small_moved : a);
  CHECK(std::vector<std::uint32_t>(many[2].begin(), many[2].end()) == three);
  CHECK(std::vector<std::uint32_t>(many[102].begin(), many[102].end()) == six);
  a.assign(three.data(), three.data() + 1); // back to one id, in the block it grew
  CHECK(std::vector<std::uint32_t>(a.begin(), a.end()) == std::vector<std::uint32_t>{7});
  a.resize(3); // within the block: the ids past the one kept are 0, not the old 2 and 3
  CHECK(std::vector<std::uint32_t>(a.begin(), a.end()) == std::vector<std::uint32_t>{7, 0, 0});
}

TEST_CASE("fluid network: a flow over more links than it holds in place shares them, and its slot is taken again")
{
  // Eight links of 1e9 B/s. A crosses links 0 to 5, B link 5: 1e9 B each at 5e8 B/s, both end at 2 s. Then, in A's
  // slot, C over links 5 and 6 beside D over link 6 (5e8 B): 5e8 B/s each, D ends at 3 s; C alone then carries its
  // last 5e8 B at 1e9 B/s, to 3.5 s.
  Net net = gigabyte_links(8, true);
  const std::size_t a = net.start(0, spec({0, 1, 2, 3, 4, 5}, 1e9));
  const std::size_t b = net.start(0, spec({5}, 1e9));
  net.next_event();
  CHECK(net.rate(a) == 5e8);
  CHECK(net.rate(b) == 5e8);
  run(net, {a, b});
  CHECK(net.end(a) == Approx(2.0).epsilon(1e-15));
  CHECK(net.end(b) == Approx(2.0).epsilon(1e-15));
  net.release(b);
  net.release(a); // the next flow takes a's slot, with its six links' room
  const std::size_t c = net.start(2, spec({5, 6}, 1e9));
  REQUIRE(c == a);
  const std::size_t d = net.start(2, spec({6}, 5e8));
  run(net, {c, d});
  CHECK(net.end(d) == Approx(3.0).epsilon(1e-15));
  CHECK(net.end(c) == Approx(3.5).epsilon(1e-15));
}
