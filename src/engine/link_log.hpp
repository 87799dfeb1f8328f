// Where a phase's transfers went: bytes and busy time per link, from each transfer's route.
#pragma once

#include "collectives/collective.hpp"
#include "dag/records.hpp"

#include <simgrid/s4u/Link.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace ddlsim::engine {

/** @brief Bytes and busy spans per link of the transfers of one phase, from each transfer's route (CommWorld::Route:
 *  the links flows share, by their number in the world; a fat pipe, a switch backplane, limits each flow, not their
 *  sum, so it has no utilisation). A link's busy time is the length of the union of its transfers' spans.
 *  Booked in the background where asked (a thread of its own, no SimGrid call in it), once kBatch transfers have come
 *  one by one (add(route, ...): the computed trees' transfers); from then on add() and set_floor() hand their records
 *  over kBatch at a time, and the thread books them in the order they came, as the caller's thread would (the same
 *  intervals and sums to the bit); usage() and repeat() wait for it to finish first. A phase whose transfers come in
 *  batches (add(batch): flow plans) never starts it: a second thread makes every malloc and shared pointer of the
 *  process pay for atomics (glibc and libstdc++ skip them while a process has one thread), which cost hd at 1,024
 *  GPUs more than booking its batches on a second core saved. */
class LinkLog {
public:
  /** `timelines`: keep every transfer's span, for the transfers in flight over time (the trace's counter tracks);
   *  otherwise a link keeps its busy intervals (the union of its spans so far, sorted and disjoint), each span merged
   *  in as it comes, and sums those that no later span can reach (the same busy time).
   *  `lanes`: the drivers that may set a floor (set_floor); none folds until every one has.
   *  `background`: book on a thread of its own once kBatch transfers have come one by one (a second core: the booking
   *  was a tenth of a computed tree's run). */
  LinkLog(bool timelines, int lanes, bool background = false);
  ~LinkLog();
  LinkLog(const LinkLog&) = delete;
  LinkLog& operator=(const LinkLog&) = delete;
  /** A transfer over `route` from `start` to `end` (seconds), booked later (with up to kPending others, or kBatch in
   *  the background): `route` lives until then (CommWorld's cached routes live as long as their world). */
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
  /** A thread of its own books the transfers (background, and kBatch transfers came one by one). */
  bool threaded() const { return thread_.joinable(); }
  /** For the tests of the hand-over: while held, the booking thread (if any, or once started) takes no batch, so the
   *  caller's hand-overs wait once kInFlight batches are handed over, and usage() until it is let go (from another
   *  thread). */
  void hold(bool on);
  /** Hand-overs that waited for room (kInFlight batches handed over and not booked). */
  std::size_t waits() const { return waits_; }
  static constexpr std::size_t kTracedLinks = 8; ///< links whose traffic the trace draws
  static constexpr std::size_t kCompactMin = 8;  ///< folded intervals a link holds before their memory is reused
  static constexpr std::size_t kFoldBatch = 16;  ///< intervals a link holds before those below the floor are folded
  static constexpr std::size_t kPending = 32;    ///< transfers add() keeps before it books them (flush())
  static constexpr std::size_t kBatch = 4096;    ///< in the background: records handed over at once
  static constexpr std::size_t kInFlight = 16;   ///< in the background: batches handed over at most (add() waits)

private:
  /** One cache line (a transfer reads one per link it crosses); the link itself and the length of the intervals
   *  folded are kept apart (link_of_, folded_s_: read once, and when a fold passes intervals). */
  struct alignas(64) Entry {
    std::uint64_t bytes = 0;
    /** Without timelines, the busy intervals: sorted, disjoint (touching ones joined, as usage() joins them), those
     *  before `head` summed in folded_s_; the latest, `tail`, kept here (most spans extend it or follow it: one cache
     *  line per span), the others in `spans` from `head` on. With timelines: every span in `spans`. */
    double tail_s = 0, tail_e = -1;                           ///< none while tail_s > tail_e
    double front_e = std::numeric_limits<double>::infinity(); ///< spans[head]'s end (+inf: none past head)
    std::vector<std::pair<double, double>> spans;
    std::size_t head = 0;
  };
  static_assert(sizeof(Entry) == 64, "a link's entry is one cache line");
  /** What add() and set_floor() keep until it is booked: a transfer over `route`; a span of link number `id`, `link`
   *  (add() of a batch: its flows on that link); a floor (lane `bytes`, at `start`). */
  struct Pending {
    enum class Kind : std::uint32_t { Transfer, Span, Floor };
    const collectives::CommWorld::Route* route;
    const simgrid::s4u::Link* link;
    std::uint64_t bytes;
    double start, end;
    std::uint32_t id;
    Kind kind;
  };
  /** add() of a transfer; `one_by_one`: one that came alone (counted towards starting the thread), not a batch's. */
  void add_transfer(const collectives::CommWorld::Route& route, std::uint64_t bytes, double start, double end,
                    bool one_by_one);
  /** The thread books: keeps `p`, handed over with kBatch - 1 others. */
  void keep(const Pending& p);
  /** Books the records kept (pending_): in the caller's thread, or handed to the booking thread and waited for. */
  void flush();
  /** Books `records` in order: each run of transfers with their memory reads issued for all of them first
   *  (book_transfers), each span and floor where it came (a transfer added before set_floor() is booked under the floor
   *  it came under: a span added before it may start before the new floor). Within one floor, the order of booking
   *  does not matter: every span added since starts at or after the floor, past every interval that folds, and the
   *  union of the others is the same in any order. */
  void book(const Pending* first, const Pending* last);
  void book_transfers(const Pending* first, const Pending* last);
  /** The thread books: hands pending_ over (waiting while kInFlight batches are), and takes an empty batch back. */
  void hand_over();
  /** The background thread: books each batch handed over, in order, until told to stop. */
  void work();
  /** Entries up to link number `id`. */
  void grow(std::uint32_t id);
  /** Books a span of link number `id`, `*link` (read where the entry has none yet). In the background, on its thread.
   */
  void add_span(std::uint32_t id, const simgrid::s4u::Link* const* link, std::uint64_t bytes, double start, double end);
  /** Merges [start, end] into the busy intervals of `l`. Spans come nearly in order of their ends (reported as
   *  transfers end, several lanes interleaved): most extend the tail or follow it; the others are merged into
   *  `spans`, searched from the last interval back (merge_before). */
  static void merge_in(Entry& l, double start, double end);
  /** merge_in for a span that ends before the tail starts. */
  static void merge_before(Entry& l, double start, double end);
  /** The tail moved to `spans` (gather(), or when a later span comes). */
  static void push_tail(Entry& l);
  /** Sums the intervals of `l` that end before the floor (no later span starts before it, so none can reach them)
   *  into `folded` (its folded_s_), in order (usage() then adds the others to it: the same sum), and passes them. */
  void fold(Entry& l, double& folded) const;
  /** Drops the intervals of `l` folded so far. */
  static void drop_folded(Entry& l);
  /** Every interval of `l` not folded in its `spans`, from the first (usage(), repeat()). */
  static void gather(Entry& l);
  /** Replaces `spans` by their union: sorted, disjoint intervals (touching ones joined, as usage() joins them). */
  static void merge(std::vector<std::pair<double, double>>& spans);

  bool timelines_;
  bool background_;
  std::size_t one_by_one_ = 0;   ///< transfers add(route, ...) took before the thread started
  std::vector<Pending> pending_; ///< add()'s and set_floor()'s, not booked or handed over yet
  // In the background: the batches handed over and not booked yet, and empty ones to reuse, under mutex_; the log's
  // state below is the thread's while a batch is handed over or booked, the caller's once flush() has waited.
  std::mutex mutex_;
  std::condition_variable handed_, booked_;
  std::deque<std::vector<Pending>> full_;
  std::vector<std::vector<Pending>> empty_;
  bool booking_ = false; ///< the thread books a batch it took off full_
  bool stop_ = false;
  bool held_ = false;         ///< hold()'s: the thread takes no batch
  std::size_t waits_ = 0;     ///< hand-overs that waited for room (the caller's)
  std::exception_ptr failed_; ///< what the thread threw (rethrown by flush())
  std::thread thread_;
  std::vector<Entry> links_;                       ///< by the link's number in the world (CommWorld::Route::shared_ids)
  std::vector<const simgrid::s4u::Link*> link_of_; ///< by that number: the link (none: no transfer crossed it)
  std::vector<double> folded_s_; ///< by that number: the length of the intervals folded (before `head`, or dropped)
  std::vector<double> floors_;   ///< per driver lane: set_floor's time (-infinity until set: no folding)
  double floor_ = -std::numeric_limits<double>::infinity(); ///< the least of floors_
};

} // namespace ddlsim::engine
