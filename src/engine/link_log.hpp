// Where a phase's transfers went: bytes and busy time per link, from each transfer's route.
#pragma once

#include "collectives/collective.hpp"
#include "dag/records.hpp"

#include <simgrid/s4u/Link.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ddlsim::engine {

/** @brief Bytes and busy spans per link of the transfers of one phase, from each transfer's route (CommWorld::Route:
 *  the links flows share, by their number in the world; a fat pipe, a switch backplane, limits each flow, not their
 *  sum, so it has no utilisation). A link's busy time is the length of the union of its transfers' spans. */
class LinkLog {
public:
  /** `timelines`: keep every transfer's span, for the transfers in flight over time (the trace's counter tracks);
   *  otherwise a link's spans are merged into its busy intervals whenever they pile up (the same busy time).
   *  `lanes`: the drivers that may set a floor (set_floor); none folds until every one has. */
  LinkLog(bool timelines, int lanes);
  /** A transfer over `route` from `start` to `end` (seconds). */
  void add(const collectives::CommWorld::Route& route, std::uint64_t bytes, double start, double end);
  /** Flows started together: without timelines, each link's bytes and one span to the last flow's end (the union
   *  of spans that share their start: what add() would log flow by flow). */
  void add(const collectives::CommWorld::TransferBatch& batch);
  /** Driver `lane` adds no transfer, now or later, that starts before `t` (its plan's earliest member start): without
   *  timelines, the busy intervals that end before every lane's floor are summed and forgotten when a link's spans
   *  pile up, so that a long phase keeps the intervals of the plans in flight, not all of them. */
  void set_floor(int lane, double t);
  /** The traffic logged so far happens `times` times in all, the k-th copy `k` x `period` seconds later (every
   *  transfer within one period). */
  void repeat(unsigned times, double period);
  /** Links with traffic, busiest first; the first kTracedLinks keep their transfers in flight over time (from
   *  `phase_start`) for the trace's counter tracks. */
  std::vector<dag::LinkUsage> usage(double phase_start);
  static constexpr std::size_t kTracedLinks = 8;   ///< links whose traffic the trace draws
  static constexpr std::size_t kCompactMin = 1024; ///< spans a link holds before they are first merged

private:
  struct Entry {
    const simgrid::s4u::Link* link = nullptr; ///< none: no transfer crossed it
    std::uint64_t bytes = 0;
    /** Without timelines: the spans the latest spans extend (each none while open > close), two of them, so that
     *  two interleaved sequences of spans (two trees, two lanes) each extend their own; `recent` the one extended
     *  last. */
    std::array<double, 2> open_s{0, 0}, close_s{-1, -1};
    int recent = 0;
    std::vector<std::pair<double, double>> spans;
    std::size_t compact_at = kCompactMin;
    double folded_s = 0;   ///< the length of the busy intervals fold() took off `spans`
    bool ordered = true;   ///< `spans` sorted and disjoint: each stored after the one before ended
    double last_end_s = 0; ///< while ordered with spans: the last span's end (keep() reads it, not the spans' memory)
  };
  void add_span(std::uint32_t id, const simgrid::s4u::Link* link, std::uint64_t bytes, double start, double end);
  /** Stores the closed span [start, end] of `l` while its open span `staying` stays open. While spans arrive in
   *  order, those that end before the floor, and the stored ones before them, go straight into the folded time, as
   *  fold() would take them (provided the open span starts after them: it may reach back before the floor). */
  void keep(Entry& l, double start, double end, int staying) const;
  /** Moves the open spans of `l` (if any) to its spans. */
  static void close_open(Entry& l);
  /** Replaces `spans` by their union: sorted, disjoint intervals (touching ones merged, as usage() merges). The
   *  union of the merged intervals and later spans is the union of all spans, so usage() sums the same
   *  intervals, in the same order, as it would from every span. */
  static void merge(std::vector<std::pair<double, double>>& spans);
  /** Sums the merged intervals of `l` that end before the floor (no later span can reach them) into its folded time,
   *  in order (usage() then adds the others to it: the same sum), and drops them. */
  void fold(Entry& l) const;

  bool timelines_;
  std::vector<Entry> links_;   ///< by the link's number in the world (CommWorld::Route::shared_ids)
  std::vector<double> floors_; ///< per driver lane: set_floor's time (-infinity until set: no folding)
  double floor_ = -std::numeric_limits<double>::infinity(); ///< the least of floors_
};

} // namespace ddlsim::engine
