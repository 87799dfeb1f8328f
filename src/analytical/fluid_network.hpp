// Flows over shared links, computed as SimGrid 3.32's CM02 network model runs them, event by event.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::analytical {

/** @brief Items that fall due in the order they are added, one first-in first-out queue per key (FluidNetwork: flows
 *  of one latency, started at times that never go back; SimClock: sleeps of one length), for at most MaxKeys keys
 *  (a plan's few latencies and lengths): what the caller would otherwise keep on a heap. The earliest due time of the
 *  queues' first items is kept, so that asking for it, and taking nothing before it, costs no scan of the queues (a
 *  clock asks at every step: with a stack's handshakes, every queue in use, those scans were 7 % of the instructions of
 *  dbtree with two streams under openmpi-tcp at 1,024 GPUs).
 *  `ByDue` false: take_until() takes queue by queue, in the order the keys came (FluidNetwork: the order of its flows'
 *  latency ends is the order it notes their links in, which its sums follow). `ByDue` true: the queues' first items
 *  are kept on a heap by due time, and take_until() takes the queues in that order, visiting only those with an item
 *  due (SimClock, which sorts what it takes: a stack's per-message costs give NCCL's choice with two streams under
 *  grpc-tcp 34 sleep lengths at 1,024 GPUs, where scanning every queue at every step would cost more than the heap). */
template <class T, std::size_t MaxKeys = 8, bool ByDue = false>
class QueuesByKey {
public:
  static constexpr std::size_t kMaxKeys = MaxKeys;
  /** Adds `item`, due at `due` (no earlier than the items already on the queue of `key`), to that queue; false
   *  (nothing added) when kMaxKeys other keys have queues. */
  bool push(double key, const T& item, double due)
  {
    std::size_t slot = 0;
    const std::size_t q = find(key, slot);
    if (q == keys_.size()) {
      if (keys_.size() == kMaxKeys)
        return false;
      if constexpr (kHashed)
        index_[slot] = static_cast<std::uint8_t>(q);
      keys_.push_back(key);
      queues_.push_back({{}, 0});
    }
    Queue& queue = queues_[q];
    if (queue.head == queue.items.size()) // empty: its first item now
      first_due(q, due);
    queue.items.push_back(item);
    return true;
  }
  /** The earliest due time of the queues' first items (+inf: none). */
  double earliest() const
  {
    if constexpr (ByDue)
      return heads_.empty() ? std::numeric_limits<double>::infinity() : heads_.front().first;
    else
      return earliest_;
  }
  /** Takes every first item with due(item) <= until, handing each to take(item), a queue's due items one after the
   *  other (ByDue: the queues in the order of their first items' due times; otherwise in the order the keys came);
   *  due(item) is the time the item was pushed with. */
  template <class Due, class Take>
  void take_until(double until, Due due, Take take)
  {
    if (!(earliest() <= until))
      return; // nothing due
    if constexpr (ByDue) {
      while (!heads_.empty() && heads_.front().first <= until) {
        const std::size_t q = heads_.front().second;
        if (take_from(q, until, due, take)) { // its next item, no earlier: the heap's front moved down in place
          heads_.front().first = due(queues_[q].items[queues_[q].head]);
          sift_down_front();
        } else {
          std::pop_heap(heads_.begin(), heads_.end(), std::greater<>());
          heads_.pop_back();
        }
      }
    } else {
      earliest_ = std::numeric_limits<double>::infinity();
      for (std::size_t q = 0; q < queues_.size(); ++q)
        if (take_from(q, until, due, take))
          earliest_ = std::min(earliest_, due(queues_[q].items[queues_[q].head]));
    }
  }
  void clear()
  {
    if constexpr (kHashed)
      index_.fill(kNoQueue);
    keys_.clear();
    queues_.clear();
    heads_.clear();
    earliest_ = std::numeric_limits<double>::infinity();
  }

private:
  struct Queue {
    std::vector<T> items; ///< items[head, end) still to come
    std::size_t head;
  };
  /// Past 8 keys, push() finds a key's queue through index_, a table of queues by the key's bits (open addressing,
  /// at most a quarter full), not by a scan of every key: SimClock's 64 lengths, 34 in use with NCCL's choice under
  /// grpc-tcp, made its push the costliest call of a run. Which queue holds a key changes no order items are taken in
  /// (SimClock sorts them), and keys are compared as values, as the scan does (0 and -0 one key).
  static constexpr bool kHashed = MaxKeys > 8;
  static constexpr std::size_t kIndexSize = 4 * MaxKeys; ///< a power of two where kHashed (static_assert below)
  static constexpr std::uint8_t kNoQueue = 0xff;
  static_assert(!kHashed || (MaxKeys < kNoQueue && (kIndexSize & (kIndexSize - 1)) == 0),
                "QueuesByKey's index: queues named in 8 bits, a power-of-two table");
  /** The queue of `key`, or keys_.size() where none has it (kHashed: `slot` then the index's free slot for it). */
  std::size_t find(double key, std::size_t& slot) const
  {
    if constexpr (!kHashed) {
      std::size_t q = 0;
      while (q < keys_.size() && keys_[q] != key)
        ++q;
      return q;
    } else {
      // The slot from bits 32 up of the key's bits times an odd constant: -0's sign bit moves only the product's top
      // bit, so 0 and -0, one key as values, share a slot.
      std::uint64_t bits = 0;
      std::memcpy(&bits, &key, sizeof bits);
      slot = static_cast<std::size_t>((bits * 0x9e3779b97f4a7c15ull) >> 32) & (kIndexSize - 1);
      for (;; slot = (slot + 1) & (kIndexSize - 1)) {
        const std::uint8_t q = index_[slot];
        if (q == kNoQueue)
          return keys_.size();
        if (keys_[q] == key)
          return q;
      }
    }
  }
  /** Queue q's first item is now one due at `due`. */
  void first_due(std::size_t q, double due)
  {
    if constexpr (ByDue) {
      heads_.emplace_back(due, q);
      std::push_heap(heads_.begin(), heads_.end(), std::greater<>());
    } else {
      earliest_ = std::min(earliest_, due);
    }
  }
  /** ByDue: heads_'s front, whose due time rose, moved down to its place (a min-heap, as std::push_heap with
   *  std::greater keeps it). */
  void sift_down_front()
  {
    const auto entry = heads_.front();
    const std::size_t n = heads_.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n)
        break;
      if (child + 1 < n && heads_[child + 1] < heads_[child])
        ++child;
      if (!(heads_[child] < entry))
        break;
      heads_[i] = heads_[child];
      i = child;
    }
    heads_[i] = entry;
  }
  static std::array<std::uint8_t, kHashed ? kIndexSize : 1> make_index()
  {
    std::array<std::uint8_t, kHashed ? kIndexSize : 1> index{};
    index.fill(kNoQueue);
    return index;
  }
  /** Takes queue q's items due by `until`; true when items are left (its storage kept bounded). */
  template <class Due, class Take>
  bool take_from(std::size_t q, double until, Due& due, Take& take)
  {
    Queue& queue = queues_[q];
    while (queue.head < queue.items.size() && due(queue.items[queue.head]) <= until)
      take(queue.items[queue.head++]);
    if (queue.head == queue.items.size()) {
      queue.items.clear();
      queue.head = 0;
      return false;
    }
    if (queue.head > 1024 && 2 * queue.head > queue.items.size()) { // keep the queue's storage bounded
      queue.items.erase(queue.items.begin(), queue.items.begin() + static_cast<std::ptrdiff_t>(queue.head));
      queue.head = 0;
    }
    return true;
  }
  std::vector<double> keys_; ///< each queue's key, apart (push() scans them, or finds them through index_)
  std::array<std::uint8_t, kHashed ? kIndexSize : 1> index_ = make_index(); ///< kHashed: slot -> queue (kNoQueue)
  std::vector<Queue> queues_;
  double earliest_ = std::numeric_limits<double>::infinity(); ///< !ByDue: of the queues' first items
  std::vector<std::pair<double, std::size_t>> heads_;         ///< ByDue: (due, queue) of each first item, a min-heap
};

/** @brief A short list of trivially copyable items: in place up to N of them, on the heap past that. A flow's links,
 *  its places on their lists (FluidNetwork::Flow) and each link's flows (FluidNetwork's on_link_) are such lists,
 *  read at every event of a flow: in place, they are in the record itself, with no pointer to follow to a block
 *  elsewhere (the computed trees' flows cross at most two links, the others left out, computed_trees_of, and a link
 *  carries a few of them at a time; at 16,384 GPUs each such block was a cache miss). */
template <class T, std::uint32_t N>
class InPlaceList {
public:
  InPlaceList() = default;
  InPlaceList(const InPlaceList& o) { assign(o.begin(), o.end()); }
  InPlaceList(InPlaceList&& o) noexcept { take(o); }
  InPlaceList& operator=(const InPlaceList& o)
  {
    if (this != &o)
      assign(o.begin(), o.end());
    return *this;
  }
  InPlaceList& operator=(InPlaceList&& o) noexcept
  {
    if (this != &o) {
      delete[] heap_;
      take(o);
    }
    return *this;
  }
  ~InPlaceList() { delete[] heap_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t k) { return data_[k]; }
  const T& operator[](std::size_t k) const { return data_[k]; }
  T& back() { return data_[size_ - 1]; }
  void pop_back() { --size_; }
  void push_back(const T& x)
  {
    if (size_ == capacity_)
      grow(2 * std::size_t(capacity_));
    data_[size_++] = x;
  }
  /** n items: the first min(n, size()) kept, the others value-initialized (0). */
  void resize(std::size_t n)
  {
    if (n > capacity_)
      grow(n);
    std::fill(data_ + std::min<std::size_t>(n, size_), data_ + n, T{});
    size_ = static_cast<std::uint32_t>(n);
  }
  void assign(const T* first, const T* last)
  {
    size_ = 0; // nothing to keep
    resize(static_cast<std::size_t>(last - first));
    std::copy(first, last, data_);
  }

private:
  /** Room for n > capacity_ items on the heap, the items kept. */
  void grow(std::size_t n)
  {
    auto* grown = new T[n]();
    std::copy(begin(), end(), grown);
    delete[] heap_;
    heap_ = data_ = grown;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void take(InPlaceList& o) noexcept
  {
    size_ = o.size_;
    capacity_ = o.capacity_;
    heap_ = o.heap_;
    std::copy(o.in_place_, o.in_place_ + N, in_place_);
    data_ = heap_ != nullptr ? heap_ : in_place_;
    o.heap_ = nullptr;
    o.data_ = o.in_place_;
    o.size_ = 0;
    o.capacity_ = N;
  }
  std::uint32_t size_ = 0, capacity_ = N;
  T in_place_[N] = {};
  T* heap_ = nullptr;   ///< past N items: capacity_ of them
  T* data_ = in_place_; ///< in_place_ or heap_ (no branch at each read)
};
/** A flow's links, or its places on their lists. */
using SmallIds = InPlaceList<std::uint32_t, 4>;

/** @brief Transfers that come and go over links they share, as SimGrid 3.32's CM02 model runs them
 *  (src/surf/network_cm02.cpp, src/kernel/lmm/maxmin.cpp at v3.32), but computed here instead of handed to SimGrid:
 *  a flow first waits its latency, taking no bandwidth; then every flow past its latency gets a share of each link
 *  it crosses by weighted max-min fairness (SimGrid's "sharing penalty": a flow of penalty p gets level / p, where
 *  the level rises for all flows alike until a link is full or a flow reaches its own bound), recomputed whenever a
 *  flow starts sharing or ends. A flow ends when its share, integrated over time, reaches its work. Events closer
 *  than kSimultaneous seconds after the first are taken with it, as SimGrid's action heap does (surf/precision).
 *  Pure arithmetic: no SimGrid (collectives::CommWorld drives it from SimGrid's clock). */
class FluidNetwork {
public:
  /** SimGrid's default surf/precision (seconds): events this close after one are processed with it. */
  static constexpr double kSimultaneous = 1e-9;

  /** The ids of the links a flow crosses, read (and copied) by start() only: a view of the caller's list. */
  struct LinkIds {
    const std::uint32_t* data = nullptr;
    std::size_t size = 0;
    LinkIds() = default;
    LinkIds(const std::vector<std::uint32_t>& ids) // NOLINT(google-explicit-constructor): a view, as std::span
        : data(ids.data())
        , size(ids.size())
    {
    }
    const std::uint32_t* begin() const { return data; }
    const std::uint32_t* end() const { return data + size; }
  };
  struct FlowSpec {
    LinkIds links;        ///< the shared links it crosses (ids given to set_capacity)
    double latency_s = 0; ///< how long it waits before it shares (route latency x latency factor)
    double penalty = 1;   ///< sharing penalty, > 0 (SimGrid: the route's latency; 1 without a wait)
    double bound = 0;     ///< its own cap on its share, bytes/s (the route's narrowest link); <= 0: none
    double work = 0;      ///< share x seconds it needs (bytes / bandwidth factor)
    /// Flows of one tag (not 0) have the same links, penalty and bound: the shares of a set of sharing flows that
    /// are all tagged depend on their tags alone, and are computed once per set (a collective's plans recur).
    std::uint64_t tag = 0;
  };

  /** Solve the shares component by component (flows joined by the links they share), each found computed or filled
   *  alone, instead of the set in flight as one: for flows whose sets in flight rarely recur but whose components do
   *  (a plan's transfers computed one by one: the trees, rd's blocks). Off by default (mirrored lanes: their plans'
   *  whole sets recur, and splitting them cost hd with two streams a sixth more). */
  void solve_by_components(bool on) { by_components_ = on; }
  /** By components: solve again, at each event, only the flows it can move (fluid_network.cpp, "Neighbourhood") instead
   *  of the whole component, the others held at their shares: the same max-min shares to rounding, from a few flows
   *  where a component has hundreds (the computed trees at thousands of ranks: components chain nodes along a tree,
   *  an event moves a few shares). Without the shares' cache (a set's shares then depend on the held flows too). Off
   *  by default. */
  void solve_incrementally(bool on) { incremental_ = on; }
  /** A fill of at most `links` links finds the lowest link by a scan of them all, a larger one by a heap (default
   *  kScanLinks): the same shares to the bit either way (a test sets 0 and a large number to hold the two together). */
  void fill_by_scan_up_to(std::size_t links) { scan_links_ = links; }
  /// fill_small(): the most links by default (a scanned fill's), the most it can take (fill_small_up_to), the most
  /// flows and crossings of a link by a flow (sizes of this implementation's: a neighbourhood of the computed trees at
  /// 1,024 GPUs has 4.6 flows over 3.8 links on average)
  static constexpr std::size_t kSmallLinks = 8, kSmallLinksMost = 32, kSmallFlows = 32, kSmallCrossings = 128;
  /** A scanned fill of at most `links` links (at most kSmallLinksMost; default kSmallLinks), kSmallFlows flows and
   *  kSmallCrossings crossings of a link by a flow runs fill()'s steps on arrays of its own (fill_small): the same
   *  shares to the bit (a test sets 0 and kSmallLinksMost to hold the two together). */
  void fill_small_up_to(std::size_t links) { small_links_ = links; }
  /** By components: every flow's and link's stamp of the walks is cleared after `walks` walks (1 to the default,
   *  kSeenStamps: the most a flow's 16-bit stamp holds); a test sets a few to hold the clearing to the shares. */
  void clear_stamps_after(std::uint32_t walks) { seen_stamps_ = std::clamp<std::uint32_t>(walks, 1, kSeenStamps); }
  /** Link `link` has `capacity` bytes/s (grows the table; a link keeps the capacity it was first given). */
  void set_capacity(std::uint32_t link, double capacity);
  /** Starts a flow at `now` (>= the time advanced to); returns its id. Rates are recomputed at the next
   *  next_event(), advance() or step(). */
  std::size_t start(double now, const FlowSpec& spec);
  /** The time of the next event (a flow past its latency, a flow done), +inf if none. */
  double next_event();
  /** Moves to time `t`, processing every event up to it in order. True when an event was processed. */
  bool advance(double t);
  /** One step of SimGrid's clock at `t` (>= the time advanced to, <= next_event()): every event due up to
   *  t + kSimultaneous happens at t, as SimGrid's engine ends every action of every model due within its precision of
   *  the step's time (a caller's own events, such as the ends of sleeps, are steps too). True when one happened. */
  bool step(double t);
  /** The flows the last advance() or step() found done: event by event, and within one event in the order they were
   *  started (as a scan of the flows in flight finds them; the callers' records and wake-ups follow it). */
  const std::vector<std::size_t>& finished() const { return finished_; }
  bool done(std::size_t id) const { return flows_[id].state == State::Done; }
  /** When flow `id` ended (done only). */
  double end(std::size_t id) const { return flows_[id].end; }
  /** Forgets a flow that is done: its id may be given to a later flow. */
  void release(std::size_t id);
  /** The current share of flow `id` (bytes/s of work; 0 while it waits its latency). */
  double rate(std::size_t id) const { return flows_[id].grouped ? group_.rate : flows_[id].rate; }
  /** By components: flows that joined a processor-sharing group so far (Group), and groups made. */
  std::size_t grouped() const { return grouped_; }
  std::size_t groups() const { return groups_; }
  /** The hash solve() files a set of sorted tags under (FNV-1a; public for the test that makes two sets collide). */
  static std::uint64_t hash_tags(const std::vector<std::uint64_t>& tags);
  /** Progressive fillings run so far (the others were found computed: solve()). */
  std::size_t fills() const { return fills_; }
  /** Of fills(), those made by fill_small(). */
  std::size_t small_fills() const { return small_fills_; }
  /** The time advanced to. */
  double now() const { return now_; }
  /** Forgets every flow and goes back to time 0, keeping the capacities and the shares computed so far (a plan that
   *  runs its flows from its own instants: the recurring sets of tags hit). Needs no flow in flight. */
  void restart();
  /** Flows started and not released. */
  std::size_t flows() const { return flows_.size() - free_.size(); }

private:
  enum class State : std::uint8_t { Latency, Sharing, Done, Free };
  /** A flow, its fields in three lines of memory by when they are read: the first, what the solves read of every flow
   *  they meet (fill, the neighbourhood's walk, the held flows' shares); the second, what an end, a start of sharing
   *  and a new share add; the third, the rest. At 16,384 GPUs the flows a solve meets are other members' transfers, a
   *  cache miss per line read. */
  struct alignas(64) Flow {
    Flow()
        : bound_binds(false)
        , grouped(false)
    {
    }
    SmallIds links; ///< FlowSpec's, copied (a slot keeps its capacity when reused)
    double penalty = 1;
    double rate = 0;
    /// What fixed its share at the last solve: a link's id (where it is full and no flow has a higher level), kBound
    /// (its own bound), kNone (not solved since it began sharing)
    std::uint32_t neck = kNone;
    State state = State::Free;
    bool bound_binds : 1; ///< its bound may limit it: no link it crosses is as narrow (fill())
    bool grouped : 1;     ///< a member of group_: its work is group_'s, its end `target` (in group_.done units)
    /// By components: the walk that last met it (seen_stamp_, kSeenStamps of them), beside its neck and share: one
    /// line where a walk meets it (at 16,384 GPUs a table of its own by flow id was a second cache miss per flow met)
    std::uint16_t seen = 0;
    SmallIds slots;  ///< by components: its place in on_link_[links[k]], per k
    double left = 0; ///< work left at time `since`
    double since = 0;
    std::uint64_t order = 0; ///< when it was started, among all flows (finished() keeps this order)
    double bound = 0;
    std::uint64_t tag = 0;
    double shares_at = 0; ///< when its latency ends
    double due = 0; ///< as one set (not by components): when it ends at its share (+inf: it gets none), off the heap
    double end = 0;
    double target = 0;
  };
  /** A link's sharing flows (flow, index of the link in its links), 56 bytes in a line of its own: unaligned, most
   *  lists straddle two, and a flow that begins or stops sharing touches both ends of its links' lists (the count, then
   *  the slot). */
  struct alignas(64) LinkFlows : InPlaceList<std::pair<std::uint32_t, std::uint32_t>, 4> {};
  static_assert(sizeof(LinkFlows) == 64, "FluidNetwork::LinkFlows: one line");
  static_assert(offsetof(Flow, slots) == 64 && offsetof(Flow, bound) == 128 && sizeof(Flow) == 192,
                "FluidNetwork::Flow: its fields in three lines, as read");
  /** Processes, at time e, every event due up to e + kSimultaneous (advance, step). */
  void happen(double e);
  /** Flow `id` waits its latency: on the queue of flows of that latency (or the heap). */
  void wait_latency(std::size_t id, double latency);
  /** A flow's next event is at time t (on events_, or moved there). */
  void schedule(std::size_t id, double t);
  /** A flow has no next event (off events_). */
  void unschedule(std::size_t id);
  void sift_up(std::uint32_t i);
  void sift_down(std::uint32_t i);
  /** Flow `id` shares from now: on its links' lists, its component to solve again. */
  void begin_sharing(std::size_t id);
  /** Flow `id` is done at time e. */
  void finish(std::size_t id, double e);
  /** By components: the links of `f`, which began or stopped sharing, noted for the next solve (changed_links_). */
  void note_changed(const Flow& f);
  /** The shares of the flows whose sets changed since the last solve: every component touched (by components), or
   *  the whole set in flight; a flow whose rate changes brings its work up to now and gets its new end. */
  void solve();
  /** The share of flow `f` alone in its component, set as fill() would set it (false, nothing set, where it crosses a
   *  link twice): a lone flow needs neither the cache nor a fill. */
  bool alone(Flow& f) const;
  /** Solves `flows` (ids) as one set, found computed or filled, and reschedules those whose rate changed. */
  void resolve(std::vector<std::size_t>& flows);
  /** The flows of `flows` whose rate moved from old_rates_: their work brought to now, their ends scheduled again. */
  void reschedule(const std::vector<std::size_t>& flows);
  /** Link `l` is one of group_'s members' links (the group keeps its share itself). */
  bool in_group(std::uint32_t l) const { return l < group_count_.size() && group_count_[l] > 0; }
  /** A new stamp for link_seen_ and Flow::seen (both cleared past kSeenStamps). */
  void next_seen_stamp();
  /** By components, incrementally: the neighbourhood of each changed link solved ("Neighbourhood"). */
  void solve_neighbourhoods();
  /** Adds flow `id` to the neighbourhood being built (seen_stamp_), its old rate kept, its links to visit. */
  void take_in(std::size_t id);
  /** Visits link_stack_'s links, taking in each one's flows whose neck it is or that have none. */
  void close_neighbourhood();
  /** After a fill of the neighbourhood: takes in each held flow with a higher level than the members whose neck is a
   *  link it crosses; true when one was. */
  bool take_in_higher();
  /** Sets the rates of `sharing` (every flow tagged; sorted here by tag) as computed before for the same tags: true,
   *  or false (nothing set). */
  bool solved_before(std::vector<std::size_t>& sharing);
  /** Keeps the rates of `sharing` (sorted by tag by solved_before) for its tags, if every flow is tagged. */
  void remember(const std::vector<std::size_t>& sharing);
  /** Progressive filling over `sharing` (ids), setting their rates and necks. `partial`: flows outside `sharing`
   *  (Flow::seen not seen_stamp_) cross its links, holding their shares: each link's capacity less theirs. */
  void fill(const std::vector<std::size_t>& sharing, bool partial = false);
  /** fill() of a small set (fill_small_up_to): the same arithmetic in the same order, on arrays on the stack indexed
   *  by the set's own numbering of its links and flows instead of tables indexed by every link's and flow's id; false,
   *  nothing set, where the set is larger. */
  bool fill_small(const std::vector<std::size_t>& sharing, bool partial);
  /** A fill's start for link `l`: its capacity, less (`partial`) the shares of the flows on it outside the set (not
   *  seen_stamp_), in the order of its list; a link with such flows is listed in held_at_ (take_in_higher). */
  double room_left(std::uint32_t l, bool partial);
  /** Shares computed before, by the sorted tags of the sharing flows: each set's tags and rates in flat pools, the
   *  sets chained per slot of a table indexed by the tags' hash (no allocation per set once the pools have grown; all
   *  forgotten at once past kMaxSolved sets). */
  struct Solved {
    std::uint64_t hash;
    std::uint32_t first; ///< its tags and rates: solved_tags_ and solved_rates_ [first, first + size)
    std::uint32_t size;
    std::uint32_t next; ///< the next set in its table slot (kNone: none)
  };
  std::vector<std::uint32_t> solved_table_; ///< per slot (hash mod its size): the first set there, kNone: none
  std::vector<Solved> solved_;
  std::vector<std::uint64_t> solved_tags_;
  std::vector<double> solved_rates_;
  static constexpr std::size_t kCacheWindow = 1024; ///< lookups per window (solved_before)
  static constexpr std::size_t kCacheRest = 15;     ///< windows' worth of solves without the cache after a poor one
  std::size_t cache_lookups_ = 0, cache_hits_ = 0;  ///< in the current window
  std::size_t cache_rest_ = 0;                      ///< solves left without the cache
  bool resting_ = false;                            ///< the last solved_before() left the cache alone
  std::size_t fills_ = 0, small_fills_ = 0;
  static constexpr std::size_t kMaxSolved = 4096;         ///< sets kept at most (then forgotten)
  static constexpr std::size_t kMaxSolvedTags = 1u << 22; ///< their tags kept at most (32 MiB; then forgotten)

  // fill()'s scratch, kept between calls.
  struct FillLink {
    double left;           ///< bandwidth not yet given out
    double weights;        ///< sum of 1 / penalty over its unfixed flows
    std::uint32_t unfixed; ///< its flows not yet fixed
    std::uint32_t at;      ///< its place in link_heap_ while it has flows left (kSingle: one flow crosses it once)
    std::uint32_t id;      ///< the link's
    std::uint32_t first;   ///< its flows: link_flows_[first, filled)
    std::uint32_t filled;
    std::uint32_t renewed; ///< the batch of fixes that last gave it a heap entry
    std::uint32_t single;  ///< a single's flow (slots reused: < 2^32)
    double penalty;        ///< of its first flow
    bool mixed;            ///< its flows' penalties differ (weights kept by subtraction, else exactly)
    double level = 0;      ///< where it is full: what it has left over its weights
  };
  static constexpr std::uint32_t kBound = 0xfffffffeu; ///< Flow::neck: its own bound fixed it
  static constexpr std::uint32_t kOffHeap = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kSingle = kOffHeap - 1; ///< FillLink::at of a link one flow crosses once
  /// fill() of at most this many links finds the lowest by a scan of them all instead of a heap (links_.size()): most
  /// of the computed trees' fills at 1,024 GPUs (a few flows over their NICs: 2 % fewer instructions for dbtree; 16
  /// gave the same, 4 more). A size of this implementation's, no hardware's.
  static constexpr std::size_t kScanLinks = 8;
  std::size_t scan_links_ = kScanLinks;
  std::size_t small_links_ = kSmallLinks;
  std::vector<FillLink> links_;
  std::vector<std::uint32_t> held_at_; ///< a partial fill's links that flows outside its set cross, in its order
  std::vector<std::uint32_t> link_stamp_, link_slot_; ///< per link id: the fill that saw it last, its place in links_
  std::uint32_t stamp_ = 0;
  std::vector<std::size_t> link_flows_;
  std::vector<char> fixed_;
  std::vector<std::uint32_t> link_heap_; ///< fill()'s links (slots of links_), a min-heap by level, then slot
  /// fill()'s links that one flow crosses once, the lowest per flow (slot, flow), sorted by level, then slot
  std::vector<std::pair<std::uint32_t, std::size_t>> singles_;
  std::vector<std::pair<double, std::size_t>> bounds_; ///< fill()'s flows' bounds that may limit them: level, flow
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint64_t> tags_; ///< solved_before()'s and remember()'s: the flows' tags, sorted
  std::vector<std::pair<std::uint64_t, std::size_t>> by_tag_; ///< solved_before()'s: (tag, flow), sorted
  // solve()'s scratch, kept between calls.
  std::vector<std::uint32_t> link_seen_;  ///< by components: each link's walk stamp (a flow's: Flow::seen)
  std::vector<std::uint32_t> link_stack_; ///< by components: the links to visit
  std::uint32_t seen_stamp_ = 0;
  /// Walks between clearings of every stamp (Flow::seen's 16 bits: a few hundred clearings of the flows' first lines
  /// at 16,384 GPUs, where a table by flow id cost a miss per flow met)
  static constexpr std::uint32_t kSeenStamps = 0xffff;
  std::uint32_t seen_stamps_ = kSeenStamps; ///< clear_stamps_after's
  std::vector<std::size_t> component_;
  std::vector<double> old_rates_;
  bool by_components_ = false;
  bool incremental_ = false;
  std::vector<std::uint32_t> held_links_; ///< the neighbourhood's links that a held flow crosses too
  std::vector<std::uint32_t> link_dirty_; ///< per link: dirty_stamp_ while a changed link no set has visited yet
  std::uint32_t dirty_stamp_ = 0;

  /** @brief By components: a processor-sharing group, a component of at least kGroupMin flows of one penalty that all
   *  cross one link, `link`, which fixes every one of them at one share (no other link of theirs, and no bound, lower).
   *  Max-min then gives every member the same share, link's capacity over the members, however many come and go, as
   *  long as each newcomer crosses that link too and nothing else binds: a flow's end is where the work every member
   *  has done since the group began (`done`, rising at the share) reaches its target, one heap keyed by targets that a
   *  change of share leaves in order. A join or an end is then O(log n), where a fill of the component is O(n) (a
   *  parameter server's pulls posted one after the other: every post and every end re-solved the server's flows,
   *  O(P^2) per aggregation). Made from a fill's result (resolve), kept while each join and end checks the other
   *  links' room and the members' bounds against the new share, dissolved into per-flow shares (the component solved
   *  again) where a check fails or a flow that does not cross `link` meets a member's link. One group at a time. */
  struct Group {
    bool active = false;
    std::uint32_t link = 0;
    double penalty = 1;
    double rate = 0; ///< every member's share
    double done = 0; ///< each member's work done since the group began, at time `done_at`
    double done_at = 0;
    std::size_t members = 0;
    std::vector<std::pair<double, std::size_t>> targets; ///< min-heap (target, flow)
    /// lazy min-heaps: (capacity / members crossing it, link) of its other links, (bound, flow) of its members
    std::vector<std::pair<double, std::uint32_t>> room;
    std::vector<std::pair<double, std::size_t>> bounds;
    std::size_t next = 0; ///< the member on events_ (the lowest target), when members > 0
  };
  static constexpr std::size_t kGroupMin = 64;
  Group group_;
  std::vector<std::uint32_t> group_count_; ///< per link: group_'s members crossing it (0: not one of its links)
  std::vector<std::uint32_t> group_links_; ///< every link a member crossed since the group began, once each
  std::vector<char> group_listed_;         ///< per link: in group_links_
  std::size_t grouped_ = 0, groups_ = 0;
  /** Makes `component` (just solved) a group where it is one (Group). */
  void try_group(const std::vector<std::size_t>& component);
  /** The share of `members` flows on group_.link, as fill() computes a link's level over one penalty. */
  double group_rate(std::size_t members) const;
  /** group_.done brought to now_. */
  void group_catch_up();
  /** True when no other link and no member's bound holds group_'s members below `rate` (stale heap entries dropped). */
  bool group_room(double rate);
  /** Link `l` crossed by one member more (`joined`) or one fewer: its count, its place in group_links_, and its room
   *  where it could ever bind (below the group's link alone); the heap rebuilt when stale entries pile up. */
  void group_count(std::uint32_t l, bool joined);
  /** Member `id`'s bound on the bounds' heap where it could ever bind. */
  void group_bound(std::size_t id);
  /** Schedules group_'s lowest target on events_. */
  void group_schedule();
  /** Flow `id` (sharing from now, on its links' lists) joins group_: true, or false (nothing changed). */
  bool group_join(std::size_t id);
  /** Member `id` ends now (finish): false where the group must be dissolved instead (not its lowest target, or the
   *  share the others would get does not hold). */
  bool group_leave(std::size_t id);
  /** Every member back to its own share and end (the group's), its links noted changed for the next solve. */
  void dissolve();
  /** No group: every link's count and listing cleared, the heaps emptied. */
  void end_group();
  /** group_count_ and group_listed_ sized to every link with a capacity. */
  void size_group_tables();

  std::vector<Flow> flows_;
  std::vector<std::size_t> free_;
  static constexpr std::uint32_t kNone = 0xffffffffu;
  /// A binary min-heap of the flows with a next event (their end; a latency's end past waiting_'s kMaxKeys latencies),
  /// one entry each (event_at_): the earlier time first, the lower flow id of two at one time. Each move of a sift
  /// writes the moved flow's place to event_at_, kept apart from its Flow so that a sift touches a small array, not a
  /// line of every flow it moves.
  std::vector<std::pair<double, std::size_t>> events_;
  std::vector<std::uint32_t> event_at_; ///< per flow id: its place on events_ (kNone: not there)
  /// The flows waiting their latency, by latency, each queue in the order they were started (and so of their
  /// latencies' ends: a flow never starts before the time advanced to).
  QueuesByKey<std::size_t> waiting_;
  /// By components: the sharing flows on each link (flow, index of the link in its links).
  std::vector<LinkFlows> on_link_;
  /// By components: the links of the flows that began or stopped sharing since the last solve, and the flows that
  /// began sharing over no link (their bound alone limits them): the components to solve again.
  std::vector<std::uint32_t> changed_links_;
  std::vector<std::size_t> alone_;
  /// Whole sets: the flows started, (id, order), in order; entries of flows done since are dropped at the next solve.
  std::vector<std::pair<std::size_t, std::uint64_t>> live_;
  /// A live_ entry whose flow is still that one (not a later flow in its slot) and sharing.
  bool sharing(std::size_t id, std::uint64_t order) const
  {
    return flows_[id].order == order && flows_[id].state == State::Sharing;
  }
  std::size_t in_flight_ = 0;         ///< flows waiting or sharing
  std::uint64_t started_ = 0;         ///< flows started so far (their order)
  std::vector<std::size_t> finished_; ///< advance()'s
  std::vector<double> capacity_;      ///< per link id (0: not set)
  double now_ = 0;
  bool stale_ = false; ///< the shares need solving
};

/** @brief SimGrid 3.32's clock for a plan that computes its own events beside a FluidNetwork (the ends of its
 *  actors' sleeps, their arrivals): each step is the earliest event, a sleep lasts at least kSimultaneous (measured:
 *  a sleep of 0.26 ns ends 1 ns later), and every event due within kSimultaneous of a step happens at it, whichever
 *  model it belongs to (measured: a transfer due 0.4 ns after a sleep's end ends with it, and the other way round). */
class SimClock {
public:
  /** Event `what` of `who` at time t. */
  void at(double t, std::size_t who, int what);
  /** Event `what` of `who` when a sleep of d > 0 seconds from `now` (never before the last step) ends. */
  void sleep(double now, double d, std::size_t who, int what);
  /** Moves to the next step, the earliest of this clock's events and `net`'s (stepping `net` there: its
   *  finished() are the transfers that end at it), into `now`. False when neither has one left. */
  bool next(FluidNetwork& net, double& now);
  /** The time next() would move to (+inf: none), without moving. */
  double next_time(FluidNetwork& net) const;
  /** The events due at the step `now` (within kSimultaneous of it), in order of time, taken off the clock. */
  void due(double now, std::vector<std::pair<std::size_t, int>>& out);

private:
  using Event = std::tuple<double, std::uint64_t, std::size_t, int>; ///< time, order of making, who, what
  std::vector<Event> heap_; ///< a min-heap: at()'s events, and sleeps past sleeping_'s kMaxKeys lengths
  /// Sleeps by length: made from times that never go back, those of one length end in the order they were made. Up to
  /// 64 lengths (a stack's per-message costs: 34 for NCCL's choice with two streams under grpc-tcp at 1,024 GPUs;
  /// kept at 8, 1.3 of its 3.0 million sleeps went to the heap, a tenth of the run in its sifts).
  QueuesByKey<Event, 64, true> sleeping_;
  std::vector<Event> due_; ///< due()'s scratch
  std::uint64_t made_ = 0;
};

} // namespace ddlsim::analytical
