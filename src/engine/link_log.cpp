// Where a phase's transfers went (link_log.hpp).
#include "engine/link_log.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {

LinkLog::LinkLog(bool timelines, int lanes, bool background)
    : timelines_(timelines)
    , background_(background)
    , floors_(static_cast<std::size_t>(std::max(lanes, 1)), -std::numeric_limits<double>::infinity())
{
  pending_.reserve(kPending);
}

LinkLog::~LinkLog()
{
  if (!threaded())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true; // (what is left unbooked is read by no one)
  }
  handed_.notify_one();
  thread_.join();
}

void LinkLog::add(const collectives::CommWorld::Route& route, std::uint64_t bytes, double start, double end)
{
  add_transfer(route, bytes, start, end, true);
}

void LinkLog::add_transfer(const collectives::CommWorld::Route& route, std::uint64_t bytes, double start, double end,
                           bool one_by_one)
{
  const Pending p{&route, nullptr, bytes, start, end, 0, Pending::Kind::Transfer};
  if (threaded()) {
    keep(p);
    return;
  }
  __builtin_prefetch(&route.shared_ids); // read at the flush: the route arrives meanwhile
  pending_.push_back(p);
  if (background_ && one_by_one && ++one_by_one_ >= kBatch) { // kBatch one by one: worth a thread from now on
    try {
      thread_ = std::thread([this] { work(); });
    } catch (const std::system_error&) { // no thread to be had: the log books itself, as on one core
      background_ = false;
    }
    if (threaded()) {
      hand_over();
      return;
    }
  }
  if (pending_.size() >= kPending)
    flush();
}

void LinkLog::keep(const Pending& p)
{
  pending_.push_back(p);
  if (pending_.size() >= kBatch)
    hand_over();
}

void LinkLog::flush()
{
  if (!threaded()) {
    book(pending_.data(), pending_.data() + pending_.size());
    pending_.clear();
    return;
  }
  hand_over();
  std::unique_lock<std::mutex> lock(mutex_);
  booked_.wait(lock, [this] { return (full_.empty() && !booking_) || failed_; });
  if (failed_)
    std::rethrow_exception(failed_);
}

void LinkLog::hand_over()
{
  if (pending_.empty())
    return;
  std::vector<Pending> next;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (full_.size() >= kInFlight && !failed_) { // the thread is behind: wait for room (memory stays bounded)
      ++waits_;
      booked_.wait(lock, [this] { return full_.size() < kInFlight || failed_; });
    }
    if (failed_)
      std::rethrow_exception(failed_);
    full_.push_back(std::move(pending_));
    if (!empty_.empty()) {
      next = std::move(empty_.back());
      empty_.pop_back();
    }
  }
  handed_.notify_one();
  pending_ = std::move(next);
  pending_.clear();
  pending_.reserve(kBatch);
}

void LinkLog::hold(bool on)
{
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = on;
  }
  handed_.notify_one();
}

void LinkLog::work()
{
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    handed_.wait(lock, [this] { return stop_ || (!held_ && !full_.empty()); });
    if (stop_)
      return;
    std::vector<Pending> batch = std::move(full_.front());
    full_.pop_front();
    booking_ = true;
    lock.unlock();
    try {
      book(batch.data(), batch.data() + batch.size());
      batch.clear();
      lock.lock();
      empty_.push_back(std::move(batch)); // (may throw: std::bad_alloc)
    } catch (...) {
      if (!lock.owns_lock())
        lock.lock();
      failed_ = std::current_exception();
      booking_ = false;
      booked_.notify_all();
      return;
    }
    booking_ = false;
    booked_.notify_all();
  }
}

void LinkLog::book(const Pending* first, const Pending* last)
{
  while (first != last) {
    const Pending* run = first; // transfers up to the next span or floor, kPending at a time (reads issued together)
    while (run != last && run->kind == Pending::Kind::Transfer && run - first < static_cast<std::ptrdiff_t>(kPending))
      ++run;
    book_transfers(first, run);
    first = run;
    if (first == last || first->kind == Pending::Kind::Transfer)
      continue;
    if (first->kind == Pending::Kind::Span) {
      add_span(first->id, &first->link, first->bytes, first->start, first->end);
    } else {
      floors_[first->bytes] = first->start;
      floor_ = *std::min_element(floors_.begin(), floors_.end());
    }
    ++first;
  }
}

void LinkLog::book_transfers(const Pending* first, const Pending* last)
{
  // Three reads in a chain per transfer (its route, the route's list of links, each link's entry), each a cache miss
  // in a large world: issued for every transfer before the first is booked, they overlap.
  for (const Pending* p = first; p != last; ++p)
    __builtin_prefetch(p->route->shared_ids.data());
  for (const Pending* p = first; p != last; ++p)
    for (const std::uint32_t id : p->route->shared_ids) {
      if (id >= links_.size())
        grow(id);
      __builtin_prefetch(&links_[id]);
    }
  for (const Pending* p = first; p != last; ++p) // in the order added (any order would do: set_floor())
    for (std::size_t k = 0; k < p->route->shared_ids.size(); ++k)
      add_span(p->route->shared_ids[k], p->route->shared.data() + k, p->bytes, p->start, p->end);
}

void LinkLog::grow(std::uint32_t id)
{
  links_.resize(id + 1);
  link_of_.resize(id + 1, nullptr);
  folded_s_.resize(id + 1, 0.0);
}

void LinkLog::add(const collectives::CommWorld::TransferBatch& b)
{
  if (timelines_) { // (a batch's transfers: they start no thread)
    for (std::size_t i = 0; i < b.flows.size(); ++i)
      add_transfer(*b.routes[i], b.flows[i].bytes, b.start_s, b.end_s[i], false);
    return;
  }
  const auto& l = b.links;
  for (std::size_t k = 0; k < l.ids.size(); ++k) {
    std::uint64_t bytes = 0;
    double end = b.start_s;
    for (std::uint32_t j = l.offsets[k]; j < l.offsets[k + 1]; ++j) {
      bytes += b.flows[l.flows[j]].bytes;
      end = std::max(end, b.end_s[l.flows[j]]);
    }
    if (threaded())
      keep({nullptr, l.links[k], bytes, b.start_s, end, l.ids[k], Pending::Kind::Span});
    else
      add_span(l.ids[k], l.links.data() + k, bytes, b.start_s, end); // (the transfers kept: any order would do)
  }
}

void LinkLog::set_floor(int lane, double t)
{
  if (lane < 0 || static_cast<std::size_t>(lane) >= floors_.size())
    throw std::out_of_range("LinkLog::set_floor: no lane " + std::to_string(lane));
  if (threaded()) { // booked where it came, after the transfers added before it (book())
    keep({nullptr, nullptr, static_cast<std::uint64_t>(lane), t, t, 0, Pending::Kind::Floor});
    return;
  }
  flush(); // booked under the floor they came under (a span added before it may start before `t`)
  floors_[static_cast<std::size_t>(lane)] = t;
  floor_ = *std::min_element(floors_.begin(), floors_.end());
}

void LinkLog::repeat(unsigned times, double period)
{
  flush();
  for (std::size_t id = 0; id < links_.size(); ++id) {
    if (link_of_[id] == nullptr)
      continue; // a number no transfer of this phase used
    Entry& l = links_[id];
    gather(l);
    l.bytes *= times;
    folded_s_[id] *= times; // within the first iteration: its copies do not overlap
    const std::size_t n = l.spans.size();
    for (unsigned k = 1; k < times; ++k)
      for (std::size_t i = 0; i < n; ++i)
        l.spans.emplace_back(l.spans[i].first + k * period, l.spans[i].second + k * period);
  }
}

std::vector<dag::LinkUsage> LinkLog::usage(double phase_start)
{
  flush();
  std::vector<dag::LinkUsage> out;
  for (std::size_t id = 0; id < links_.size(); ++id) {
    const sg4::Link* link = link_of_[id];
    if (link == nullptr)
      continue; // a number no transfer of this phase used
    Entry& l = links_[id];
    gather(l);
    if (!timelines_)
      merge(l.spans); // copies (repeat) may touch: the busy intervals (sorted), summed below in order
    else
      std::sort(l.spans.begin(), l.spans.end());
    double busy = folded_s_[id], open = -1, close = -1; // the folded intervals end before every later span starts
    for (const auto& [s, e] : l.spans) {
      if (s > close) {
        busy += close - open;
        open = s;
        close = e;
      } else {
        close = std::max(close, e);
      }
    }
    busy += close - open;
    out.push_back({link->get_name(), link->get_bandwidth(), l.bytes, busy, {}});
    if (!timelines_)
      continue;
    std::vector<std::pair<double, int>> changes; // +1 at each start, -1 at each end
    for (const auto& [s, e] : l.spans) {
      changes.emplace_back(s - phase_start, 1);
      changes.emplace_back(e - phase_start, -1);
    }
    std::sort(changes.begin(), changes.end());
    int n = 0;
    for (const auto& [t, d] : changes) {
      n += d;
      if (!out.back().in_flight.empty() && out.back().in_flight.back().first == t)
        out.back().in_flight.back().second = n;
      else
        out.back().in_flight.emplace_back(t, n);
    }
  }
  // Busiest first; links whose busy times agree to 1e-9 (relative) count as equally busy and go by name, so that
  // they keep one order whether their busy time was summed from simulated spans or from copied ones (the sums
  // differ in the last bits). Groups: runs of the sorted list within 1e-9 of the run's first.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.busy_s > b.busy_s; });
  for (std::size_t first = 0; first < out.size();) {
    std::size_t last = first + 1;
    while (last < out.size() && out[first].busy_s - out[last].busy_s <= 1e-9 * out[first].busy_s)
      ++last;
    std::sort(out.begin() + first, out.begin() + last, [](const auto& a, const auto& b) { return a.name < b.name; });
    first = last;
  }
  for (std::size_t i = kTracedLinks; i < out.size(); ++i)
    out[i].in_flight = {};
  return out;
}

void LinkLog::add_span(std::uint32_t id, const sg4::Link* const* link, std::uint64_t bytes, double start, double end)
{
  if (id >= links_.size())
    grow(id);
  Entry& l = links_[id];
  // The link, where the entry looks new (again for each empty transfer until one has bytes): read once per link, not
  // per transfer (the route's list of links and link_of_ are cache lines more).
  if (l.bytes == 0 && l.tail_s > l.tail_e && l.spans.empty())
    link_of_[id] = *link;
  l.bytes += bytes;
  if (timelines_) {
    l.spans.emplace_back(start, end);
    return;
  }
  // Folded a batch at a time: passing an interval reads it (a cache miss per span where each add folded the one
  // before); intervals below the floor meet no later span, so they wait in `spans` with the same result.
  if (l.spans.size() - l.head >= kFoldBatch)
    fold(l, folded_s_[id]);
  merge_in(l, start, end);
}

void LinkLog::merge_in(Entry& l, double start, double end)
{
  if (l.tail_s > l.tail_e) { // no interval left (none past head either)
    l.tail_s = start;
    l.tail_e = end;
    return;
  }
  if (start > l.tail_e) { // after the tail: it joins the others
    push_tail(l);
    l.tail_s = start;
    l.tail_e = end;
    return;
  }
  if (end < l.tail_s) {
    merge_before(l, start, end);
    return;
  }
  l.tail_e = std::max(l.tail_e, end); // meets the tail
  if (start >= l.tail_s)
    return;
  l.tail_s = start; // reaching back, it may meet the intervals before
  auto& v = l.spans;
  while (v.size() > l.head && v.back().second >= l.tail_s) {
    l.tail_s = std::min(l.tail_s, v.back().first);
    v.pop_back();
  }
  if (v.size() == l.head)
    l.front_e = std::numeric_limits<double>::infinity();
}

void LinkLog::merge_before(Entry& l, double start, double end)
{
  auto& v = l.spans;
  std::size_t j = v.size(); // past the last interval that starts at or before `end`
  while (j > l.head && v[j - 1].first > end)
    --j;
  if (j == l.head || v[j - 1].second < start) { // meets none: a new interval in its place
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(j), {start, end});
  } else {
    std::size_t i = j - 1; // the first interval it meets
    while (i > l.head && v[i - 1].second >= start)
      --i;
    v[i].first = std::min(v[i].first, start);
    v[i].second = std::max(v[j - 1].second, end);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i + 1), v.begin() + static_cast<std::ptrdiff_t>(j));
  }
  l.front_e = v[l.head].second;
}

void LinkLog::push_tail(Entry& l)
{
  if (l.tail_s > l.tail_e)
    return;
  l.spans.emplace_back(l.tail_s, l.tail_e);
  if (l.spans.size() == l.head + 1)
    l.front_e = l.tail_e;
  l.tail_s = 0;
  l.tail_e = -1;
}

void LinkLog::fold(Entry& l, double& folded) const
{
  auto& v = l.spans;
  while (l.front_e < floor_) {
    folded += v[l.head].second - v[l.head].first;
    ++l.head;
    l.front_e = l.head < v.size() ? v[l.head].second : std::numeric_limits<double>::infinity();
  }
  if (l.head == v.size() && l.tail_e < floor_ && l.tail_s <= l.tail_e) { // the tail too, last (in order)
    folded += l.tail_e - l.tail_s;
    l.tail_s = 0;
    l.tail_e = -1;
  }
  if (l.head >= kCompactMin && 2 * l.head >= v.size())
    drop_folded(l); // their memory reused: each interval moved at most once more on average
}

void LinkLog::gather(Entry& l)
{
  push_tail(l);
  drop_folded(l);
}

void LinkLog::drop_folded(Entry& l)
{
  l.spans.erase(l.spans.begin(), l.spans.begin() + static_cast<std::ptrdiff_t>(l.head));
  l.head = 0;
}

void LinkLog::merge(std::vector<std::pair<double, double>>& spans)
{
  std::sort(spans.begin(), spans.end());
  std::size_t n = 0;
  for (const auto& [s, e] : spans) {
    if (n > 0 && s <= spans[n - 1].second)
      spans[n - 1].second = std::max(spans[n - 1].second, e);
    else
      spans[n++] = {s, e};
  }
  spans.resize(n);
}

} // namespace ddlsim::engine
