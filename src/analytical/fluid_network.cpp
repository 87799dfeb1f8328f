#include "analytical/fluid_network.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
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

std::size_t FluidNetwork::start(double now, FlowSpec spec)
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
  f.spec = std::move(spec);
  f.state = State::Latency;
  f.shares_at = now + f.spec.latency_s;
  f.left = f.spec.work;
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
  flows_[id].spec.links.clear();
  free_.push_back(id);
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
  for (;;) {
    const double e = next_event();
    if (!(e <= t))
      break;
    progress(e);
    const double until = e + kSimultaneous;
    for (std::size_t id : live_) { // every event up to `until` happens now (SimGrid: surf/precision)
      Flow& f = flows_[id];
      if (f.state == State::Latency && f.shares_at <= until) {
        f.state = State::Sharing;
        f.rate = 0;
        if (f.left <= 0 || (f.spec.links.empty() && !(f.spec.bound > 0))) { // nothing to share, or nothing limits it
          f.state = State::Done;
          f.end = e;
        }
      } else if (f.state == State::Sharing && f.rate > 0 &&
                 (!std::isfinite(f.rate) || now_ + f.left / f.rate <= until)) {
        f.state = State::Done;
        f.left = 0;
        f.end = e;
      }
    }
    live_.erase(
        std::remove_if(live_.begin(), live_.end(), [this](std::size_t id) { return flows_[id].state == State::Done; }),
        live_.end());
    stale_ = true;
    any = true;
  }
  progress(t);
  return any;
}

void FluidNetwork::solve()
{
  stale_ = false;
  std::vector<std::size_t> sharing;
  bool tagged = true;
  for (std::size_t id : live_)
    if (flows_[id].state == State::Sharing) {
      sharing.push_back(id);
      tagged = tagged && flows_[id].spec.tag != 0;
    }
  if (!tagged || sharing.empty()) {
    fill(sharing);
    return;
  }
  std::stable_sort(sharing.begin(), sharing.end(),
                   [this](std::size_t a, std::size_t b) { return flows_[a].spec.tag < flows_[b].spec.tag; });
  std::vector<std::uint64_t> tags;
  tags.reserve(sharing.size());
  for (std::size_t id : sharing)
    tags.push_back(flows_[id].spec.tag);
  const std::uint64_t hash = hash_tags(tags);
  for (const Solved& s : solved_[hash]) {
    if (s.tags != tags) // another set whose hash is the same
      continue;
    for (std::size_t k = 0; k < sharing.size(); ++k)
      flows_[sharing[k]].rate = s.rates[k];
    return;
  }
  fill(sharing);
  if (++solved_count_ > kMaxSolved) { // plans of ever new shapes: keep the memory bounded
    solved_.clear();
    solved_count_ = 1;
  }
  Solved s;
  s.tags = std::move(tags);
  for (std::size_t id : sharing)
    s.rates.push_back(flows_[id].rate);
  solved_[hash].push_back(std::move(s));
}

std::uint64_t FluidNetwork::hash_tags(const std::vector<std::uint64_t>& tags)
{
  std::uint64_t hash = 1469598103934665603ULL; // FNV-1a, one tag per step
  for (std::uint64_t t : tags) {
    hash ^= t;
    hash *= 1099511628211ULL;
  }
  return hash;
}

void FluidNetwork::fill(const std::vector<std::size_t>& sharing)
{
  // Progressive filling over the flows past their latency: a common level rises, each unfixed flow taking level /
  // penalty of every link it crosses; the lowest of every link's level at which it is full (what it has left over the
  // sum of its unfixed flows' 1 / penalty) and every flow's own bound (bound x penalty) fixes the flows it limits; the
  // links they cross lose their shares. Levels only rise, so a heap of current levels, stale entries skipped, visits
  // each flow and link a bounded number of times. SimGrid's lmm computes the same allocation (the unique weighted
  // max-min one) by other steps; the two agree to rounding.
  struct Link {
    double left = 0;
    double weights = 0; ///< sum of 1 / penalty over its unfixed flows
    std::size_t unfixed = 0;
    std::uint32_t version = 0;
    std::vector<std::size_t> flows;
  };
  std::vector<Link> links;
  std::vector<std::size_t> index(capacity_.size(), std::numeric_limits<std::size_t>::max());
  for (std::size_t id : sharing) {
    Flow& f = flows_[id];
    f.rate = std::numeric_limits<double>::infinity();
    for (std::uint32_t l : f.spec.links) {
      if (index[l] == std::numeric_limits<std::size_t>::max()) {
        index[l] = links.size();
        links.emplace_back();
        links.back().left = capacity_[l];
      }
      Link& k = links[index[l]];
      k.weights += 1.0 / f.spec.penalty;
      ++k.unfixed;
      k.flows.push_back(id);
    }
  }
  using Entry = std::tuple<double, int, std::size_t, std::uint32_t>; // level, 0 link / 1 flow, index, version
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (std::size_t k = 0; k < links.size(); ++k)
    heap.emplace(links[k].left / links[k].weights, 0, k, 0);
  for (std::size_t id : sharing)
    if (flows_[id].spec.bound > 0)
      heap.emplace(flows_[id].spec.bound * flows_[id].spec.penalty, 1, id, 0);
  std::vector<char> fixed(flows_.size(), 0);
  auto fix = [&](std::size_t id, double level) {
    Flow& f = flows_[id];
    fixed[id] = 1;
    f.rate = level / f.spec.penalty;
    for (std::uint32_t l : f.spec.links) {
      const std::size_t k = index[l];
      Link& link = links[k];
      link.left -= f.rate;
      link.weights -= 1.0 / f.spec.penalty;
      if (--link.unfixed > 0)
        heap.emplace(std::max(link.left, 0.0) / std::max(link.weights, std::numeric_limits<double>::min()), 0, k,
                     ++link.version);
    }
  };
  while (!heap.empty()) {
    const auto [level, kind, which, version] = heap.top();
    heap.pop();
    const double at = std::max(level, 0.0); // rounding may leave a link a hair below zero
    if (kind == 1) {
      if (!fixed[which])
        fix(which, at);
      continue;
    }
    Link& link = links[which];
    if (version != link.version || link.unfixed == 0)
      continue;
    const std::vector<std::size_t> through = link.flows; // fix() changes the link's count, not its list
    for (std::size_t id : through)
      if (!fixed[id])
        fix(id, at);
  }
}

} // namespace ddlsim::analytical
