// Programs over images: the classes of links of transfers that map onto each other, and the lanes' program whose
// representatives run for their images (RdStream, HierRdStream).
#include "analytical/fluid_network.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

namespace ddlsim::collectives {

ImageClasses image_classes(const std::vector<std::vector<const CommWorld::Route*>>& routes)
{
  ImageClasses c;
  std::uint32_t links = 0;
  for (const auto& images : routes)
    for (const CommWorld::Route* r : images)
      for (std::uint32_t id : r->shared_ids)
        links = std::max(links, id + 1);
  // Union-find (path halving): a representative's route's k-th link and each image's k-th, joined.
  std::vector<std::uint32_t> parent(links);
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&parent](std::uint32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& images : routes)
    for (std::size_t j = 1; j < images.size(); ++j)
      for (std::size_t k = 0; k < images[0]->shared_ids.size(); ++k)
        parent[root(images[j]->shared_ids[k])] = root(images[0]->shared_ids[k]);
  // Per class: its links (each counted once) and their bandwidth. A route crosses a class at most once (checked
  // below), so each of its links carries images / links of every representative's transfer that crosses the class (the
  // translations map the class's links onto each other alike: orbit and stabiliser).
  std::unordered_map<std::uint32_t, std::uint32_t> class_of; // root -> class
  std::vector<std::uint32_t> size;
  std::vector<char> seen(links, 0);
  for (const auto& images : routes)
    for (const CommWorld::Route* r : images)
      for (std::size_t k = 0; k < r->shared_ids.size(); ++k) {
        const std::uint32_t id = r->shared_ids[k];
        auto [it, fresh] = class_of.emplace(root(id), static_cast<std::uint32_t>(size.size()));
        if (fresh) {
          size.push_back(0);
          c.capacity.push_back(r->shared_bandwidth[k]);
        }
        if (!seen[id]) {
          seen[id] = 1;
          ++size[it->second];
        }
      }
  const double images = routes.empty() ? 1.0 : double(routes.front().size());
  for (std::size_t x = 0; x < size.size(); ++x)
    c.capacity[x] = c.capacity[x] * double(size[x]) / images;
  for (const auto& r : routes) {
    c.classes.emplace_back();
    for (std::uint32_t id : r[0]->shared_ids) {
      const std::uint32_t x = class_of.at(root(id));
      if (std::find(c.classes.back().begin(), c.classes.back().end(), x) != c.classes.back().end())
        return c; // a route through two links of one class
      c.classes.back().push_back(x);
    }
  }
  c.exact = true;
  return c;
}

ImageStream::ImageStream(Group& group, std::size_t reps, std::size_t images, analytical::FluidNetwork& net,
                         const char* name, const char* unit)
    : world_(group.world())
    , o_(group.options())
    , members_(static_cast<std::size_t>(group.size()))
    , reps_(reps)
    , images_(images)
    , net_(net)
    , name_(name)
    , unit_(unit)
{
}

bool ImageStream::set_lanes(const std::vector<int>& channels)
{
  channels_ = channels;
  queues_.reset(channels.size(), members_);
  net_.restart(); // (no flow in flight: a plan of one aggregation runs to its end)
  clock_ = analytical::SimClock{};
  now_ = 0;
  reset_lanes();
  return true;
}

void ImageStream::give(int lane, int member, std::uint64_t bytes, double ready_s)
{
  const std::size_t l = static_cast<std::size_t>(lane), m = static_cast<std::size_t>(member);
  if (l >= channels_.size() || m >= members_)
    throw Error(std::string("internal: ") + name_ + " given an aggregation of another group or lane");
  const std::size_t mi = l * members_ + m;
  queues_.size_next(mi, bytes, call_cost_s(bytes), name_);
  const std::size_t rep = representative_of(m);
  if (queues_.give(mi, ready_s, now_) && rep < reps_) // an image starts with its representative (start_images)
    schedule(l, rep);
}

std::size_t ImageStream::run(const std::vector<char>& open, std::vector<Ended>& ended)
{
  open_ = &open;
  ended_ = &ended;
  stop_ = false;
  const std::size_t steps = run_clock(
      clock_, net_, now_, stop_,
      [this](std::size_t id) {
        const InFlight f = flight_[id];
        flight_[id].start = std::numeric_limits<double>::infinity(); // (landed: floor_s)
        net_.release(id);
        landed(f);
      },
      [this](std::size_t who, int what) { wake(who / reps_, who % reps_, what); });
  open_ = nullptr;
  ended_ = nullptr;
  return steps;
}

double ImageStream::floor_s() const
{
  double floor = now_;
  for (const InFlight& f : flight_) // (the flows of one block or node: a few per representative)
    floor = std::min(floor, f.start);
  return floor;
}

std::size_t ImageStream::start_images(std::size_t l, std::size_t rep)
{
  const std::size_t k = k_of(l, rep);
  queues_.started(l * members_ + image_of(rep, 0), now_);
  for (std::size_t j = 1; j < images_; ++j) {
    const std::size_t mi = l * members_ + image_of(rep, j);
    if (queues_.at(mi).given <= k || queues_.start_at(mi, now_) != now_)
      throw Error(std::string("internal: ") + name_ + " needs every " + unit_ + " to start as " + unit_ + " 0 does");
    queues_.started(mi, now_);
  }
  return k;
}

void ImageStream::end_images(std::size_t l, std::size_t rep)
{
  bool next = false;
  for (std::size_t j = 0; j < images_; ++j) {
    const bool more =
        queues_.end(l * members_ + image_of(rep, j), now_, open_, watched_lane_, watched_k_, ended_, stop_);
    next = next || (j == 0 && more);
  }
  if (next)
    schedule(l, rep);
}

void ImageStream::after(double d, std::size_t l, std::size_t rep, int what)
{
  if (d > 0)
    clock_.sleep(now_, d, l * reps_ + rep, what);
  else
    wake(l, rep, what);
}

void ImageStream::start_transfer(const InFlight& f, const std::vector<std::uint32_t>& classes, double latency_s,
                                 double bandwidth, std::uint64_t bytes)
{
  analytical::FluidNetwork::FlowSpec spec;
  spec.links = classes;
  set_cm02(spec, o_.stack, latency_s, bandwidth, double(bytes), double(bytes));
  spec.tag = f.slot + 1;
  const std::size_t id = net_.start(now_, spec);
  world_.note_computed(1);
  if (flight_.size() <= id)
    flight_.resize(id + 1);
  flight_[id] = f;
}

void ImageStream::report_images(const InFlight& f, const std::vector<Flow>& flows,
                                const std::vector<const CommWorld::Route*>& routes, const CommWorld::LinkFlows& links)
{
  ends_.assign(flows.size(), now_);
  world_.account_batch(flows, f.start, ends_, routes, links, channels_[f.lane]);
  note_reported(flows.size());
}

void ImageStream::schedule(std::size_t l, std::size_t rep)
{
  clock_.at(queues_.start_at(l * members_ + image_of(rep, 0), now_), l * reps_ + rep, kStart);
}

} // namespace ddlsim::collectives
