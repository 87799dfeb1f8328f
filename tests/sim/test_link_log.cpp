// LinkLog (engine/link_log.hpp): a link's busy time is the length of the union of its transfers' spans, however many
// spans pile up and whatever the drivers' floors let it fold.
#include "engine/link_log.hpp"
#include "sim/probe.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;
using namespace ddlsim;

namespace {

/** A route over one link (number 0 in the world): star link "l0" of test::write_star_platform, its up direction. */
collectives::CommWorld::Route one_link()
{
  const sg4::Link* l0 = sg4::Link::by_name("l0_UP");
  return {{l0}, {l0->get_bandwidth()}, {0}, 0.0, l0->get_bandwidth(), {}};
}

/** Adds the unit spans [2k, 2k + 1] for k in [from, to): as many disjoint busy intervals. */
void add_units(engine::LinkLog& log, const collectives::CommWorld::Route& route, int from, int to)
{
  for (int k = from; k < to; ++k)
    log.add(route, 10, 2.0 * k, 2.0 * k + 1);
}

/** The length of the union of `spans` (sorted here; touching ones joined), computed from every span. */
double union_length(std::vector<std::pair<double, double>> spans)
{
  std::sort(spans.begin(), spans.end());
  double length = 0, open = spans.front().first, close = spans.front().second;
  for (const auto& [s, e] : spans) {
    if (s > close) {
      length += close - open;
      open = s;
    }
    close = std::max(close, e);
  }
  return length + (close - open);
}

/** The busy time of the one link with traffic. */
double busy_s(engine::LinkLog& log)
{
  const auto usage = log.usage(0);
  REQUIRE(usage.size() == 1);
  return usage.front().busy_s;
}

} // namespace

TEST_CASE("link log: intervals that end before every driver's floor fold, the others still meet later spans")
{
  // 1100 unit intervals at 0, 2, ..., 2198 (nothing folded without a floor). The one driver's floor 2196.5: the
  // intervals up to [2194, 2195] end before it and fold, [2196, 2197] and [2198, 2199] may not. 1000 more from 3000
  // (the folded ones' memory reused), then a span from 2196.6 to 2197.6 (after the floor, as a driver may report it)
  // extends [2196, 2197] by 0.6: busy 1100 + 1000 + 0.6.
  test::ProbeEngine engine(test::write_star_platform({}));
  const auto route = one_link();
  engine::LinkLog log(false, 1);
  add_units(log, route, 0, 1100);
  log.set_floor(0, 2196.5);
  add_units(log, route, 1500, 2500);
  log.add(route, 10, 2196.6, 2197.6);
  CHECK(busy_s(log) == Approx(2100.6).epsilon(1e-12));
}

TEST_CASE("link log: no interval folds until every driver has set its floor")
{
  // Two drivers, only the first sets a floor (far ahead): the second may still report a span anywhere, here from 100.5
  // to 101.5 over [100, 101] after 2100 intervals: busy 2100 + 0.5.
  test::ProbeEngine engine(test::write_star_platform({}));
  const auto route = one_link();
  engine::LinkLog log(false, 2);
  add_units(log, route, 0, 1100);
  log.set_floor(0, 1e9);
  add_units(log, route, 1500, 2500);
  log.add(route, 10, 100.5, 101.5);
  CHECK(busy_s(log) == Approx(2100.5).epsilon(1e-12));
  // Both floors set: the least counts. The second driver's floor 3001.5 lets the intervals up to [3000, 3001] fold;
  // after 2100 more spans from 10000, a span over [3002, 3003] from 3002.5 still extends it (by 0.5).
  log.set_floor(1, 3001.5);
  add_units(log, route, 5000, 7100);
  log.add(route, 10, 3002.5, 3003.5);
  CHECK(busy_s(log) == Approx(2100.5 + 2100 + 0.5).epsilon(1e-12));
}

TEST_CASE("link log: copied iterations copy the folded time too")
{
  // 1100 intervals, folded below the floor 10000 as 1000 more (from 10000) come: 2100 s of busy time in the first
  // period of 20000 s; three periods in all: 6300 s, and three times the bytes.
  test::ProbeEngine engine(test::write_star_platform({}));
  const auto route = one_link();
  engine::LinkLog log(false, 1);
  add_units(log, route, 0, 1100);
  log.set_floor(0, 10000);
  add_units(log, route, 5000, 6000);
  log.repeat(3, 20000);
  const auto usage = log.usage(0);
  REQUIRE(usage.size() == 1);
  CHECK(usage.front().busy_s == Approx(3 * 2100.0).epsilon(1e-12));
  CHECK(usage.front().bytes == 3 * 2100 * 10);
}

TEST_CASE("link log: a span that starts before the latest interval and meets it widens it (lanes report out of order)")
{
  // [5, 7], then [4, 6] (another lane's, reported later), then [3, 3.5] apart, then [10, 11]: the union is [3, 3.5],
  // [4, 7] and [10, 11], 0.5 + 3 + 1 = 4.5 s busy; 40 bytes.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 2);
  const auto route = one_link();
  log.add(route, 10, 5.0, 7.0);
  log.add(route, 10, 4.0, 6.0);
  log.add(route, 10, 3.0, 3.5);
  log.add(route, 10, 10.0, 11.0);
  const auto usage = log.usage(0);
  REQUIRE(usage.size() == 1);
  CHECK(usage.front().busy_s == 4.5);
  CHECK(usage.front().bytes == 40);
}

TEST_CASE("link log: interleaved sequences of spans keep the busy time of their union")
{
  // Two sequences reported in turn (two trees, two lanes), each going forward in time in steps that sometimes overlap,
  // touch or leave a gap, and now and then one far back: the busy time is the length of their union, computed here
  // from every span (sorted, touching ones joined). Integer ends: the sums are exact. Spans that join two intervals,
  // and spans that meet no interval and land between two, are among them (seeded: the same each run).
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 1);
  const auto route = one_link();
  std::vector<std::pair<double, double>> all;
  std::uint64_t state = 12345;
  auto next = [&state](int n) { // a small linear congruential generator: 0 .. n - 1
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  std::array<double, 2> at{100, 103}; // far enough that no span starts before 0
  for (int k = 0; k < 5000; ++k) {
    const int seq = k % 2;
    double start = at[seq] + next(4) - 1; // from one before the last end (overlap) to two after (a gap)
    if (next(50) == 0)
      start -= 40; // far back: behind the latest intervals
    const double end = start + 1 + next(3);
    at[seq] = std::max(at[seq], end);
    log.add(route, 1, start, end);
    all.emplace_back(start, end);
  }
  const double union_s = union_length(all);
  const auto usage = log.usage(0);
  REQUIRE(usage.size() == 1);
  CHECK(usage.front().busy_s == union_s);
  CHECK(usage.front().bytes == 5000);
}

TEST_CASE("link log: an interval that reaches back before the floor is not counted twice when the intervals fold")
{
  // [5, 6], [10, 11] and [20, 21]; [5.5, 10], reported before the floor rises, joins the first two into [5, 11];
  // floor 7. Then spans that extend it, [11, 12], [12, 13], ..., alternate with spans 2 s apart from 4000: [5, N] ends
  // after the floor and never folds; had [5, 6] been kept apart and folded, [5.5, 6] would be counted twice. The
  // union: [5, N] and the unit spans from 4000 ([20, 21] inside the first).
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 1);
  const auto route = one_link();
  log.add(route, 1, 5.0, 6.0);
  log.add(route, 1, 10.0, 11.0);
  log.add(route, 1, 20.0, 21.0);
  log.add(route, 1, 5.5, 10.0);
  log.set_floor(0, 7.0);
  const int n = 3000;
  for (int k = 0; k < n; ++k) {
    log.add(route, 1, 11.0 + k, 12.0 + k);
    log.add(route, 1, 4000.0 + 2 * k, 4001.0 + 2 * k);
  }
  // [5, 11 + n], [20, 21] inside it, and n unit spans from 4000.
  CHECK(busy_s(log) == (11.0 + n - 5.0) + n);
}

TEST_CASE("link log: spans that arrive in order fold as they go once the floor passes them")
{
  // Unit spans [2k, 2k + 1] with gaps, k < 5000, each driver floor set at the span's start before it is added (the
  // steps of one aggregation after another): stored in order, they fold as soon as the floor passes them. Busy 5000 s.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 1);
  const auto route = one_link();
  for (int k = 0; k < 5000; ++k) {
    log.set_floor(0, 2.0 * k);
    log.add(route, 1, 2.0 * k, 2.0 * k + 1);
  }
  CHECK(busy_s(log) == 5000.0);
}

TEST_CASE("link log: intervals do not fold past one that reaches back before them")
{
  // [5, 6], [10, 11], [20, 21]; [5.5, 10], reported before the floor rises, joins the first two into [5, 11]. Floor
  // 30, then [40, 41]: [5, 11] and [20, 21] fold, each once; had [5.5, 10] been kept apart from [5, 6], folding both
  // would count [5.5, 6] twice. Union: [5, 11], [20, 21], [40, 41].
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 1);
  const auto route = one_link();
  log.add(route, 1, 5.0, 6.0);
  log.add(route, 1, 10.0, 11.0);
  log.add(route, 1, 20.0, 21.0);
  log.add(route, 1, 5.5, 10.0);
  log.set_floor(0, 30.0);
  log.add(route, 1, 40.0, 41.0);
  CHECK(busy_s(log) == 8.0);
}

TEST_CASE("link log: a span that arrives out of order joins the interval it overlaps before any folds")
{
  // [10, 12], [20, 21], [30, 31], then [11, 13], which arrives after [30, 31] though it overlaps [10, 12] (it widens
  // it to [10, 13]). Floor 100: everything so far ends below it and folds; summing [11, 13] apart from [10, 12] would
  // count [11, 12] twice. Union: [10, 13], [20, 21], [30, 31], [40, 41], [50, 51], [200, 201], [300, 301]: 9 s.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  engine::LinkLog log(false, 1);
  const auto route = one_link();
  for (const auto& [s, e] :
       std::vector<std::pair<double, double>>{{10, 12}, {20, 21}, {30, 31}, {11, 13}, {40, 41}, {50, 51}})
    log.add(route, 1, s, e);
  log.set_floor(0, 100.0);
  log.add(route, 1, 200.0, 201.0);
  log.add(route, 1, 300.0, 301.0);
  CHECK(busy_s(log) == 9.0);
}

TEST_CASE("link log: spans added before a floor rises are booked under the floor they came under")
{
  // n unit spans [2k, 2k + 1] (enough to fold: kFoldBatch), then [0.5, 1.5], which reaches back over [0, 1] (no floor
  // yet: any span may), then the floor rises to 10n and more spans follow. add() keeps spans before it books them
  // (kPending); booked under the risen floor, [0, 1] would fold before [0.5, 1.5] met it, and [0.5, 1] would count
  // twice. Union: n unit spans, 0.5 more for [1, 1.5], and the 40 spans after. For every n over one buffer's span.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  const auto route = one_link();
  for (int n = static_cast<int>(engine::LinkLog::kFoldBatch) + 1;
       n <= static_cast<int>(engine::LinkLog::kFoldBatch + engine::LinkLog::kPending) + 1; ++n) {
    engine::LinkLog log(false, 1);
    add_units(log, route, 0, n);
    log.add(route, 1, 0.5, 1.5);
    log.set_floor(0, 20.0 * n);
    add_units(log, route, 10 * n, 10 * n + 40);
    CHECK(busy_s(log) == n + 0.5 + 40);
  }
}

TEST_CASE("link log: booked in the background, the same busy times and bytes as booked in the caller's thread")
{
  // Three lanes report spans over two links (routes over l0 up and over l0 up and l1 down), each lane going forward in
  // integer steps that overlap, touch or leave gaps, now and then reaching back to its floor, and raising its floor
  // every few spans; batches of spans (TransferBatch's path: one span per link) come among them. 30,000 records: the
  // thread starts after kBatch transfers, and seven batches at least are handed over to it. It books them in the
  // order they came: the same busy times, to the bit, as the log that books them itself, and both the length of each
  // link's union of spans (integer ends: the sums are exact). Seeded: the same each run.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  const sg4::Link* up = sg4::Link::by_name("l0_UP");
  const sg4::Link* down = sg4::Link::by_name("l1_DOWN");
  const collectives::CommWorld::Route one = {{up}, {up->get_bandwidth()}, {0}, 0.0, up->get_bandwidth(), {}};
  const collectives::CommWorld::Route two = {
      {up, down}, {up->get_bandwidth(), down->get_bandwidth()}, {0, 1}, 0.0, up->get_bandwidth(), {}};
  engine::LinkLog mine(false, 3, false), background(false, 3, true);
  std::array<std::vector<std::pair<double, double>>, 2> spans; // per link number
  std::array<std::uint64_t, 2> bytes{0, 0};
  std::uint64_t state = 2026;
  auto next = [&state](int n) { // a small linear congruential generator: 0 .. n - 1
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  std::array<double, 3> at{10, 12, 15}, floor{0, 0, 0};
  for (int k = 0; k < 30000; ++k) {
    const std::size_t lane = static_cast<std::size_t>(next(3));
    if (next(8) == 0) { // the lane's floor rises to where its spans now start
      floor[lane] = std::max(floor[lane], at[lane] - next(3));
      mine.set_floor(static_cast<int>(lane), floor[lane]);
      background.set_floor(static_cast<int>(lane), floor[lane]);
      continue;
    }
    double start = std::max(floor[lane], at[lane] + next(4) - 1.0);
    if (next(40) == 0)
      start = floor[lane]; // back to the floor: behind the latest intervals
    const double end = start + 1 + next(3);
    at[lane] = std::max(at[lane], end);
    const std::uint64_t b = 1 + static_cast<std::uint64_t>(next(100));
    if (next(20) == 0) { // a batch: a flow over both links and one over l0 up, started together
      const std::vector<collectives::Flow> flows = {{0, 1, b}, {0, 2, 2 * b}};
      const std::vector<double> ends = {end, end + 1 + next(2)};
      const std::vector<const collectives::CommWorld::Route*> routes = {&two, &one};
      const collectives::CommWorld::LinkFlows links = {{0, 1}, {up, down}, {0, 2, 3}, {0, 1, 0}};
      const collectives::CommWorld::TransferBatch batch = {flows, start, ends, routes, links, 0};
      mine.add(batch);
      background.add(batch);
      at[lane] = std::max(at[lane], ends[1]);
      spans[0].emplace_back(start, ends[1]);
      spans[1].emplace_back(start, end);
      bytes[0] += 3 * b;
      bytes[1] += b;
      continue;
    }
    const bool both = next(2) == 0;
    mine.add(both ? two : one, b, start, end);
    background.add(both ? two : one, b, start, end);
    for (std::size_t l = 0; l < (both ? 2u : 1u); ++l) {
      spans[l].emplace_back(start, end);
      bytes[l] += b;
    }
  }
  CHECK(background.threaded());
  CHECK_FALSE(mine.threaded());
  const auto expected = mine.usage(0);
  const auto got = background.usage(0);
  REQUIRE(expected.size() == 2);
  REQUIRE(got.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO(expected[i].name);
    CHECK(got[i].name == expected[i].name);
    CHECK(got[i].busy_s == expected[i].busy_s);
    CHECK(got[i].bytes == expected[i].bytes);
    const std::size_t l = expected[i].name == "l0_UP" ? 0 : 1;
    CHECK(expected[i].busy_s == union_length(spans[l]));
    CHECK(expected[i].bytes == bytes[l]);
  }
}

TEST_CASE("link log: a floor for a lane that does not exist is refused, booked in the background or not")
{
  // Before the thread starts, and after (kBatch transfers one by one first), where the floor would be a record.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  const auto route = one_link();
  for (const bool background : {false, true})
    for (const bool after : {false, true}) {
      engine::LinkLog log(false, 2, background);
      if (after)
        add_units(log, route, 0, static_cast<int>(engine::LinkLog::kBatch));
      CHECK(log.threaded() == (background && after));
      CHECK_THROWS_AS(log.set_floor(2, 1.0), std::out_of_range);
      CHECK_THROWS_AS(log.set_floor(-1, 1.0), std::out_of_range);
      log.set_floor(1, 1.0);
    }
}

TEST_CASE("link log: the booking thread starts once kBatch transfers come one by one, never for batches and floors")
{
  // A second thread costs every malloc of the process its single-thread fast path: a phase whose transfers come in
  // batches (flow plans) books them itself. 3 kBatch batches and floors leave the log unthreaded, with timelines too
  // (a batch's transfers then come one by one, but from a batch); kBatch - 1 transfers one by one too, a floor after
  // every eighth (the floors book what is kept: the count is of the transfers since the log began); the next one
  // starts the thread. Not asked for (background false), never.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  const auto route = one_link();
  const sg4::Link* up = sg4::Link::by_name("l0_UP");
  const std::vector<collectives::Flow> flows = {{0, 1, 10}};
  const std::vector<double> ends = {1.0};
  const std::vector<const collectives::CommWorld::Route*> routes = {&route};
  const collectives::CommWorld::LinkFlows links = {{0}, {up}, {0, 1}, {0}};
  for (const bool background : {false, true}) {
    engine::LinkLog traced(true, 1, background);
    for (std::size_t k = 0; k < 3 * engine::LinkLog::kBatch; ++k)
      traced.add(collectives::CommWorld::TransferBatch{flows, 0.0, ends, routes, links, 0});
    CHECK_FALSE(traced.threaded());
    engine::LinkLog log(false, 1, background);
    for (std::size_t k = 0; k < 3 * engine::LinkLog::kBatch; ++k) {
      log.add(collectives::CommWorld::TransferBatch{flows, 0.0, ends, routes, links, 0});
      log.set_floor(0, 0.0);
    }
    CHECK_FALSE(log.threaded());
    for (int k = 0; k + 1 < static_cast<int>(engine::LinkLog::kBatch); ++k) {
      add_units(log, route, k, k + 1);
      if (k % 8 == 7)
        log.set_floor(0, 2.0 * k + 2);
    }
    CHECK_FALSE(log.threaded());
    add_units(log, route, static_cast<int>(engine::LinkLog::kBatch), static_cast<int>(engine::LinkLog::kBatch) + 1);
    CHECK(log.threaded() == background);
    CHECK(busy_s(log) == double(engine::LinkLog::kBatch)); // the batches' [0, 1] is the first unit span
  }
}

TEST_CASE("link log: the caller waits while kInFlight batches wait to be booked, and usage() until all are booked")
{
  // The booking thread held from its start (hold): kBatch transfers one by one start it and hand the first batch over;
  // kInFlight - 1 batches more are handed over without a wait; the next hand-over waits until another thread lets the
  // booking go, 100 ms later. Then, held again with a batch handed over, usage() waits until the release books it.
  // Every unit span is disjoint from the others: the busy time is their count.
  test::ProbeEngine engine(test::write_star_platform(test::StarSpec{}));
  const auto route = one_link();
  const int batch = static_cast<int>(engine::LinkLog::kBatch), in_flight = static_cast<int>(engine::LinkLog::kInFlight);
  auto release_later = [](engine::LinkLog& log) {
    return std::thread([&log] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      log.hold(false);
    });
  };
  {
    engine::LinkLog log(false, 1, true);
    log.hold(true);
    add_units(log, route, 0, in_flight * batch); // the thread started, kInFlight batches handed over
    REQUIRE(log.threaded());
    CHECK(log.waits() == 0);
    std::thread release = release_later(log);
    add_units(log, route, in_flight * batch, (in_flight + 1) * batch); // the next hand-over: room only once released
    release.join();
    CHECK(log.waits() == 1);
    CHECK(busy_s(log) == double((in_flight + 1) * batch));
  }
  engine::LinkLog log(false, 1, true);
  log.hold(true);
  add_units(log, route, 0, 2 * batch);
  REQUIRE(log.threaded());
  std::thread release = release_later(log);
  CHECK(busy_s(log) == double(2 * batch)); // usage() waits until both batches are booked
  release.join();
  CHECK(log.waits() == 0);
}
