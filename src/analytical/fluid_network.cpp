#include "analytical/fluid_network.hpp"

#include "common/error.hpp"
#include "common/hash.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

namespace ddlsim::analytical {

void FluidNetwork::set_capacity(std::uint32_t link, double capacity)
{
  if (!(capacity > 0) || !std::isfinite(capacity))
    throw Error("internal: FluidNetwork needs link capacities > 0 and finite");
  if (link >= capacity_.size())
    capacity_.resize(link + 1, 0.0);
  if (capacity_[link] == 0)
    capacity_[link] = capacity;
}

std::size_t FluidNetwork::start(double now, const FlowSpec& spec)
{
  if (now < now_ || !(spec.penalty > 0) || !(spec.work >= 0) || !(spec.latency_s >= 0))
    throw Error("internal: FluidNetwork::start needs now >= the time advanced to, a penalty > 0, work >= 0 and a "
                "latency >= 0");
  // A flow's own bound limits it only where no link it crosses is as narrow: a link's level never exceeds its capacity
  // times the penalty of a flow still on it, and a link's entry comes first at an equal level (fill()). Capacities
  // never change once set, so this holds for the flow's life.
  bool bound_binds = spec.bound > 0;
  for (std::uint32_t l : spec.links) {
    if (l >= capacity_.size() || capacity_[l] == 0)
      throw Error("internal: FluidNetwork::start got a link without a capacity");
    bound_binds = bound_binds && !(capacity_[l] <= spec.bound);
  }
  now_ = now; // a flow's work is brought up to a time only when its rate changes (resolve)
  std::size_t id = flows_.size();
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    if (flows_.size() >= kNone) // a link's list names its flows in 32 bits (on_link_)
      throw Error("internal: FluidNetwork has more flows at once than it can name");
    flows_.emplace_back();
    event_at_.push_back(kNone);
  }
  Flow& f = flows_[id];
  f.links.assign(spec.links.begin(), spec.links.end());
  f.penalty = spec.penalty;
  f.bound = spec.bound;
  f.bound_binds = bound_binds;
  f.neck = kNone;
  f.tag = spec.tag;
  f.order = started_++;
  f.shares_at = now + spec.latency_s;
  f.left = spec.work;
  f.since = now;
  f.rate = 0;
  f.end = 0;
  ++in_flight_;
  if (!by_components_)
    live_.emplace_back(id, f.order);
  // No latency: it shares from now (no event of its own, as in SimGrid, where only a latency ends as an event).
  if (spec.latency_s == 0 && spec.work > 0 && (!f.links.empty() || spec.bound > 0)) {
    begin_sharing(id);
  } else {
    f.state = State::Latency;
    wait_latency(id, spec.latency_s);
  }
  return id;
}

void FluidNetwork::wait_latency(std::size_t id, double latency)
{
  // Flows of one latency, started at times that never go back, end their latencies in the order they were started:
  // a queue per latency holds them in that order, off the heap (a handful of queues: a plan's routes have few
  // latencies; past kMaxKeys, on the heap).
  if (!waiting_.push(latency, id, flows_[id].shares_at))
    schedule(id, flows_[id].shares_at);
}

void FluidNetwork::schedule(std::size_t id, double t)
{
  const std::uint32_t at = event_at_[id];
  if (at == kNone) { // a new entry: up from the end
    event_at_[id] = static_cast<std::uint32_t>(events_.size());
    events_.emplace_back(t, id);
    sift_up(event_at_[id]);
    return;
  }
  // Moved one way only: an earlier time up (its children stay later), a later one down (its parent stays earlier).
  const bool earlier = std::make_pair(t, id) < events_[at];
  events_[at].first = t;
  if (earlier)
    sift_up(at);
  else
    sift_down(at);
}

void FluidNetwork::unschedule(std::size_t id)
{
  const std::uint32_t i = event_at_[id];
  if (i == kNone)
    return;
  event_at_[id] = kNone;
  const auto last = events_.back();
  events_.pop_back();
  if (last.second == id)
    return;
  events_[i] = last; // the last entry in its place, then where it belongs
  event_at_[last.second] = i;
  sift_up(i);
  sift_down(event_at_[last.second]);
}

void FluidNetwork::sift_up(std::uint32_t i)
{
  const auto entry = events_[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!(entry < events_[parent]))
      break;
    events_[i] = events_[parent];
    event_at_[events_[i].second] = i;
    i = parent;
  }
  events_[i] = entry;
  event_at_[entry.second] = i;
}

void FluidNetwork::sift_down(std::uint32_t i)
{
  const auto entry = events_[i];
  const std::size_t n = events_.size();
  for (;;) {
    std::size_t child = 2 * std::size_t(i) + 1;
    if (child >= n)
      break;
    if (child + 1 < n && events_[child + 1] < events_[child])
      ++child;
    if (!(events_[child] < entry))
      break;
    events_[i] = events_[child];
    event_at_[events_[i].second] = i;
    i = static_cast<std::uint32_t>(child);
  }
  events_[i] = entry;
  event_at_[entry.second] = i;
}

void FluidNetwork::begin_sharing(std::size_t id)
{
  Flow& f = flows_[id];
  f.state = State::Sharing;
  f.rate = 0;
  f.due = std::numeric_limits<double>::infinity();
  f.since = now_;
  if (by_components_) {
    if (on_link_.size() < capacity_.size())
      on_link_.resize(capacity_.size());
    f.slots.resize(f.links.size());
    for (std::uint32_t k = 0; k < f.links.size(); ++k) {
      auto& on = on_link_[f.links[k]];
      f.slots[k] = static_cast<std::uint32_t>(on.size());
      on.push_back({static_cast<std::uint32_t>(id), k});
    }
    if (f.links.empty()) {
      alone_.push_back(id);
    } else {
      bool meets_group = false;
      if (group_.active)
        for (std::uint32_t l : f.links)
          meets_group = meets_group || in_group(l);
      if (meets_group && group_join(id))
        return; // its share is the group's: nothing else changes
      if (meets_group)
        dissolve(); // another flow on its members' links: the component solved again, as any
      note_changed(f);
    }
  }
  stale_ = true;
}

void FluidNetwork::finish(std::size_t id, double e)
{
  Flow& f = flows_[id];
  const bool was_sharing = f.state == State::Sharing;
  const bool was_grouped = f.grouped;
  f.grouped = false;
  f.state = State::Done;
  unschedule(id);
  f.left = 0;
  f.since = e;
  f.end = e;
  --in_flight_;
  finished_.push_back(id);
  if (!was_sharing)
    return;
  if (by_components_) {
    for (std::uint32_t k = 0; k < f.links.size(); ++k) { // off its links' lists (swapped with the last)
      auto& on = on_link_[f.links[k]];
      const std::uint32_t slot = f.slots[k];
      on[slot] = on.back();
      flows_[on[slot].first].slots[on[slot].second] = slot;
      on.pop_back();
    }
    if (was_grouped && group_leave(id))
      return; // the others' share is the group's new one
    if (was_grouped)
      dissolve();
    // Its links, not its id: a caller may release it and start another in its slot before the next solve.
    note_changed(f);
  }
  stale_ = true;
}

void FluidNetwork::note_changed(const Flow& f)
{
  for (const std::uint32_t link : f.links) // a loop: a range insert of a few ids cost 3 % of a run's instructions
    changed_links_.push_back(link);
}

void FluidNetwork::release(std::size_t id)
{
  if (id >= flows_.size() || flows_[id].state != State::Done)
    throw Error("internal: FluidNetwork::release of a flow that is not done");
  flows_[id].state = State::Free;
  free_.push_back(id);
}

void FluidNetwork::restart()
{
  if (in_flight_ != 0)
    throw Error("internal: FluidNetwork::restart with flows in flight");
  flows_.clear();
  event_at_.clear();
  free_.clear();
  finished_.clear();
  events_.clear();
  waiting_.clear();
  changed_links_.clear();
  alone_.clear();
  live_.clear();
  end_group();
  group_ = Group{};
  started_ = 0;
  now_ = 0;
  stale_ = false;
}

double FluidNetwork::next_event()
{
  if (stale_)
    solve();
  double next = events_.empty() ? std::numeric_limits<double>::infinity() : events_.front().first;
  if (!by_components_)
    for (const auto& [id, order] : live_)
      if (sharing(id, order))
        next = std::min(next, flows_[id].due);
  next = std::min(next, waiting_.earliest());
  return next;
}

bool FluidNetwork::advance(double t)
{
  bool any = false;
  finished_.clear();
  for (;;) {
    const double e = next_event();
    if (!(e <= t))
      break;
    happen(e);
    any = true;
  }
  now_ = std::max(now_, t);
  return any;
}

bool FluidNetwork::step(double t)
{
  finished_.clear();
  const double e = next_event(); // the shares, solved
  if (t < now_ || t > e)
    throw Error("internal: FluidNetwork::step needs a time between the time advanced to and the next event");
  if (!(e <= t + kSimultaneous)) {
    now_ = t;
    return false;
  }
  happen(t);
  return true;
}

void FluidNetwork::happen(double e)
{
  now_ = std::max(now_, e);
  const double until = e + kSimultaneous;
  const std::size_t first = finished_.size();
  auto latency_ends = [this, e](std::size_t id) {
    const Flow& f = flows_[id];
    if (f.left <= 0 || (f.links.empty() && !(f.bound > 0))) // nothing to share, or nothing limits it
      finish(id, e);
    else
      begin_sharing(id);
  };
  // Every event up to `until` happens now (SimGrid: surf/precision), in any order: a latency's end starts the flow
  // sharing (its share solved at the next solve), an end takes it off its links.
  waiting_.take_until(
      until, [this](std::size_t id) { return flows_[id].shares_at; }, latency_ends);
  if (!by_components_) // the ends, found by a scan (resolve)
    for (const auto& [id, order] : live_)
      if (sharing(id, order) && flows_[id].due <= until)
        finish(id, e);
  while (!events_.empty() && events_.front().first <= until) {
    const std::size_t id = events_.front().second;
    unschedule(id);
    if (flows_[id].state == State::Latency)
      latency_ends(id);
    else
      finish(id, e);
  }
  // In the order the flows were started (the order of a scan of the flows in flight, which the callers' records
  // were made with), not the heap's.
  std::sort(finished_.begin() + static_cast<std::ptrdiff_t>(first), finished_.end(),
            [this](std::size_t a, std::size_t b) { return flows_[a].order < flows_[b].order; });
}

void FluidNetwork::solve()
{
  stale_ = false;
  std::vector<std::size_t>& component = component_;
  if (!by_components_) { // the set as one: a plan's recurring steps (mirrored lanes' hd) hit as a whole
    component.clear();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live_.size(); ++i) { // entries of flows done since are dropped
      const auto [id, order] = live_[i];
      const Flow& f = flows_[id];
      if (f.order != order || !(f.state == State::Latency || f.state == State::Sharing))
        continue;
      live_[kept++] = live_[i];
      if (f.state == State::Sharing)
        component.push_back(id);
    }
    live_.resize(kept);
    if (!component.empty())
      resolve(component);
    return;
  }
  // Components: flows joined by the links they share. The max-min shares of one never depend on another's, so only
  // the components a flow joined or left are solved again (found computed or filled alone): a set of flows in flight
  // rarely recurs, its components, a few flows at one member's links, do.
  if (link_seen_.size() < capacity_.size())
    link_seen_.resize(capacity_.size(), 0);
  next_seen_stamp();
  for (std::size_t id : alone_) { // a bound alone limits it: a component of its own
    if (flows_[id].state != State::Sharing || !flows_[id].links.empty() || flows_[id].seen == seen_stamp_)
      continue; // (done since, or its slot taken by another flow)
    flows_[id].seen = static_cast<std::uint16_t>(seen_stamp_);
    component.assign(1, id);
    resolve(component);
  }
  alone_.clear();
  if (incremental_) {
    solve_neighbourhoods();
    return;
  }
  for (std::uint32_t from : changed_links_) {
    if (link_seen_[from] == seen_stamp_ || in_group(from))
      continue; // (a group's links: the group keeps its share itself)
    link_seen_[from] = seen_stamp_;
    component.clear();
    link_stack_.assign(1, from);
    while (!link_stack_.empty()) { // every flow reached over shared links
      const std::uint32_t l = link_stack_.back();
      link_stack_.pop_back();
      for (const auto& [id, k] : on_link_[l]) {
        if (flows_[id].seen == seen_stamp_)
          continue;
        flows_[id].seen = static_cast<std::uint16_t>(seen_stamp_);
        if (flows_[id].grouped)
          throw Error("internal: FluidNetwork's group met a flow outside it on a link");
        component.push_back(id);
        for (std::uint32_t next : flows_[id].links)
          if (link_seen_[next] != seen_stamp_) {
            link_seen_[next] = seen_stamp_;
            link_stack_.push_back(next);
          }
      }
    }
    if (!component.empty())
      resolve(component);
  }
  changed_links_.clear();
}

// Neighbourhood: the flows an event can move, solved with the others held. An allocation is the max-min one exactly
// when every flow has a neck: its own bound, or a full link on which no flow has a higher level (rate x penalty). Each
// fill records every flow's neck (Flow::neck). A flow that ends frees room on its links for the flows whose neck one of
// them is; a flow that begins sharing has none yet; every other flow keeps its neck as long as no flow solved again
// crosses it. So the set solved again starts from the changed links' flows that have no neck or whose neck the link
// is, and takes in, link by link, every flow whose neck is a link a member crosses (close_neighbourhood). Filled with
// each link's capacity less the held flows' shares (no link over its capacity), each member gets a neck; one on a link
// where a held flow has a higher level would not be one, so that flow is taken in and the set filled again
// (take_in_higher), until none is. Then every flow, member or held, has a neck, and the max-min allocation is unique:
// these are the shares a fill of the whole component gives, to rounding (the order of the sums). The shares' cache is
// not used: a set with held flows around it depends on their shares, not on its tags alone.
void FluidNetwork::solve_neighbourhoods()
{
  if (link_dirty_.size() < capacity_.size())
    link_dirty_.resize(capacity_.size(), 0);
  if (old_rates_.size() < flows_.size())
    old_rates_.resize(flows_.size());
  std::vector<std::size_t>& set = component_;
  if (++dirty_stamp_ == 0) {
    std::fill(link_dirty_.begin(), link_dirty_.end(), 0u);
    dirty_stamp_ = 1;
  }
  for (std::uint32_t l : changed_links_)
    if (!in_group(l)) // (a group's links: the group keeps its share itself)
      link_dirty_[l] = dirty_stamp_;
  for (std::uint32_t from : changed_links_) {
    if (link_dirty_[from] != dirty_stamp_)
      continue; // visited by an earlier set, or a group's
    next_seen_stamp();
    set.clear();
    held_links_.clear();
    link_seen_[from] = seen_stamp_;
    link_stack_.assign(1, from);
    close_neighbourhood();
    if (set.empty())
      continue; // no flow's share moves
    if (!(held_links_.empty() && set.size() == 1 && alone(flows_[set.front()])))
      for (;;) {
        fill(set, true);
        if (!take_in_higher())
          break;
        close_neighbourhood();
      }
    reschedule(set);
    if (!group_.active && set.size() >= kGroupMin)
      try_group(set);
  }
  changed_links_.clear();
}

void FluidNetwork::take_in(std::size_t id)
{
  Flow& f = flows_[id];
  if (f.grouped)
    throw Error("internal: FluidNetwork's group met a flow outside it on a link");
  f.seen = static_cast<std::uint16_t>(seen_stamp_);
  component_.push_back(id);
  old_rates_[id] = f.rate;
  for (std::uint32_t l : f.links)
    if (link_seen_[l] != seen_stamp_) {
      link_seen_[l] = seen_stamp_;
      link_stack_.push_back(l);
    }
}

void FluidNetwork::close_neighbourhood()
{
  while (!link_stack_.empty()) {
    const std::uint32_t l = link_stack_.back();
    link_stack_.pop_back();
    link_dirty_[l] = 0; // (a changed link: no set to start from it again)
    bool held = false;
    for (const auto& [id, k] : on_link_[l]) {
      if (flows_[id].seen == seen_stamp_)
        continue;
      const std::uint32_t neck = flows_[id].neck;
      if (neck == l || neck == kNone)
        take_in(id);
      else
        held = true;
    }
    if (held)
      held_links_.push_back(l);
  }
}

bool FluidNetwork::take_in_higher()
{
  // A member's neck must be a link where no flow has a higher level; the fill saw to it among the members.
  bool any = false;
  for (const std::uint32_t l : held_at_) {
    double level = -1; // of the members it fixed
    for (const auto& [id, at] : on_link_[l]) {
      const Flow& f = flows_[id];
      if (f.seen == seen_stamp_ && f.neck == l)
        level = std::max(level, f.rate * f.penalty);
    }
    if (level < 0)
      continue;
    const double above = level * (1 + 1e-9); // (levels equal but for rounding: either is a neck)
    for (const auto& [id, at] : on_link_[l]) {
      const Flow& f = flows_[id];
      if (f.seen != seen_stamp_ && f.rate * f.penalty > above) {
        take_in(id);
        any = true;
      }
    }
  }
  return any;
}

void FluidNetwork::next_seen_stamp()
{
  if (++seen_stamp_ > seen_stamps_) { // past the flows' 16 bits (kSeenStamps): every stamp seen so far is old
    std::fill(link_seen_.begin(), link_seen_.end(), 0u);
    for (Flow& f : flows_)
      f.seen = 0;
    seen_stamp_ = 1;
  }
}

bool FluidNetwork::alone(Flow& f) const
{
  // fill()'s arithmetic for one flow: each link's level its capacity over the flow's weight 1 / penalty, its bound's
  // level bound x penalty; the lowest fixes it at level / penalty. A link it crosses twice weighs it twice: fill().
  double level = std::numeric_limits<double>::infinity();
  std::uint32_t neck = kNone;
  for (std::size_t k = 0; k < f.links.size(); ++k) {
    for (std::size_t j = 0; j < k; ++j)
      if (f.links[j] == f.links[k])
        return false;
    const double at = capacity_[f.links[k]] / (1.0 / f.penalty);
    if (at < level) { // (the first of equal links: fill()'s lower slot)
      level = at;
      neck = f.links[k];
    }
  }
  if (f.bound > 0 && f.bound * f.penalty < level) { // (a link first at an equal level: fill())
    level = f.bound * f.penalty;
    neck = kBound;
  }
  f.rate = std::max(level, 0.0) / f.penalty;
  f.neck = neck;
  return true;
}

void FluidNetwork::resolve(std::vector<std::size_t>& flows)
{
  old_rates_.resize(flows_.size());
  for (std::size_t id : flows)
    old_rates_[id] = flows_[id].rate;
  if (!(flows.size() == 1 && alone(flows_[flows.front()])) && !solved_before(flows)) {
    fill(flows);
    remember(flows);
  }
  reschedule(flows);
  if (by_components_ && !group_.active && flows.size() >= kGroupMin)
    try_group(flows);
}

void FluidNetwork::reschedule(const std::vector<std::size_t>& flows)
{
  for (std::size_t id : flows) {
    Flow& f = flows_[id];
    const double was = old_rates_[id];
    if (f.rate == was)
      continue; // its end stands
    if (std::isfinite(was))
      f.left = std::max(0.0, f.left - was * (now_ - f.since));
    f.since = now_;
    const double due = !std::isfinite(f.rate) ? now_
                       : f.rate > 0           ? now_ + f.left / f.rate
                                              : std::numeric_limits<double>::infinity(); // none while it gets nothing
    if (!by_components_) // a set solved as one: most shares change at each solve, a scan finds the ends (happen)
      f.due = due;
    else if (std::isfinite(due))
      schedule(id, due);
    else
      unschedule(id);
  }
}

double FluidNetwork::group_rate(std::size_t members) const
{
  const double weights = double(members) / group_.penalty; // fill(): a link's level over one penalty
  return capacity_[group_.link] / weights / group_.penalty;
}

void FluidNetwork::group_catch_up()
{
  group_.done += group_.rate * (now_ - group_.done_at);
  group_.done_at = now_;
}

bool FluidNetwork::group_room(double rate)
{
  auto& room = group_.room;
  auto later = std::greater<>();
  while (!room.empty()) { // entries of counts since changed are stale
    const auto [level, l] = room.front();
    if (group_count_[l] > 0 && level == capacity_[l] / double(group_count_[l]))
      break;
    std::pop_heap(room.begin(), room.end(), later);
    room.pop_back();
  }
  auto& bounds = group_.bounds;
  while (!bounds.empty()) {
    const auto [bound, id] = bounds.front();
    if (flows_[id].grouped && flows_[id].bound == bound)
      break;
    std::pop_heap(bounds.begin(), bounds.end(), later);
    bounds.pop_back();
  }
  return (room.empty() || room.front().first >= rate) && (bounds.empty() || bounds.front().first >= rate);
}

void FluidNetwork::group_count(std::uint32_t l, bool joined)
{
  group_count_[l] = joined ? group_count_[l] + 1 : group_count_[l] - 1;
  if (joined && !group_listed_[l]) {
    group_listed_[l] = 1;
    group_links_.push_back(l);
  }
  // A member's share never exceeds the group's link alone: a link with that much room per member never binds.
  auto may_bind = [this](std::uint32_t k) {
    return k != group_.link && group_count_[k] > 0 && capacity_[k] / double(group_count_[k]) < capacity_[group_.link];
  };
  if (!may_bind(l))
    return;
  auto later = std::greater<>();
  auto& room = group_.room;
  room.emplace_back(capacity_[l] / double(group_count_[l]), l);
  std::push_heap(room.begin(), room.end(), later);
  if (room.size() > 2 * group_links_.size() + 64) { // mostly stale: afresh from the counts
    room.clear();
    for (std::uint32_t k : group_links_)
      if (may_bind(k))
        room.emplace_back(capacity_[k] / double(group_count_[k]), k);
    std::make_heap(room.begin(), room.end(), later);
  }
}

void FluidNetwork::group_bound(std::size_t id)
{
  const double bound = flows_[id].bound;
  if (!(bound > 0) || bound >= capacity_[group_.link])
    return; // never below the share
  auto later = std::greater<>();
  auto& bounds = group_.bounds;
  bounds.emplace_back(bound, id);
  std::push_heap(bounds.begin(), bounds.end(), later);
  if (bounds.size() > 2 * group_.members + 64) { // mostly stale: afresh from the members
    bounds.clear();
    for (const auto& [target, m] : group_.targets)
      if (flows_[m].grouped && flows_[m].bound > 0 && flows_[m].bound < capacity_[group_.link])
        bounds.emplace_back(flows_[m].bound, m);
    std::make_heap(bounds.begin(), bounds.end(), later);
  }
}

void FluidNetwork::group_schedule()
{
  if (flows_[group_.next].grouped)
    unschedule(group_.next);
  if (group_.members == 0)
    return;
  const auto [target, id] = group_.targets.front();
  group_.next = id;
  schedule(id, group_.done_at + std::max(0.0, target - group_.done) / group_.rate);
}

void FluidNetwork::try_group(const std::vector<std::size_t>& component)
{
  // The fill's result: every flow at one share, of one penalty, all crossing one link once whose capacity that share
  // fills (so it fixed them all; no other link or bound held one lower).
  const Flow& first = flows_[component.front()];
  const double rate = first.rate;
  if (!(rate > 0) || !std::isfinite(rate))
    return;
  for (std::size_t id : component)
    if (flows_[id].rate != rate || flows_[id].penalty != first.penalty)
      return;
  std::uint32_t link = kNone; // the narrowest link every flow crosses
  for (std::uint32_t l : first.links)
    if (on_link_[l].size() == component.size() && (link == kNone || capacity_[l] < capacity_[link]))
      link = l;
  if (link == kNone)
    return;
  for (std::size_t id : component)
    if (std::count(flows_[id].links.begin(), flows_[id].links.end(), link) != 1)
      return;
  // No other flow on a member's link (a neighbourhood solved with flows held around it is not a component): the
  // group keeps its links' room by its members alone (group_room).
  size_group_tables();
  for (std::size_t id : component)
    for (std::uint32_t l : flows_[id].links)
      ++group_count_[l];
  bool closed = true;
  for (std::size_t id : component)
    for (std::uint32_t l : flows_[id].links)
      closed = closed && on_link_[l].size() == group_count_[l];
  for (std::size_t id : component)
    for (std::uint32_t l : flows_[id].links)
      group_count_[l] = 0;
  if (!closed)
    return;
  group_.link = link;
  group_.penalty = first.penalty;
  if (std::fabs(group_rate(component.size()) - rate) > 1e-12 * rate)
    return;
  group_.active = true;
  group_.rate = rate;
  group_.done = 0;
  group_.done_at = now_;
  group_.members = component.size();
  size_group_tables(); // (its heaps and lists empty: end_group)
  for (std::size_t id : component) {
    Flow& f = flows_[id];
    unschedule(id);
    f.grouped = true;
    f.target = std::max(0.0, f.left - f.rate * (now_ - f.since)); // its work left now: done starts at 0
    group_.targets.emplace_back(f.target, id);
    group_bound(id);
    for (std::uint32_t l : f.links)
      group_count(l, true);
  }
  auto later = std::greater<>();
  std::make_heap(group_.targets.begin(), group_.targets.end(), later);
  group_.next = group_.targets.front().second;
  ++groups_;
  grouped_ += component.size();
  group_schedule();
}

bool FluidNetwork::group_join(std::size_t id)
{
  Flow& f = flows_[id];
  if (f.penalty != group_.penalty || std::count(f.links.begin(), f.links.end(), group_.link) != 1)
    return false;
  const double rate = group_rate(group_.members + 1);
  size_group_tables();
  for (std::size_t k = 0; k < f.links.size(); ++k) {
    const std::uint32_t l = f.links[k];
    if (l == group_.link)
      continue;
    if (std::count(f.links.begin(), f.links.end(), l) != 1 || on_link_[l].size() != group_count_[l] + 1 ||
        capacity_[l] / double(group_count_[l] + 1) < rate)
      return false; // another flow on it, or it would bind
  }
  if (f.bound > 0 && f.bound < rate)
    return false;
  // The members' other links and bounds keep their room: the share falls.
  group_catch_up();
  group_.rate = rate;
  ++group_.members;
  ++grouped_;
  f.grouped = true;
  f.target = group_.done + f.left;
  auto later = std::greater<>();
  group_.targets.emplace_back(f.target, id);
  std::push_heap(group_.targets.begin(), group_.targets.end(), later);
  group_bound(id);
  for (std::uint32_t l : f.links)
    group_count(l, true);
  group_schedule();
  return true;
}

bool FluidNetwork::group_leave(std::size_t id)
{
  // `id` is off its links' lists, no longer grouped (finish). It must be the lowest target (its end is the group's
  // next event).
  auto later = std::greater<>();
  group_catch_up();
  if (group_.targets.empty() || group_.targets.front().second != id)
    return false;
  std::pop_heap(group_.targets.begin(), group_.targets.end(), later);
  group_.targets.pop_back();
  --group_.members;
  for (std::uint32_t l : flows_[id].links)
    group_count(l, false);
  if (group_.members == 0) {
    end_group();
    return true;
  }
  const double rate = group_rate(group_.members);
  if (!group_room(rate))
    return false;
  group_.rate = rate;
  group_schedule();
  return true;
}

void FluidNetwork::dissolve()
{
  // Each member's work left now, at the group's share since it was last set; the next solve finds the component from
  // their links and solves it as any other (a member whose share stays keeps the end scheduled here).
  group_catch_up();
  for (const auto& [target, id] : group_.targets) {
    Flow& f = flows_[id];
    if (!f.grouped)
      continue;
    f.grouped = false;
    f.left = std::max(0.0, target - group_.done);
    f.since = now_;
    f.rate = group_.rate;
    schedule(id, now_ + f.left / f.rate);
    note_changed(f);
  }
  end_group();
  stale_ = true;
}

void FluidNetwork::end_group()
{
  for (std::uint32_t l : group_links_) {
    group_count_[l] = 0;
    group_listed_[l] = 0;
  }
  group_links_.clear();
  group_.targets.clear();
  group_.room.clear();
  group_.bounds.clear();
  group_.members = 0;
  group_.active = false;
}

void FluidNetwork::size_group_tables()
{
  if (group_count_.size() < capacity_.size()) {
    group_count_.resize(capacity_.size(), 0);
    group_listed_.resize(capacity_.size(), 0);
  }
}

bool FluidNetwork::solved_before(std::vector<std::size_t>& sharing)
{
  for (std::size_t id : sharing)
    if (flows_[id].tag == 0)
      return false;
  // Sorted by tag; flows of one tag have the same links, penalty and bound (FlowSpec::tag), so their order among
  // themselves changes no rate a fill gives: by id.
  by_tag_.clear();
  for (std::size_t id : sharing)
    by_tag_.emplace_back(flows_[id].tag, id);
  std::sort(by_tag_.begin(), by_tag_.end());
  for (std::size_t i = 0; i < by_tag_.size(); ++i)
    sharing[i] = by_tag_[i].second;
  // Where sets rarely recur (the trees' components on nodes whose NIC many edges cross: 3-6 % found), the lookups and
  // the copies remember() keeps cost more than the fills they save: after a window of lookups with fewer than one in
  // 16 found, the cache is left alone for the next kCacheRest windows' worth of solves, then tried again. A set found
  // has the rates a fill would give it (the same flows, filled in the order of their tags): only time changes.
  if (cache_rest_ > 0) {
    --cache_rest_;
    resting_ = true;
    return false;
  }
  resting_ = false;
  std::vector<std::uint64_t>& tags = tags_;
  tags.clear();
  for (const auto& [tag, id] : by_tag_)
    tags.push_back(tag);
  if (++cache_lookups_ == kCacheWindow) {
    if (16 * cache_hits_ < cache_lookups_)
      cache_rest_ = kCacheRest * kCacheWindow;
    cache_lookups_ = cache_hits_ = 0;
  }
  if (solved_table_.empty())
    return false;
  const std::uint64_t hash = hash_tags(tags);
  for (std::uint32_t at = solved_table_[hash & (solved_table_.size() - 1)]; at != kNone; at = solved_[at].next) {
    const Solved& s = solved_[at];
    if (s.hash != hash || s.size != tags.size() ||
        !std::equal(tags.begin(), tags.end(), solved_tags_.begin() + s.first)) // another set in its slot
      continue;
    for (std::size_t k = 0; k < sharing.size(); ++k)
      flows_[sharing[k]].rate = solved_rates_[s.first + k];
    ++cache_hits_;
    return true;
  }
  return false;
}

void FluidNetwork::remember(const std::vector<std::size_t>& sharing)
{
  if (resting_)
    return; // (solved_before left the cache alone)
  std::vector<std::uint64_t>& tags = tags_;
  tags.clear();
  for (std::size_t id : sharing) {
    if (flows_[id].tag == 0)
      return;
    tags.push_back(flows_[id].tag);
  }
  if (!std::is_sorted(tags.begin(), tags.end()))
    return; // (sorted by solved_before whenever every flow is tagged)
  if (solved_table_.empty())
    solved_table_.assign(2 * kMaxSolved, kNone); // a power of two
  if (solved_.size() == kMaxSolved || solved_tags_.size() + tags.size() > kMaxSolvedTags) {
    // plans of ever new shapes: keep the memory bounded
    std::fill(solved_table_.begin(), solved_table_.end(), kNone);
    solved_.clear();
    solved_tags_.clear();
    solved_rates_.clear();
  }
  const std::uint64_t hash = hash_tags(tags);
  std::uint32_t& head = solved_table_[hash & (solved_table_.size() - 1)];
  solved_.push_back(
      {hash, static_cast<std::uint32_t>(solved_tags_.size()), static_cast<std::uint32_t>(tags.size()), head});
  head = static_cast<std::uint32_t>(solved_.size() - 1);
  solved_tags_.insert(solved_tags_.end(), tags.begin(), tags.end());
  for (std::size_t id : sharing)
    solved_rates_.push_back(flows_[id].rate);
}

std::uint64_t FluidNetwork::hash_tags(const std::vector<std::uint64_t>& tags)
{
  std::uint64_t hash = kFnv1aBasis; // one tag per step
  for (std::uint64_t t : tags)
    hash = fnv1a(hash, t);
  return hash;
}

void FluidNetwork::fill(const std::vector<std::size_t>& sharing, bool partial)
{
  // Progressive filling over the flows past their latency: a common level rises, each unfixed flow taking level /
  // penalty of every link it crosses; the lowest of every link's level at which it is full (what it has left over the
  // sum of its unfixed flows' 1 / penalty) and every flow's own bound (bound x penalty) fixes the flows it limits; the
  // links they cross lose their shares. Levels only rise, so a heap of current levels, stale entries skipped, visits
  // each flow and link a bounded number of times. SimGrid's lmm computes the same allocation (the unique weighted
  // max-min one) by other steps; the two agree to rounding. Scratch arrays are kept between calls (no allocation).
  if (fill_small(sharing, partial))
    return;
  ++fills_;
  held_at_.clear();
  if (++stamp_ == 0) {
    std::fill(link_stamp_.begin(), link_stamp_.end(), 0);
    stamp_ = 1;
  }
  link_stamp_.resize(capacity_.size(), 0);
  link_slot_.resize(capacity_.size(), 0);
  fixed_.resize(flows_.size(), 0);
  links_.clear();
  bounds_.clear();
  for (std::size_t id : sharing) { // the links the sharing flows cross, each with its count of them
    Flow& f = flows_[id];
    f.rate = std::numeric_limits<double>::infinity();
    if (f.bound_binds) // (start())
      bounds_.emplace_back(f.bound * f.penalty, id);
    for (std::uint32_t l : f.links) {
      if (link_stamp_[l] != stamp_) {
        link_stamp_[l] = stamp_;
        link_slot_[l] = static_cast<std::uint32_t>(links_.size());
        links_.push_back({room_left(l, partial), 0.0, 0, 0, l, 0, 0, 0, 0, f.penalty, false});
      }
      FillLink& k = links_[link_slot_[l]];
      k.weights += 1.0 / f.penalty;
      k.mixed = k.mixed || f.penalty != k.penalty;
      ++k.unfixed;
    }
  }
  std::uint32_t at = 0; // each link's flows, one after the other (link_flows_; none for a single's: never read)
  for (FillLink& k : links_) {
    k.first = at;
    at += k.unfixed == 1 ? 0 : k.unfixed;
    k.filled = k.first;
  }
  link_flows_.resize(at);
  // The links by level in a heap that holds each once (its place in `at`, moved as its level rises), the flows'
  // bounds, which never change, sorted: the next event of the filling is the lower of the two fronts, a link's at an
  // equal level, and among links the lower slot at an equal level.
  // A link that one flow crosses once (most of a flow's links: its member's own, its NIC's where no other flow is)
  // stays at the level where that flow alone fills it until the flow is fixed: not on the heap, but one entry per flow
  // (its lowest such link), sorted once, met in the heap's own order (level, then slot).
  // A fill of a few links (most: a neighbourhood is a few flows over their NICs) finds the lowest link by a scan of
  // them all instead: the same order (level, then slot), no heap to build and keep, no singles to sort.
  const bool scan = links_.size() <= scan_links_;
  link_heap_.clear();
  singles_.clear();
  for (std::uint32_t k = 0; k < links_.size(); ++k) {
    FillLink& link = links_[k];
    link.level = link.left / link.weights;
    if (link.unfixed == 1) {
      link.at = kSingle;
      continue;
    }
    link.at = scan ? 0 : static_cast<std::uint32_t>(link_heap_.size()); // (scanned: any place but the two marks)
    if (!scan)
      link_heap_.push_back(k);
  }
  for (std::size_t id : sharing) { // each flow on its links' lists (a single's is never read), and its lowest single
    std::uint32_t lowest = kOffHeap;
    for (std::uint32_t l : flows_[id].links) {
      const std::uint32_t k = link_slot_[l];
      FillLink& link = links_[k];
      if (link.at != kSingle) {
        link_flows_[link.filled++] = id;
        continue;
      }
      link.single = static_cast<std::uint32_t>(id);
      if (!scan && (lowest == kOffHeap || link.level < links_[lowest].level ||
                    (link.level == links_[lowest].level && k < lowest)))
        lowest = k;
    }
    if (lowest != kOffHeap)
      singles_.emplace_back(lowest, id);
  }
  auto before = [this](std::uint32_t a, std::uint32_t b) {
    return links_[a].level < links_[b].level || (links_[a].level == links_[b].level && a < b);
  };
  auto place = [this](std::size_t i, std::uint32_t k) {
    link_heap_[i] = k;
    links_[k].at = static_cast<std::uint32_t>(i);
  };
  auto sift_up = [&](std::size_t i) {
    const std::uint32_t k = link_heap_[i];
    while (i > 0) {
      const std::size_t up = (i - 1) / 2;
      if (!before(k, link_heap_[up]))
        break;
      place(i, link_heap_[up]);
      i = up;
    }
    place(i, k);
  };
  auto sift_down = [&](std::size_t i) {
    const std::uint32_t k = link_heap_[i];
    const std::size_t n = link_heap_.size();
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n)
        break;
      if (c + 1 < n && before(link_heap_[c + 1], link_heap_[c]))
        ++c;
      if (!before(link_heap_[c], k))
        break;
      place(i, link_heap_[c]);
      i = c;
    }
    place(i, k);
  };
  for (std::size_t i = link_heap_.size() / 2; i-- > 0;)
    sift_down(i);
  std::sort(singles_.begin(), singles_.end(),
            [&before](const auto& a, const auto& b) { return before(a.first, b.first); });
  std::size_t next_single = 0;
  std::sort(bounds_.begin(), bounds_.end());
  std::size_t next_bound = 0;
  touched_.clear();
  auto fix = [&](std::size_t id, double level, std::uint32_t neck) { // its links get a new level after the batch
    Flow& f = flows_[id];
    fixed_[id] = 1;
    f.rate = level / f.penalty;
    f.neck = neck;
    for (std::uint32_t l : f.links) {
      FillLink& link = links_[link_slot_[l]];
      if (link.at == kSingle)
        continue; // its only flow: done with it
      link.left -= f.rate;
      --link.unfixed;
      if (!link.mixed) // one penalty: the sum exactly
        link.weights = double(link.unfixed) / link.penalty;
      else
        link.weights -= 1.0 / f.penalty;
      touched_.push_back(link_slot_[l]);
    }
  };
  std::uint32_t batch = 0;
  auto renew = [&] { // one entry per link the batch changed, at its new level
    ++batch;
    for (std::uint32_t k : touched_) {
      FillLink& link = links_[k];
      if (link.unfixed == 0 || link.renewed == batch)
        continue;
      link.renewed = batch;
      if (link.mixed && !(link.weights > 0)) { // subtraction cancelled: the sum afresh
        link.weights = 0;
        for (std::uint32_t j = link.first; j < link.filled; ++j)
          if (!fixed_[link_flows_[j]])
            link.weights += 1.0 / flows_[link_flows_[j]].penalty;
      }
      const double was = link.level;
      link.level = std::max(link.left, 0.0) / link.weights;
      if (scan)
        continue;
      if (link.level < was) // (rounding: it only rises)
        sift_up(link.at);
      else
        sift_down(link.at);
    }
    touched_.clear();
  };
  // The lowest link with a flow left (kOffHeap: none), in the order (level, then the lower slot at an equal level): a
  // single is left until its flow is fixed, another link until all of its flows are (they are fixed all at once when
  // it is the lowest, so it is never met again). Scanned: every link. Otherwise the heap's front (those whose flows
  // others fixed taken off) or the next single, a flow's lowest: its others lie above it, so a scan meets it first too.
  auto lowest_link = [&]() -> std::uint32_t {
    if (scan) {
      std::uint32_t which = kOffHeap;
      for (std::uint32_t k = 0; k < links_.size(); ++k) {
        const FillLink& link = links_[k];
        if (link.at == kSingle ? fixed_[link.single] != 0 : link.unfixed == 0)
          continue;
        if (which == kOffHeap || link.level < links_[which].level) // (an equal level: the lower slot, met first)
          which = k;
      }
      return which;
    }
    while (next_single < singles_.size() && fixed_[singles_[next_single].second])
      ++next_single;
    while (!link_heap_.empty() && links_[link_heap_.front()].unfixed == 0) { // its flows fixed: off the heap
      const std::uint32_t last = link_heap_.back();
      link_heap_.pop_back();
      if (!link_heap_.empty()) {
        link_heap_.front() = last;
        sift_down(0);
      }
    }
    if (next_single < singles_.size() &&
        (link_heap_.empty() || before(singles_[next_single].first, link_heap_.front())))
      return singles_[next_single].first;
    return link_heap_.empty() ? kOffHeap : link_heap_.front();
  };
  for (;;) {
    while (next_bound < bounds_.size() && fixed_[bounds_[next_bound].second])
      ++next_bound;
    const std::uint32_t which = lowest_link();
    if (next_bound < bounds_.size() && (which == kOffHeap || bounds_[next_bound].first < links_[which].level)) {
      const auto [at, id] = bounds_[next_bound++]; // a flow's own bound first
      fix(id, std::max(at, 0.0), kBound);
      renew();
      continue;
    }
    if (which == kOffHeap)
      break;
    FillLink& link = links_[which];
    const double level = std::max(link.level, 0.0); // rounding may leave a link a hair below zero
    if (link.at == kSingle)
      fix(link.single, level, link.id);
    else // (then every flow on it is fixed: lowest_link() takes it off the heap)
      for (std::uint32_t k = link.first; k < link.filled; ++k)
        if (!fixed_[link_flows_[k]])
          fix(link_flows_[k], level, link.id);
    renew();
  }
  for (std::size_t id : sharing)
    fixed_[id] = 0;
}

double FluidNetwork::room_left(std::uint32_t l, bool partial)
{
  double left = capacity_[l];
  if (!partial)
    return left;
  bool held = false; // the shares of the flows outside the set, in the order of the link's list
  for (const auto& [g, at] : on_link_[l])
    if (flows_[g].seen != seen_stamp_) {
      left -= flows_[g].rate;
      held = true;
    }
  if (held)
    held_at_.push_back(l);
  return left;
}

bool FluidNetwork::fill_small(const std::vector<std::size_t>& sharing, bool partial)
{
  // fill() on a few links (a scanned fill): the links numbered in the order the set's flows first cross them (fill()'s
  // slots), each flow's crossings kept as those numbers, so that fill()'s own tables by link and flow id (link_stamp_,
  // link_slot_, fixed_; a cache miss each in a large world) and its vectors are not used. Every sum, level and choice
  // is fill()'s, made in its order: the same shares and necks to the bit (the order of the sums decides their
  // rounding).
  const std::size_t n = sharing.size();
  const std::size_t most = std::min({scan_links_, small_links_, kSmallLinksMost});
  if (n > kSmallFlows || most == 0)
    return false;
  std::uint32_t ids[kSmallLinksMost];
  std::uint8_t cross[kSmallCrossings]; // the flows' crossings, flow after flow, each its link's number
  std::uint8_t first[kSmallFlows + 1]; // flow i's: cross[first[i], first[i + 1])
  std::size_t links = 0, crossings = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Flow& f = flows_[sharing[i]];
    first[i] = static_cast<std::uint8_t>(crossings);
    if (crossings + f.links.size() > kSmallCrossings)
      return false;
    for (const std::uint32_t l : f.links) {
      std::size_t k = 0;
      while (k < links && ids[k] != l)
        ++k;
      if (k == links) {
        if (links == most)
          return false; // fill()'s (nothing set yet)
        ids[links++] = l;
      }
      cross[crossings++] = static_cast<std::uint8_t>(k);
    }
  }
  first[n] = static_cast<std::uint8_t>(crossings);
  static_assert(kSmallCrossings <= 255 && kSmallFlows < 255 && kSmallLinksMost <= 32, "fill_small's numbers fit");
  constexpr std::uint8_t kMany = 255; // single[k]: more than one crossing
  ++fills_;
  ++small_fills_;
  held_at_.clear();
  double left[kSmallLinksMost], weights[kSmallLinksMost], level[kSmallLinksMost], penalty[kSmallLinksMost];
  std::uint32_t unfixed[kSmallLinksMost];
  std::uint8_t single[kSmallLinksMost]; // the flow of a link one flow crosses once (fill()'s kSingle), else kMany
  bool mixed[kSmallLinksMost];
  for (std::size_t k = 0; k < links; ++k) {
    left[k] = room_left(ids[k], partial);
    weights[k] = 0.0;
    unfixed[k] = 0;
    mixed[k] = false;
  }
  struct Bound {
    double at;
    std::size_t id;
    std::uint8_t i;
  };
  Bound bounds[kSmallFlows];
  std::size_t n_bounds = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Flow& f = flows_[sharing[i]];
    f.rate = std::numeric_limits<double>::infinity();
    if (f.bound_binds)
      bounds[n_bounds++] = {f.bound * f.penalty, sharing[i], static_cast<std::uint8_t>(i)};
    for (std::size_t c = first[i]; c < first[i + 1]; ++c) {
      const std::uint8_t k = cross[c];
      if (unfixed[k] == 0)
        penalty[k] = f.penalty; // its first flow's
      weights[k] += 1.0 / f.penalty;
      mixed[k] = mixed[k] || f.penalty != penalty[k];
      single[k] = unfixed[k] == 0 ? static_cast<std::uint8_t>(i) : kMany;
      ++unfixed[k];
    }
  }
  for (std::size_t k = 0; k < links; ++k)
    level[k] = left[k] / weights[k];
  std::sort(bounds, bounds + n_bounds,
            [](const Bound& a, const Bound& b) { return a.at < b.at || (a.at == b.at && a.id < b.id); });
  bool fixed[kSmallFlows] = {};
  std::uint32_t touched = 0; // a bit per link whose flows a batch fixed
  auto fix = [&](std::size_t i, double at, std::uint32_t neck) {
    Flow& f = flows_[sharing[i]];
    fixed[i] = true;
    f.rate = at / f.penalty;
    f.neck = neck;
    for (std::size_t c = first[i]; c < first[i + 1]; ++c) {
      const std::uint8_t k = cross[c];
      if (single[k] != kMany)
        continue; // its only flow: done with it
      left[k] -= f.rate;
      --unfixed[k];
      if (!mixed[k])
        weights[k] = double(unfixed[k]) / penalty[k];
      else
        weights[k] -= 1.0 / f.penalty;
      touched |= 1u << k;
    }
  };
  auto renew = [&] { // each link the batch changed, at its new level (fill(): no heap, the order does not matter)
    for (; touched != 0; touched &= touched - 1) {
      const auto k = static_cast<std::size_t>(__builtin_ctz(touched));
      if (unfixed[k] == 0)
        continue;
      if (mixed[k] && !(weights[k] > 0)) { // subtraction cancelled: the sum afresh, in fill()'s order
        weights[k] = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (!fixed[i])
            for (std::size_t c = first[i]; c < first[i + 1]; ++c)
              if (cross[c] == k)
                weights[k] += 1.0 / flows_[sharing[i]].penalty;
      }
      level[k] = std::max(left[k], 0.0) / weights[k];
    }
  };
  std::size_t next_bound = 0;
  for (;;) {
    while (next_bound < n_bounds && fixed[bounds[next_bound].i])
      ++next_bound;
    std::size_t which = kSmallLinksMost; // the lowest link with a flow left, the lower number at an equal level
    for (std::size_t k = 0; k < links; ++k) {
      if (single[k] != kMany ? fixed[single[k]] : unfixed[k] == 0)
        continue;
      if (which == kSmallLinksMost || level[k] < level[which])
        which = k;
    }
    if (next_bound < n_bounds && (which == kSmallLinksMost || bounds[next_bound].at < level[which])) {
      const Bound& b = bounds[next_bound++]; // a flow's own bound first
      fix(b.i, std::max(b.at, 0.0), kBound);
      renew();
      continue;
    }
    if (which == kSmallLinksMost)
      break;
    const double at = std::max(level[which], 0.0); // rounding may leave a link a hair below zero
    const auto neck = ids[which];
    if (single[which] != kMany)
      fix(single[which], at, neck);
    else // every flow on it, in fill()'s order (the set's)
      for (std::size_t i = 0; i < n; ++i)
        if (!fixed[i])
          for (std::size_t c = first[i]; c < first[i + 1]; ++c)
            if (cross[c] == which) {
              fix(i, at, neck);
              break;
            }
    renew();
  }
  return true;
}

void SimClock::at(double t, std::size_t who, int what)
{
  heap_.emplace_back(t, made_++, who, what);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void SimClock::sleep(double now, double d, std::size_t who, int what)
{
  const double length = std::max(d, FluidNetwork::kSimultaneous);
  if (sleeping_.push(length, Event{now + length, made_, who, what}, now + length))
    ++made_;
  else
    at(now + length, who, what);
}

double SimClock::next_time(FluidNetwork& net) const
{
  double mine = heap_.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(heap_.front());
  mine = std::min(mine, sleeping_.earliest());
  return std::min(mine, net.next_event());
}

bool SimClock::next(FluidNetwork& net, double& now)
{
  const double t = next_time(net);
  if (!std::isfinite(t))
    return false;
  net.step(t);
  now = t;
  return true;
}

void SimClock::due(double now, std::vector<std::pair<std::size_t, int>>& out)
{
  out.clear();
  due_.clear();
  const double until = now + FluidNetwork::kSimultaneous;
  while (!heap_.empty() && std::get<0>(heap_.front()) <= until) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    due_.push_back(heap_.back());
    heap_.pop_back();
  }
  sleeping_.take_until(
      until, [](const Event& e) { return std::get<0>(e); }, [this](const Event& e) { due_.push_back(e); });
  std::sort(due_.begin(), due_.end()); // in order of time, then of making, as one heap would give them
  for (const Event& e : due_)
    out.emplace_back(std::get<2>(e), std::get<3>(e));
}

} // namespace ddlsim::analytical
