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
  for (std::uint32_t l : spec.links)
    if (l >= capacity_.size() || capacity_[l] == 0)
      throw Error("internal: FluidNetwork::start got a link without a capacity");
  progress(now);
  std::size_t id = flows_.size();
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.links.assign(spec.links.begin(), spec.links.end());
  f.penalty = spec.penalty;
  f.bound = spec.bound;
  f.tag = spec.tag;
  // No latency: it shares from now (no event of its own, as in SimGrid, where only a latency ends as an event).
  const bool sharing = spec.latency_s == 0 && spec.work > 0 && (!f.links.empty() || spec.bound > 0);
  f.state = sharing ? State::Sharing : State::Latency;
  f.shares_at = now + spec.latency_s;
  f.left = spec.work;
  f.rate = 0;
  f.end = 0;
  live_.push_back(id);
  stale_ = true;
  return id;
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
  if (!live_.empty())
    throw Error("internal: FluidNetwork::restart with flows in flight");
  flows_.clear();
  free_.clear();
  finished_.clear();
  now_ = 0;
  stale_ = false;
}

void FluidNetwork::progress(double t)
{
  if (!(t > now_))
    return;
  for (std::size_t id : live_) {
    Flow& f = flows_[id];
    if (f.state == State::Sharing && std::isfinite(f.rate))
      f.left = std::max(0.0, f.left - f.rate * (t - now_));
  }
  now_ = t;
}

double FluidNetwork::next_event()
{
  if (stale_)
    solve();
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t id : live_) {
    const Flow& f = flows_[id];
    if (f.state == State::Latency)
      next = std::min(next, f.shares_at);
    else if (f.rate > 0)
      next = std::min(next, std::isfinite(f.rate) ? now_ + f.left / f.rate : now_);
  }
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
  progress(t);
  return any;
}

bool FluidNetwork::step(double t)
{
  finished_.clear();
  const double e = next_event(); // the shares, solved
  if (t < now_ || t > e)
    throw Error("internal: FluidNetwork::step needs a time between the time advanced to and the next event");
  if (!(e <= t + kSimultaneous)) {
    progress(t);
    return false;
  }
  happen(t);
  return true;
}

void FluidNetwork::happen(double e)
{
  progress(e);
  const double until = e + kSimultaneous;
  for (std::size_t id : live_) { // every event up to `until` happens now (SimGrid: surf/precision)
    Flow& f = flows_[id];
    if (f.state == State::Latency && f.shares_at <= until) {
      f.state = State::Sharing;
      f.rate = 0;
      if (f.left <= 0 || (f.links.empty() && !(f.bound > 0))) { // nothing to share, or nothing limits it
        f.state = State::Done;
        f.end = e;
        finished_.push_back(id);
      }
    } else if (f.state == State::Sharing && f.rate > 0 && (!std::isfinite(f.rate) || now_ + f.left / f.rate <= until)) {
      f.state = State::Done;
      f.left = 0;
      f.end = e;
      finished_.push_back(id);
    }
  }
  live_.erase(
      std::remove_if(live_.begin(), live_.end(), [this](std::size_t id) { return flows_[id].state == State::Done; }),
      live_.end());
  stale_ = true;
}

void FluidNetwork::solve()
{
  stale_ = false;
  std::vector<std::size_t>& sharing = sharing_; // scratch kept between calls: solve() runs at every event
  sharing.clear();
  for (std::size_t id : live_)
    if (flows_[id].state == State::Sharing)
      sharing.push_back(id);
  if (sharing.empty())
    return;
  if (!by_components_) { // the set as one: a plan's recurring steps (mirrored lanes' hd) hit as a whole
    if (!solved_before(sharing)) {
      fill(sharing);
      remember(sharing);
    }
    return;
  }
  // Components: flows joined by the links they share. The max-min shares of one never depend on another's, so each is
  // filled (or found computed) alone: a set of flows in flight rarely recurs, its components, a few flows at one
  // member's links, do.
  const std::size_t n = sharing.size();
  std::vector<std::uint32_t>& parent = component_parent_;
  parent.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    parent[i] = static_cast<std::uint32_t>(i);
  auto root = [&parent](std::uint32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  if (first_on_link_.size() < capacity_.size()) {
    first_on_link_.resize(capacity_.size(), 0);
    link_seen_.resize(capacity_.size(), 0);
  }
  if (++seen_stamp_ == 0) { // wrapped: every stamp seen so far is old
    std::fill(link_seen_.begin(), link_seen_.end(), 0u);
    seen_stamp_ = 1;
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t l : flows_[sharing[i]].links) {
      if (link_seen_[l] != seen_stamp_) {
        link_seen_[l] = seen_stamp_;
        first_on_link_[l] = static_cast<std::uint32_t>(i);
      } else {
        parent[root(static_cast<std::uint32_t>(i))] = root(first_on_link_[l]);
      }
    }
  std::vector<std::pair<std::uint32_t, std::size_t>>& by_root = by_root_;
  by_root.clear();
  for (std::size_t i = 0; i < n; ++i)
    by_root.emplace_back(root(static_cast<std::uint32_t>(i)), sharing[i]);
  std::stable_sort(by_root.begin(), by_root.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t>& component = component_;
  for (std::size_t k = 0; k < n;) {
    component.clear();
    const std::uint32_t r = by_root[k].first;
    for (; k < n && by_root[k].first == r; ++k)
      component.push_back(by_root[k].second);
    solve_component(component);
  }
}

bool FluidNetwork::solved_before(std::vector<std::size_t>& sharing)
{
  for (std::size_t id : sharing)
    if (flows_[id].tag == 0)
      return false;
  std::stable_sort(sharing.begin(), sharing.end(),
                   [this](std::size_t a, std::size_t b) { return flows_[a].tag < flows_[b].tag; });
  std::vector<std::uint64_t>& tags = tags_;
  tags.clear();
  for (std::size_t id : sharing)
    tags.push_back(flows_[id].tag);
  const auto found = solved_.find(hash_tags(tags)); // find: a miss adds no empty entry
  if (found == solved_.end())
    return false;
  for (const Solved& s : found->second) {
    if (s.tags != tags) // another set whose hash is the same
      continue;
    for (std::size_t k = 0; k < sharing.size(); ++k)
      flows_[sharing[k]].rate = s.rates[k];
    return true;
  }
  return false;
}

void FluidNetwork::remember(const std::vector<std::size_t>& sharing)
{
  std::vector<std::uint64_t>& tags = tags_;
  tags.clear();
  for (std::size_t id : sharing) {
    if (flows_[id].tag == 0)
      return;
    tags.push_back(flows_[id].tag);
  }
  if (!std::is_sorted(tags.begin(), tags.end()))
    return;                           // (sorted by solved_before whenever every flow is tagged)
  if (++solved_count_ > kMaxSolved) { // plans of ever new shapes: keep the memory bounded
    solved_.clear();
    solved_count_ = 1;
  }
  Solved s;
  s.tags = tags;
  for (std::size_t id : sharing)
    s.rates.push_back(flows_[id].rate);
  solved_[hash_tags(tags)].push_back(std::move(s));
}

void FluidNetwork::solve_component(std::vector<std::size_t>& sharing)
{
  if (solved_before(sharing))
    return;
  fill(sharing);
  remember(sharing);
}

std::uint64_t FluidNetwork::hash_tags(const std::vector<std::uint64_t>& tags)
{
  std::uint64_t hash = kFnv1aBasis; // one tag per step
  for (std::uint64_t t : tags)
    hash = fnv1a(hash, t);
  return hash;
}

void FluidNetwork::fill(const std::vector<std::size_t>& sharing)
{
  // Progressive filling over the flows past their latency: a common level rises, each unfixed flow taking level /
  // penalty of every link it crosses; the lowest of every link's level at which it is full (what it has left over the
  // sum of its unfixed flows' 1 / penalty) and every flow's own bound (bound x penalty) fixes the flows it limits; the
  // links they cross lose their shares. Levels only rise, so a heap of current levels, stale entries skipped, visits
  // each flow and link a bounded number of times. SimGrid's lmm computes the same allocation (the unique weighted
  // max-min one) by other steps; the two agree to rounding. Scratch arrays are kept between calls (no allocation).
  ++fills_;
  if (++stamp_ == 0) {
    std::fill(link_stamp_.begin(), link_stamp_.end(), 0);
    stamp_ = 1;
  }
  link_stamp_.resize(capacity_.size(), 0);
  link_slot_.resize(capacity_.size(), 0);
  fixed_.resize(flows_.size(), 0);
  links_.clear();
  for (std::size_t id : sharing) { // the links the sharing flows cross, each with its count of them
    Flow& f = flows_[id];
    f.rate = std::numeric_limits<double>::infinity();
    for (std::uint32_t l : f.links) {
      if (link_stamp_[l] != stamp_) {
        link_stamp_[l] = stamp_;
        link_slot_[l] = static_cast<std::uint32_t>(links_.size());
        links_.push_back({capacity_[l], 0.0, 0, 0, 0, 0, 0, f.penalty, false});
      }
      FillLink& k = links_[link_slot_[l]];
      k.weights += 1.0 / f.penalty;
      k.mixed = k.mixed || f.penalty != k.penalty;
      ++k.unfixed;
    }
  }
  std::uint32_t at = 0; // each link's flows, one after the other (link_flows_)
  for (FillLink& k : links_) {
    k.first = at;
    at += k.unfixed;
    k.filled = k.first;
  }
  link_flows_.resize(at);
  for (std::size_t id : sharing)
    for (std::uint32_t l : flows_[id].links)
      link_flows_[links_[link_slot_[l]].filled++] = id;
  heap_.clear();
  auto push = [this](const Entry& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  };
  for (std::size_t k = 0; k < links_.size(); ++k)
    push(Entry{links_[k].left / links_[k].weights, 0, k, 0});
  for (std::size_t id : sharing)
    if (flows_[id].bound > 0)
      push(Entry{flows_[id].bound * flows_[id].penalty, 1, id, 0});
  touched_.clear();
  auto fix = [&](std::size_t id, double level) { // the links it crosses get a new level once the batch is fixed
    Flow& f = flows_[id];
    fixed_[id] = 1;
    f.rate = level / f.penalty;
    for (std::uint32_t l : f.links) {
      FillLink& link = links_[link_slot_[l]];
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
      push(Entry{std::max(link.left, 0.0) / link.weights, 0, k, ++link.version});
    }
    touched_.clear();
  };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    const Entry e = heap_.back();
    heap_.pop_back();
    const double level = std::max(std::get<0>(e), 0.0); // rounding may leave a link a hair below zero
    const std::size_t which = std::get<2>(e);
    if (std::get<1>(e) == 1) {
      if (!fixed_[which]) {
        fix(which, level);
        renew();
      }
      continue;
    }
    const FillLink& link = links_[which];
    if (std::get<3>(e) != link.version || link.unfixed == 0)
      continue;
    for (std::uint32_t k = link.first; k < link.filled; ++k)
      if (!fixed_[link_flows_[k]])
        fix(link_flows_[k], level);
    renew();
  }
  for (std::size_t id : sharing)
    fixed_[id] = 0;
}

void SimClock::at(double t, std::size_t who, int what)
{
  heap_.emplace_back(t, made_++, who, what);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

bool SimClock::next(FluidNetwork& net, double& now)
{
  const double mine = heap_.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(heap_.front());
  const double t = std::min(mine, net.next_event());
  if (!std::isfinite(t))
    return false;
  net.step(t);
  now = t;
  return true;
}

void SimClock::due(double now, std::vector<std::pair<std::size_t, int>>& out)
{
  out.clear();
  while (!heap_.empty() && std::get<0>(heap_.front()) <= now + FluidNetwork::kSimultaneous) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    out.emplace_back(std::get<2>(heap_.back()), std::get<3>(heap_.back()));
    heap_.pop_back();
  }
}

} // namespace ddlsim::analytical
