// Where a phase's transfers went (link_log.hpp).
#include "engine/link_log.hpp"

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {

LinkLog::LinkLog(bool timelines, int lanes)
    : timelines_(timelines)
    , floors_(static_cast<std::size_t>(std::max(lanes, 1)), -std::numeric_limits<double>::infinity())
{
}

void LinkLog::add(const collectives::CommWorld::Route& route, std::uint64_t bytes, double start, double end)
{
  for (std::size_t k = 0; k < route.shared_ids.size(); ++k)
    add_span(route.shared_ids[k], route.shared[k], bytes, start, end);
}

void LinkLog::add(const collectives::CommWorld::TransferBatch& b)
{
  if (timelines_) {
    for (std::size_t i = 0; i < b.flows.size(); ++i)
      add(*b.routes[i], b.flows[i].bytes, b.start_s, b.end_s[i]);
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
    add_span(l.ids[k], l.links[k], bytes, b.start_s, end);
  }
}

void LinkLog::set_floor(int lane, double t)
{
  floors_.at(static_cast<std::size_t>(lane)) = t;
  floor_ = *std::min_element(floors_.begin(), floors_.end());
}

void LinkLog::repeat(unsigned times, double period)
{
  for (auto& l : links_) {
    if (l.link == nullptr)
      continue; // a number no transfer of this phase used
    close_open(l);
    l.bytes *= times;
    l.folded_s *= times; // within the first iteration: its copies do not overlap
    const std::size_t n = l.spans.size();
    for (unsigned k = 1; k < times; ++k)
      for (std::size_t i = 0; i < n; ++i)
        l.spans.emplace_back(l.spans[i].first + k * period, l.spans[i].second + k * period);
  }
}

std::vector<dag::LinkUsage> LinkLog::usage(double phase_start)
{
  std::vector<dag::LinkUsage> out;
  for (auto& l : links_) {
    if (l.link == nullptr)
      continue; // a number no transfer of this phase used
    close_open(l);
    if (!timelines_)
      merge(l.spans); // the busy intervals: summed below in the same order as the spans they merge
    std::sort(l.spans.begin(), l.spans.end());
    double busy = l.folded_s, open = -1, close = -1; // the folded intervals end before every later span starts
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
    out.push_back({l.link->get_name(), l.link->get_bandwidth(), l.bytes, busy, {}});
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

void LinkLog::add_span(std::uint32_t id, const sg4::Link* link, std::uint64_t bytes, double start, double end)
{
  if (id >= links_.size())
    links_.resize(id + 1);
  Entry& l = links_[id];
  l.link = link;
  l.bytes += bytes;
  if (timelines_) {
    l.spans.emplace_back(start, end);
    return;
  }
  // The busy time only: a span that meets an open one widens it (merge() would join them: the same union, the same
  // intervals), whichever starts first (several lanes report out of order); one that meets neither replaces the one
  // extended less recently, which goes to the spans.
  auto meets = [&](int k, double s, double e) { return s <= l.close_s[k] && e >= l.open_s[k]; }; // none: (0, -1)
  for (const int k : {l.recent, 1 - l.recent})
    if (meets(k, start, end)) {
      l.open_s[k] = std::min(l.open_s[k], start);
      l.close_s[k] = std::max(l.close_s[k], end);
      const int other = 1 - k;
      if (meets(other, l.open_s[k], l.close_s[k])) { // widened, it reaches the other: one span
        l.open_s[k] = std::min(l.open_s[k], l.open_s[other]);
        l.close_s[k] = std::max(l.close_s[k], l.close_s[other]);
        l.open_s[other] = 0;
        l.close_s[other] = -1;
      }
      l.recent = k;
      return;
    }
  const int k = 1 - l.recent;
  if (l.open_s[k] <= l.close_s[k])
    keep(l, l.open_s[k], l.close_s[k], l.recent);
  l.open_s[k] = start;
  l.close_s[k] = end;
  l.recent = k;
  if (l.spans.size() >= l.compact_at) {
    // The other open span may reach back before the floor (widened by a span reported before the floor rose): it
    // joins the spans, so that what fold() takes is disjoint from all that stays. The new one starts at the floor or
    // later.
    const int other = 1 - k;
    if (l.open_s[other] <= l.close_s[other])
      l.spans.emplace_back(l.open_s[other], l.close_s[other]);
    l.open_s[other] = 0;
    l.close_s[other] = -1;
    merge(l.spans);
    l.ordered = true;
    fold(l);
    if (!l.spans.empty())
      l.last_end_s = l.spans.back().second;
    l.compact_at = std::max<std::size_t>(2 * l.spans.size(), kCompactMin);
  }
}

void LinkLog::keep(Entry& l, double start, double end, int staying) const
{
  if (l.ordered && (l.spans.empty() || start > l.last_end_s)) {
    // What ends before the floor, while the open span starts after it, no later span can reach: fold() would take it,
    // in this order. The stored spans first (they then stay few, not up to compact_at: with a link each at thousands
    // of ranks, cycling through a kilobyte-sized vector per link missed the cache), then this one.
    auto clear_of_open = [&l, staying](double t) {
      return l.open_s[staying] > l.close_s[staying] || l.open_s[staying] > t;
    };
    if (!l.spans.empty() && l.last_end_s < floor_ && clear_of_open(l.last_end_s)) {
      for (const auto& [s, e] : l.spans)
        l.folded_s += e - s;
      l.spans.clear();
    }
    if (end < floor_ && clear_of_open(end)) {
      l.folded_s += end - start;
      return;
    }
  } else {
    l.ordered = false;
  }
  l.spans.emplace_back(start, end);
  l.last_end_s = end;
}

void LinkLog::close_open(Entry& l)
{
  l.ordered = false; // usage() and repeat() sort the spans
  for (int k : {0, 1}) {
    if (l.open_s[k] <= l.close_s[k])
      l.spans.emplace_back(l.open_s[k], l.close_s[k]);
    l.open_s[k] = 0;
    l.close_s[k] = -1;
  }
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
  spans.shrink_to_fit();
}

void LinkLog::fold(Entry& l) const
{
  std::size_t n = 0; // merged: sorted, disjoint, so their ends increase too
  for (; n < l.spans.size() && l.spans[n].second < floor_; ++n)
    l.folded_s += l.spans[n].second - l.spans[n].first;
  l.spans.erase(l.spans.begin(), l.spans.begin() + static_cast<std::ptrdiff_t>(n));
}

} // namespace ddlsim::engine
