// The endpoints of a phase, their point-to-point transfers, and the algorithm factory.
#include "collectives/collective.hpp"

#include "analytical/fluid_network.hpp"
#include "analytical/processor_sharing.hpp"

#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/simix.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

namespace sg4 = simgrid::s4u;

namespace ddlsim::collectives {
namespace {

/** While CommWorld::post starts a flow that stands for messages of another size (Flow::message_bytes), that size:
 *  SimGrid's network model calls the factor callbacks from inside the start, in the kernel, where no other actor runs
 *  in between. Negative: the transfer's own size. */
double g_message_bytes = -1;

/** The message size a transfer of `size` bytes stands for (g_message_bytes). */
double message(double size)
{
  return g_message_bytes >= 0 ? g_message_bytes : size;
}

/** The stack's size factors as SimGrid's per-message factor callbacks: SMPI's own mechanism (smpi/lat-factor,
 *  smpi/bw-factor), applied by the network model to every transfer (SimGrid 3.32 src/surf/network_cm02.cpp,
 *  comm_action_set_bounds: the latency times the latency factor; the bandwidth factor scales the transfer's progress
 *  over the bandwidth it gets). Nothing is installed for an empty list, so the ideal stack keeps the exact model. */
void install_factors(const StackProfile& stack)
{
  if (stack.latency_factor.empty() && stack.bandwidth_factor.empty())
    return;
  auto* model = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
  using Links = std::vector<sg4::Link*>;
  using Zones = std::unordered_set<sg4::NetZone*>;
  // A staging copy between a GPU and its node's CPU (--pcie-contention) is no message of the stack: factor 1.
  if (!stack.latency_factor.empty())
    model->set_lat_factor_cb([f = stack.latency_factor](double size, const sg4::Host* src, const sg4::Host* dst,
                                                        const Links&, const Zones&) {
      return is_staging_copy(src, dst) ? 1.0 : factor_for(f, message(size));
    });
  if (!stack.bandwidth_factor.empty())
    model->set_bw_factor_cb([f = stack.bandwidth_factor](double size, const sg4::Host* src, const sg4::Host* dst,
                                                         const Links&, const Zones&) {
      return is_staging_copy(src, dst) ? 1.0 : factor_for(f, message(size));
    });
}
} // namespace

CommWorld::CommWorld(std::vector<sg4::Host*> ranks, std::vector<int> node_of_rank, CollectiveOptions options,
                     std::string tag)
    : ranks_(static_cast<int>(ranks.size()))
    , hosts_(std::move(ranks))
    , node_of_rank_(std::move(node_of_rank))
    , options_(std::move(options))
    , tag_(std::move(tag))
    , sent_(hosts_.size(), 0)
    , received_(hosts_.size(), 0)
    , messages_(hosts_.size(), 0)
    , calls_(hosts_.size() * kMaxLanes, 0)
{
  if (node_of_rank_.empty())
    node_of_rank_.assign(hosts_.size(), 0);
  contended_ = options_.pcie_contention || options_.cpu_contention;
  install_factors(options_.stack);
}

int CommWorld::add_endpoint(sg4::Host* host)
{
  hosts_.push_back(host);
  sent_.push_back(0);
  received_.push_back(0);
  messages_.push_back(0);
  calls_.resize(hosts_.size() * kMaxLanes, 0);
  return static_cast<int>(hosts_.size()) - 1;
}

void CommWorld::set_lane_channels(std::vector<int> channels)
{
  if (channels.empty() || channels.size() > std::size_t(kMaxLanes))
    throw ConfigError(field("comm_streams") + " must be between 1 and " + std::to_string(kMaxLanes) + " (got " +
                      std::to_string(channels.size()) + ")");
  lane_channels_ = std::move(channels);
}

void CommWorld::set_driver_channel(int channel)
{
  driver_channel_[sg4::this_actor::get_pid()] = channel;
}

void CommWorld::clear_driver_channel()
{
  driver_channel_.erase(sg4::this_actor::get_pid());
}

int CommWorld::lane_of_channel(int channel) const
{
  for (std::size_t k = 0; k < lane_channels_.size(); ++k)
    if (lane_channels_[k] == channel)
      return static_cast<int>(k);
  return 0;
}

sg4::Mailbox* CommWorld::mailbox(int src, int dst, int channel)
{
  const std::uint64_t key = (static_cast<std::uint64_t>(channel) << 48) | (static_cast<std::uint64_t>(src) << 24) |
                            static_cast<std::uint64_t>(dst);
  auto it = mailboxes_.find(key);
  if (it != mailboxes_.end())
    return it->second;
  auto* mb = sg4::Mailbox::by_name(tag_ + ":" + std::to_string(channel) + ":" + std::to_string(src) + ">" +
                                   std::to_string(dst));
  mailboxes_.emplace(key, mb);
  return mb;
}

sg4::CommPtr CommWorld::post_send(int self, int to, std::uint64_t bytes, bool overhead, int channel)
{
  const StackProfile& stack = options_.stack;
  const double overhead_s = overhead ? options_.msg_overhead_s + stack.send_overhead_s : 0.0;
  double before_s = 0.0;
  if (contended_)
    cpu_work(self, overhead_s); // CPU work of its own (host_staging.cpp), before the copies
  else
    before_s = overhead_s;
  before_s += stack.copy_s_per_byte * double(bytes);
  if (staged(self)) {
    before_s -= stack.pcie_copy_s_per_byte * double(bytes); // the copy to host memory takes its place
    stage_out(self, bytes);
  }
  if (stack.rendezvous(bytes))
    before_s += handshake_s(self, to);
  if (before_s > 0)
    sg4::this_actor::sleep_for(before_s);
  sent_[self] += bytes;
  received_[to] += bytes; // counted by the sender: the receiver learns the size only from the message
  messages_[self] += 1;
  return mailbox(self, to, channel)->put_async(payload_of(bytes), bytes);
}

double CommWorld::handshake_s(int self, int to, const Route* cached) const
{
  // A solo world's network has no profiles (exact_network): its cached routes' latencies hold; so do a world's with
  // static links (no profiles) whether solo or not, read once per pair; otherwise read afresh (a latency profile).
  if (!solo_ && !static_links_)
    return rendezvous_round_trip_s(options_, route(self, to).alpha_s);
  if (!solo_) {
    const std::uint64_t key = (static_cast<std::uint64_t>(self) << 32) | static_cast<std::uint32_t>(to);
    auto it = route_latency_.find(key);
    if (it == route_latency_.end())
      it = route_latency_.emplace(key, route(self, to).alpha_s).first;
    return rendezvous_round_trip_s(options_, it->second);
  }
  return rendezvous_round_trip_s(options_, (cached != nullptr ? *cached : cached_route(self, to)).latency_s);
}

void CommWorld::received(int self, char* const* payloads, std::size_t count)
{
  cpu_work(self, options_.stack.recv_overhead_s * double(count)); // a sleep unless --cpu-contention
  if (staged(self))
    stage_in(self, payloads, count);
}

void CommWorld::send_recv(int self, int to, std::uint64_t send_bytes, int from, int channel)
{
  exchange(self, {{to, send_bytes}}, {from}, true, channel);
}

void CommWorld::transferred(int self, int to, std::uint64_t bytes, int channel, const sg4::CommPtr& comm,
                            const Route* route) const
{
  report(self, to, bytes, comm->get_start_time(), comm->get_finish_time(), channel, route);
}

void CommWorld::report(int from, int to, std::uint64_t bytes, double start_s, double end_s, int channel,
                       const Route* route) const
{
  if (!on_transfer_)
    return;
  reporting_ = route;
  on_transfer_(from, to, bytes, start_s, end_s, channel);
  reporting_ = nullptr;
}

const CommWorld::Route& CommWorld::transfer_route(int from, int to) const
{
  return reporting_ != nullptr ? *reporting_ : cached_route(from, to);
}

void CommWorld::send(int self, int to, std::uint64_t bytes, int channel)
{
  auto comm = post_send(self, to, bytes, true, channel);
  comm->wait();
  transferred(self, to, bytes, channel, comm);
}

void CommWorld::recv(int self, int from, int channel)
{
  char* received = nullptr; // the payload pointer lands here; only the simulated size matters
  mailbox(from, self, channel)->get_async<char>(&received)->wait();
  this->received(self, &received, 1);
}

void CommWorld::exchange(int self, const std::vector<std::pair<int, std::uint64_t>>& sends,
                         const std::vector<int>& from, bool overhead, int channel)
{
  std::vector<char*> landing(from.size(), nullptr);
  std::vector<sg4::CommPtr> comms;
  comms.reserve(sends.size() + from.size());
  for (std::size_t i = 0; i < from.size(); ++i) // receives first: they cost no overhead
    comms.push_back(mailbox(from[i], self, channel)->get_async<char>(&landing[i]));
  for (const auto& [to, bytes] : sends)
    comms.push_back(post_send(self, to, bytes, overhead, channel));
  sg4::Comm::wait_all(comms);
  for (std::size_t i = 0; i < sends.size(); ++i)
    transferred(self, sends[i].first, sends[i].second, channel, comms[from.size() + i]);
  received(self, landing.data(), landing.size());
}

void CommWorld::run_flows(const std::vector<Flow>& flows)
{
  // A stack's size factors keep the classes exact: outside staging copies (contended_) they depend on a flow's bytes
  // alone (install_factors), which the signature holds.
  if (flows.empty())
    return;
  if ((!solo_ && !mirror_) || contended_) {
    finish_own(flows, start_own(flows)); // local: another lane's driver may run flows meanwhile
    return;
  }
  // Solo: these flows are all the network carries. Flows that share a link form a component; components with the same
  // signature (their shape, component_shape: route latencies and bandwidths, which flows share which links; and their
  // flows' bytes) are identical subsystems of SimGrid's model and evolve identically, so SimGrid runs one of each class
  // (its representative) and every other member takes its representative's times, flow by flow. The routes, components
  // and their shapes depend on the flows' endpoints alone: learnt once per plan (plan_shape). Mirrored: the calls of
  // every lane in flight are all the network carries, each call's flows those of one layout (calls between the same
  // endpoints), and each component holds every flow of every call that crosses its links; set_mirror's classes are
  // alike in every call, so SimGrid runs one component per class with every call's flows in it.
  const PlanShape& shape = mirror_ ? mirror_layout(flows) : plan_shape(flows);
  const std::vector<const Route*>& routes = shape.routes;
  const std::vector<std::vector<std::size_t>>& components = shape.components;
  std::vector<std::size_t> first; // per component: where its class's flows start in `posted`
  std::vector<Flow> posted;
  std::vector<const Route*> posted_routes;
  std::vector<std::uint64_t> tags;
  choose_representatives(flows, shape, posted, first, &posted_routes, computed() ? &tags : nullptr);
  for (const auto& f : flows)
    count(f);
  // Per posted flow its start and end: mirrored, computed (run_fluid: every lane's flows are all the network carries);
  // solo, SimGrid's.
  std::vector<double> starts, ends_of;
  if (computed()) {
    starts.assign(posted.size(), sg4::Engine::get_clock());
    ends_of = run_fluid(posted, shape, tags);
  } else {
    const std::vector<sg4::CommPtr> comms = post(posted);
    for (const auto& c : comms)
      c->wait();
    for (const auto& c : comms) {
      starts.push_back(c->get_start_time());
      ends_of.push_back(c->get_finish_time());
    }
  }
  if (!on_transfer_)
    return;
  const int channel = driver_channel();
  if (on_transfers_) { // every flow started with the others (post: one simcall)
    const double start = starts.empty() ? sg4::Engine::get_clock() : starts.front();
    std::vector<double> ends(flows.size());
    bool together = true;
    for (std::size_t c = 0; c < components.size(); ++c)
      for (std::size_t k = 0; k < components[c].size(); ++k) {
        together = together && starts[first[c] + k] == start;
        ends[components[c][k]] = ends_of[first[c] + k];
      }
    if (together) {
      on_transfers_({flows, start, ends, routes, link_flows(shape), channel});
      return;
    }
  }
  for (std::size_t c = 0; c < components.size(); ++c)
    for (std::size_t k = 0; k < components[c].size(); ++k) {
      const Flow& f = flows[components[c][k]];
      report(f.from, f.to, f.bytes, starts[first[c] + k], ends_of[first[c] + k], channel, routes[components[c][k]]);
    }
}

void CommWorld::choose_representatives(const std::vector<Flow>& flows, const PlanShape& shape,
                                       std::vector<Flow>& posted, std::vector<std::size_t>& first,
                                       std::vector<const Route*>* posted_routes,
                                       std::vector<std::uint64_t>* posted_tags)
{
  const auto& components = shape.components;
  first.assign(components.size(), 0);
  auto take = [&](std::size_t i) {
    posted.push_back(flows[i]);
    if (posted_routes != nullptr)
      posted_routes->push_back(shape.routes[i]);
    if (posted_tags != nullptr) // the layout and the flow's place in it: its route, as run_fluid's tags need
      posted_tags->push_back(layout_tag(shape) | std::uint64_t(i));
  };
  if (mirror_) { // `shape`: the layout of `flows` (mirror_layout), its components those of the union
    for (std::size_t c = 0; c < components.size(); ++c) {
      const std::size_t r = mirror_->representative[c];
      if (r == c) {
        first[c] = posted.size();
        for (std::size_t i : components[c])
          take(i);
        continue;
      }
      first[c] = first[r];
      for (std::size_t k = 0; k < components[c].size(); ++k) { // alike in this call, as set_mirror was told
        const Flow& f = flows[components[c][k]];
        const Flow& g = flows[components[r][k]];
        if (f.bytes != g.bytes || f.message_bytes != g.message_bytes)
          throw std::logic_error("mirrored lanes: run_flows got flows of other sizes than the phase declared "
                                 "(CommWorld::set_mirror)");
      }
    }
    return;
  }
  std::unordered_map<std::string, std::size_t> class_of; // signature -> its representative's first flow in `posted`
  for (std::size_t c = 0; c < components.size(); ++c) {
    signature_.clear(); // the component's shape, then per flow its bytes and message size (the stack's factors)
    sign(shape.shape_of[c]);
    sign_sizes(flows, components[c]);
    auto it = class_of.find(signature_);
    if (it == class_of.end()) {
      it = class_of.emplace(signature_, posted.size()).first;
      for (std::size_t i : components[c])
        take(i);
    }
    first[c] = it->second;
  }
}

std::uint64_t CommWorld::layout_tag(const PlanShape& shape) const
{
  return (std::uint64_t(mirror_->generation & 0xffff) << 48) | (std::uint64_t(shape.layout + 1) << 32);
}

void CommWorld::drop_mirror()
{
  if (fluid_in_flight()) // their routes are read from the mirror's layouts (PlanShape::fluid)
    throw std::logic_error("mirrored lanes: set_mirror while computed flows are in flight");
  mirror_.reset();
}

bool CommWorld::set_mirror(const std::vector<std::vector<Flow>>& calls, bool classes)
{
  drop_mirror();
  if (calls.empty() || contended_ ||
      std::any_of(calls.begin(), calls.end(), [](const auto& call) { return call.empty(); }))
    return false;
  auto m = std::make_unique<Mirror>();
  std::vector<std::size_t> layout_of; // per call
  for (const auto& call : calls) {
    std::size_t l = 0;
    while (l < m->layouts.size() && !m->layouts[l]->has_ends(call))
      ++l;
    if (l == m->layouts.size()) {
      m->layouts.push_back(routed_shape(call)); // its components: the union's, below
      m->layouts.back()->layout = l;
    }
    layout_of.push_back(l);
  }
  // The union: every layout's flows one after the other (flow u of layout l at offset[l] + its index).
  std::vector<const Route*> routes;
  std::vector<std::size_t> offset, layout_at;
  for (std::size_t l = 0; l < m->layouts.size(); ++l) {
    offset.push_back(routes.size());
    routes.insert(routes.end(), m->layouts[l]->routes.begin(), m->layouts[l]->routes.end());
    layout_at.insert(layout_at.end(), m->layouts[l]->routes.size(), l);
  }
  const std::vector<std::vector<std::size_t>> components = flow_components(routes);
  for (auto& layout : m->layouts)
    layout->components.resize(components.size());
  m->representative.resize(components.size());
  std::unordered_map<std::string, std::size_t> class_of; // signature over every call -> its first component
  for (std::size_t c = 0; c < components.size(); ++c) {
    for (std::size_t u : components[c]) // in union order: the same places in every component of a class
      m->layouts[layout_at[u]]->components[c].push_back(u - offset[layout_at[u]]);
    component_shape(routes, components[c]); // then which layout each flow is of, then every call's sizes
    for (std::size_t u : components[c])
      sign(static_cast<std::uint32_t>(layout_at[u]));
    for (std::size_t k = 0; k < calls.size(); ++k) // a call listed twice adds the same sizes to every component
      sign_sizes(calls[k], m->layouts[layout_of[k]]->components[c]);
    m->representative[c] = classes ? class_of.emplace(signature_, c).first->second : c;
  }
  m->classes = classes;
  m->generation = ++mirror_generations_;
  m->computed = fluid_exact(routes) && m->layouts.size() < 0xffff; // run_fluid's tags: 16 bits of layout
  if (m->computed)
    for (auto& layout : m->layouts)
      for (const Route* r : layout->routes) {
        layout->fluid.push_back({static_cast<std::uint32_t>(layout->fluid_links.size()),
                                 static_cast<std::uint32_t>(r->shared_ids.size()), r->latency_s, r->bandwidth});
        layout->fluid_links.insert(layout->fluid_links.end(), r->shared_ids.begin(), r->shared_ids.end());
      }
  mirror_ = std::move(m);
  return true;
}

bool CommWorld::fluid_exact(const std::vector<const Route*>& routes)
{
  // SimGrid's fat pipe is a constraint of its own: when it is the bottleneck, each flow on it gets its bandwidth times
  // the smallest sharing penalty among them over its own (src/kernel/lmm/maxmin.cpp), the whole bandwidth only where
  // the penalties (the routes' latencies) are equal. FluidNetwork takes a fat pipe as each flow's bound: exact where
  // every route crossing one has one latency.
  std::unordered_map<const sg4::Link*, double> latency_of;
  for (const Route* r : routes)
    for (const sg4::Link* l : r->fat)
      if (latency_of.emplace(l, r->latency_s).first->second != r->latency_s)
        return false;
  return true;
}

bool CommWorld::symmetric_under(const std::vector<std::vector<Flow>>& flow_sets, const std::vector<int>& perm) const
{
  if (perm.size() != static_cast<std::size_t>(endpoints()))
    throw std::logic_error("symmetric_under: the permutation must list every endpoint");
  for (std::size_t e = 0; e < perm.size(); ++e) // an endpoint computes as fast as its image (nominal times): alike
    if (hosts_[e]->get_speed() != hosts_[static_cast<std::size_t>(perm[e])]->get_speed())
      return false;
  using Key = std::tuple<int, int, std::uint64_t, std::uint64_t>;
  // The links' map, built route by route: a link already mapped must map the same way again. It is then one to one
  // as well: the flows map onto themselves (checked first), so every crossing of a link m comes from a crossing of a
  // link that maps to m; were two links mapped to one, some used link would be no link's image and carry nothing.
  std::vector<std::int64_t> image;                                  // per link number (-1: not mapped yet)
  std::unordered_map<const sg4::Link*, const sg4::Link*> fat_image; // fat pipes (backbones: shared by routes)
  const auto maps = [](auto& to, auto a, auto b, auto none) {
    if (to[a] == none)
      to[a] = b;
    return to[a] == b;
  };
  for (const auto& flows : flow_sets) {
    std::vector<Key> mine, theirs;
    for (const Flow& f : flows) {
      mine.emplace_back(f.from, f.to, f.bytes, f.message_bytes);
      theirs.emplace_back(perm[f.from], perm[f.to], f.bytes, f.message_bytes);
    }
    std::sort(mine.begin(), mine.end());
    std::sort(theirs.begin(), theirs.end());
    if (mine != theirs)
      return false;
    for (const Flow& f : flows) {
      const Route& a = cached_route(f.from, f.to);
      const Route& b = cached_route(perm[f.from], perm[f.to]);
      if (a.latency_s != b.latency_s || a.bandwidth != b.bandwidth || a.shared.size() != b.shared.size() ||
          a.fat.size() != b.fat.size())
        return false;
      for (std::size_t k = 0; k < a.shared.size(); ++k) {
        const std::uint32_t x = a.shared_ids[k], y = b.shared_ids[k];
        if (x >= image.size())
          image.resize(x + 1, -1);
        if (a.shared_bandwidth[k] != b.shared_bandwidth[k] || !maps(image, x, std::int64_t{y}, std::int64_t{-1}))
          return false;
      }
      for (std::size_t k = 0; k < a.fat.size(); ++k) {
        fat_image.emplace(a.fat[k], nullptr);
        if (a.fat[k]->get_bandwidth() != b.fat[k]->get_bandwidth() ||
            !maps(fat_image, a.fat[k], b.fat[k], static_cast<const sg4::Link*>(nullptr)))
          return false;
      }
    }
  }
  return true;
}

const CommWorld::PlanShape& CommWorld::mirror_layout(const std::vector<Flow>& flows) const
{
  for (const auto& layout : mirror_->layouts)
    if (layout->has_ends(flows))
      return *layout;
  throw std::logic_error("mirrored lanes: run_flows got flows between other endpoints than the phase declared "
                         "(CommWorld::set_mirror)");
}

std::unique_ptr<CommWorld::PlanShape> CommWorld::routed_shape(const std::vector<Flow>& flows)
{
  auto s = std::make_unique<PlanShape>();
  for (const auto& f : flows) {
    s->ends.emplace_back(f.from, f.to);
    s->routes.push_back(&cached_route(f.from, f.to));
  }
  return s;
}

bool CommWorld::PlanShape::has_ends(const std::vector<Flow>& flows) const
{
  if (flows.size() != ends.size())
    return false;
  for (std::size_t i = 0; i < flows.size(); ++i)
    if (ends[i].first != flows[i].from || ends[i].second != flows[i].to)
      return false;
  return true;
}

std::size_t CommWorld::mirror_classes() const
{
  if (!mirror_)
    return 0;
  std::size_t classes = 0; // one representative each
  for (std::size_t c = 0; c < mirror_->representative.size(); ++c)
    classes += mirror_->representative[c] == c ? 1 : 0;
  return classes;
}

void CommWorld::sign_sizes(const std::vector<Flow>& flows, const std::vector<std::size_t>& component)
{
  for (std::size_t i : component) {
    sign(flows[i].bytes);
    sign(flows[i].message_bytes);
  }
}

const CommWorld::LinkFlows& CommWorld::link_flows(const PlanShape& shape) const
{
  if (shape.links.offsets.empty())
    shape.links = link_flows_of(shape.routes);
  return shape.links;
}

CommWorld::LinkFlows CommWorld::link_flows_of(const std::vector<const Route*>& routes)
{
  LinkFlows l;
  std::unordered_map<std::uint32_t, std::size_t> index; // link number -> k
  std::vector<std::vector<std::uint32_t>> crossing;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const Route& r = *routes[i];
    for (std::size_t j = 0; j < r.shared_ids.size(); ++j) {
      auto [it, fresh] = index.emplace(r.shared_ids[j], l.ids.size());
      if (fresh) {
        l.ids.push_back(r.shared_ids[j]);
        l.links.push_back(r.shared[j]);
        crossing.emplace_back();
      }
      crossing[it->second].push_back(static_cast<std::uint32_t>(i));
    }
  }
  l.offsets.push_back(0);
  for (const auto& c : crossing) {
    l.flows.insert(l.flows.end(), c.begin(), c.end());
    l.offsets.push_back(static_cast<std::uint32_t>(l.flows.size()));
  }
  return l;
}

void CommWorld::account_batch(const std::vector<Flow>& flows, double start_s, const std::vector<double>& end_s,
                              const std::vector<const Route*>& routes, const LinkFlows& links, int channel)
{
  for (const auto& f : flows)
    count(f);
  if (!on_transfer_)
    return;
  if (on_transfers_) {
    on_transfers_({flows, start_s, end_s, routes, links, channel});
    return;
  }
  for (std::size_t i = 0; i < flows.size(); ++i)
    report(flows[i].from, flows[i].to, flows[i].bytes, start_s, end_s[i], channel, routes[i]);
}

bool CommWorld::run_alike(const std::vector<Flow>& flows)
{
  if (!solo_ || contended_)
    return false;
  const PlanShape& shape = plan_shape(flows);
  if (shape.alike.empty()) { // per component (they share no link: each one's rates are its own), once per plan
    shape.rates.assign(flows.size(), 0.0);
    std::vector<std::pair<int, int>> ends;
    std::vector<double> rates;
    for (const auto& component : shape.components) {
      ends.clear();
      for (std::size_t i : component)
        ends.push_back(shape.ends[i]);
      shape.alike.push_back(alike(ends, &rates) ? 1 : 0);
      for (std::size_t k = 0; k < component.size(); ++k)
        shape.rates[component[k]] = rates[k];
    }
  }
  // The components that are not alike (or whose flows differ in size): computed in ddlsim's own network where their
  // fat pipes allow (posted_fluid), else run by SimGrid.
  std::vector<Flow> posted;
  std::vector<std::size_t> posted_index;
  std::vector<char> computed(shape.components.size(), 0);
  const double now = sg4::Engine::get_clock();
  double last = now;
  const std::vector<double> together(flows.size(), 0.0);
  for (std::size_t c = 0; c < shape.components.size(); ++c) {
    const auto& component = shape.components[c];
    bool alike = shape.alike[c] != 0;
    for (std::size_t i : component)
      alike = alike && flows[i].bytes == flows[component.front()].bytes &&
              flows[i].message_bytes == flows[component.front()].message_bytes;
    computed[c] = alike ? 1 : 0;
    if (!alike && !posted_fluid(flows, component, together, now, shape, last))
      for (std::size_t i : component) {
        posted.push_back(flows[i]);
        posted_index.push_back(i);
      }
  }
  for (const auto& f : posted)
    count(f);
  const std::vector<sg4::CommPtr> comms = post(posted);
  for (std::size_t c = 0; c < shape.components.size(); ++c)
    if (computed[c])
      for (std::size_t i : shape.components[c]) {
        const double end = now + shape.routes[i]->latency_s + double(flows[i].bytes) / shape.rates[i];
        account(flows[i], now, end);
        last = std::max(last, end);
      }
  for (const auto& c : comms)
    c->wait();
  const int channel = driver_channel();
  for (std::size_t k = 0; k < posted.size(); ++k)
    transferred(posted[k].from, posted[k].to, posted[k].bytes, channel, comms[k], shape.routes[posted_index[k]]);
  delay_until(last);
  return true;
}

bool CommWorld::run_incast(const std::vector<Flow>& flows, const std::vector<double>& after)
{
  if (!solo_ || contended_ || after.size() != flows.size())
    return false;
  if (flows.empty())
    return true;
  const PlanShape& shape = plan_shape(flows);
  const auto& components = shape.components;
  if (shape.incast.empty()) { // per component, once per plan (the endpoints decide)
    shape.incast.assign(components.size(), 0.0);
    for (std::size_t c = 0; c < components.size(); ++c)
      shape.incast[c] = shared_narrowest(shape, components[c]);
  }
  const double now = sg4::Engine::get_clock();
  const StackProfile& stack = options_.stack;
  const int channel = driver_channel();
  std::vector<Flow> posted; // the components not computed: SimGrid runs them
  std::vector<double> posted_after;
  double last = now;
  std::vector<std::size_t> order;
  std::vector<double> active_at;
  for (std::size_t c = 0; c < components.size(); ++c) {
    const auto& component = components[c];
    const Flow& first = flows[component.front()];
    bool computed = shape.incast[c] > 0;
    for (std::size_t i : component)
      computed = computed && flows[i].bytes == first.bytes && flows[i].message_bytes == first.message_bytes;
    if (!computed) {
      if (posted_fluid(flows, component, after, now, shape, last))
        continue;
      for (std::size_t i : component) {
        posted.push_back(flows[i]);
        posted_after.push_back(after[i]);
      }
      continue;
    }
    // SimGrid's model (src/surf/network_cm02.cpp): the latency times the latency factor first, sharing nothing; then a
    // share of the link whose progress is times the bandwidth factor (of the message size, as install_factors).
    const double message = first.message_bytes > 0 ? double(first.message_bytes) : double(first.bytes);
    const double latency = shape.routes[component.front()]->latency_s * factor_for(stack.latency_factor, message);
    const double work = double(first.bytes) / factor_for(stack.bandwidth_factor, message);
    order.assign(component.begin(), component.end());
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return after[a] < after[b]; });
    active_at.clear();
    for (std::size_t i : order)
      active_at.push_back(now + after[i] + latency);
    const std::vector<double> ends = analytical::processor_sharing_ends(active_at, work, shape.incast[c]);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      account(flows[i], now + after[i], ends[k], *shape.routes[i], channel);
      last = std::max(last, ends[k]);
    }
  }
  if (!posted.empty())
    run_staggered(posted, posted_after);
  delay_until(last);
  return true;
}

bool CommWorld::posted_fluid(const std::vector<Flow>& flows, const std::vector<std::size_t>& component,
                             const std::vector<double>& after, double now, const PlanShape& shape, double& last)
{
  std::vector<const Route*> routes;
  for (std::size_t i : component)
    routes.push_back(shape.routes[i]);
  if (!fluid_exact(routes))
    return false;
  analytical::FluidNetwork net;
  for (const Route* r : routes)
    for (std::size_t k = 0; k < r->shared_ids.size(); ++k)
      net.set_capacity(r->shared_ids[k], r->shared_bandwidth[k]);
  std::vector<std::size_t> order(component.begin(), component.end());
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return after[a] < after[b]; });
  // As run_staggered's actor posts them: for each distinct offset in order, delay_until(now + offset), which sleeps
  // from the clock only where that is SimGrid's resolution or more away (the sleep then ends at the clock plus its
  // length), then the flows of that offset.
  static const double resolution_s = simgrid::config::get_value<double>("surf/precision");
  const StackProfile& stack = options_.stack;
  analytical::SimClock clock;
  analytical::FluidNetwork::FlowSpec spec;
  std::vector<std::size_t> place_of;                                      // network id -> its flow's place in `order`
  std::vector<double> starts(order.size(), 0.0), ends(order.size(), 0.0); // by place in `order`
  double t = now;
  std::size_t next = 0;
  auto post_from = [&](bool woken) { // at t: the batches due, up to one that needs a sleep first
    while (next < order.size()) {
      const double offset = after[order[next]];
      if (!woken && now + offset - t >= resolution_s) {
        clock.sleep(t, now + offset - t, 0, 0);
        return;
      }
      woken = false;
      for (; next < order.size() && after[order[next]] == offset; ++next) {
        const std::size_t i = order[next];
        const Route& r = *shape.routes[i];
        const double message = flows[i].message_bytes > 0 ? double(flows[i].message_bytes) : double(flows[i].bytes);
        spec.links = r.shared_ids;
        set_cm02(spec, stack, r.latency_s, r.bandwidth, message, double(flows[i].bytes));
        const std::size_t id = net.start(t, spec);
        if (place_of.size() <= id)
          place_of.resize(id + 1);
        place_of[id] = next;
        starts[next] = t;
      }
    }
  };
  post_from(false);
  std::vector<std::pair<std::size_t, int>> woken;
  while (clock.next(net, t)) {
    clock.due(t, woken);
    for (std::size_t id : net.finished()) {
      ends[place_of[id]] = t;
      net.release(id);
    }
    if (!woken.empty())
      post_from(true);
  }
  if (next != order.size())
    throw Error("internal: a posted component's flows not all posted");
  const int channel = driver_channel();
  for (std::size_t k = 0; k < order.size(); ++k) {
    account(flows[order[k]], starts[k], ends[k], *shape.routes[order[k]], channel);
    last = std::max(last, ends[k]);
  }
  note_computed(order.size());
  return true;
}

double CommWorld::shared_narrowest(const PlanShape& shape, const std::vector<std::size_t>& component) const
{
  const Route& first = *shape.routes[component.front()];
  for (std::size_t k = 0; k < first.shared_ids.size(); ++k) {
    const std::uint32_t link = first.shared_ids[k];
    const double bandwidth = first.shared_bandwidth[k];
    const bool common = std::all_of(component.begin(), component.end(), [&](std::size_t i) {
      const Route& r = *shape.routes[i];
      return r.bandwidth == bandwidth && r.latency_s == first.latency_s &&
             std::find(r.shared_ids.begin(), r.shared_ids.end(), link) != r.shared_ids.end();
    });
    if (common)
      return bandwidth;
  }
  return 0;
}

std::vector<double> CommWorld::run_timed(const std::vector<Flow>& flows, const std::vector<double>& post_at)
{
  if (!solo_ || post_at.size() != flows.size())
    throw Error("internal: run_timed needs a solo world and one start per flow");
  std::vector<double> ends(flows.size(), 0.0);
  if (flows.empty())
    return ends;
  const PlanShape& shape = plan_shape(flows);
  const auto& components = shape.components;
  // Per component: its earliest start; its class (shape, then per flow its bytes, message size and start offset).
  std::vector<double> base(components.size());
  std::unordered_map<std::string, std::size_t> class_of; // signature -> representative component
  std::vector<std::size_t> rep(components.size());
  for (std::size_t c = 0; c < components.size(); ++c) {
    base[c] = post_at[components[c].front()];
    for (std::size_t i : components[c])
      base[c] = std::min(base[c], post_at[i]);
    signature_.clear();
    sign(shape.shape_of[c]);
    for (std::size_t i : components[c]) {
      sign(flows[i].bytes);
      sign(flows[i].message_bytes);
      sign(post_at[i] - base[c]);
    }
    rep[c] = class_of.emplace(signature_, c).first->second;
  }
  // The representatives' flows, each at its offset from its component's start, or from now where that start is past
  // (its origin), in order of time (one simcall per distinct time). A representative that starts in the future runs
  // at its own times: SimGrid's clock rounds (surf/precision), so a shifted run may end a nanosecond apart.
  const double now = sg4::Engine::get_clock();
  std::vector<double> origin(components.size(), now);
  std::vector<std::size_t> run; // flow indices
  for (std::size_t c = 0; c < components.size(); ++c)
    if (rep[c] == c) {
      origin[c] = std::max(now, base[c]);
      run.insert(run.end(), components[c].begin(), components[c].end());
    }
  std::vector<double> at(flows.size(), 0.0); // a representative's flows: when SimGrid posts them
  for (std::size_t c = 0; c < components.size(); ++c)
    if (rep[c] == c)
      for (std::size_t i : components[c])
        at[i] = origin[c] + (post_at[i] - base[c]);
  std::stable_sort(run.begin(), run.end(), [&](std::size_t a, std::size_t b) { return at[a] < at[b]; });
  std::vector<sg4::CommPtr> comm_of(flows.size());
  std::vector<Flow> batch;
  for (std::size_t k = 0; k < run.size();) {
    std::size_t last = k;
    batch.clear();
    while (last < run.size() && at[run[last]] == at[run[k]])
      batch.push_back(flows[run[last++]]);
    delay_until(at[run[k]]);
    const std::vector<sg4::CommPtr> comms = post(batch);
    for (std::size_t j = k; j < last; ++j)
      comm_of[run[j]] = comms[j - k];
    k = last;
  }
  for (std::size_t i : run)
    comm_of[i]->wait();
  const int channel = driver_channel();
  for (std::size_t c = 0; c < components.size(); ++c) {
    const auto& mine = components[c];
    const auto& theirs = components[rep[c]];
    for (std::size_t k = 0; k < mine.size(); ++k) {
      const sg4::CommPtr& comm = comm_of[theirs[k]]; // the same position in an identical component
      const double shift = base[c] - origin[rep[c]];
      const std::size_t i = mine[k];
      ends[i] = comm->get_finish_time() + shift;
      account(flows[i], comm->get_start_time() + shift, ends[i], *shape.routes[i], channel);
    }
  }
  return ends;
}

double CommWorld::send_cost_s(int from, int to, std::uint64_t bytes, const Route* cached) const
{
  double s = overhead_and_copy_s(bytes);
  if (options_.stack.rendezvous(bytes))
    s += handshake_s(from, to, cached);
  return s;
}

double CommWorld::overhead_and_copy_s(std::uint64_t bytes) const
{
  const StackProfile& stack = options_.stack;
  return options_.msg_overhead_s + stack.send_overhead_s + stack.copy_s_per_byte * double(bytes);
}

double CommWorld::solo_send_cost_s(std::uint64_t bytes, double route_latency_s) const
{
  if (!solo_)
    throw Error("internal: a send's cost from its route's latency asked outside a solo world");
  double s = overhead_and_copy_s(bytes);
  if (options_.stack.rendezvous(bytes))
    s += rendezvous_round_trip_s(options_, route_latency_s);
  return s;
}

void CommWorld::run_step(const std::vector<Flow>& flows)
{
  double before_s = 0;
  for (const auto& f : flows)
    before_s = std::max(before_s, send_cost_s(f.from, f.to, f.bytes));
  delay(before_s);
  run_flows(flows);
  delay(options_.stack.recv_overhead_s);
}

std::vector<std::vector<std::size_t>> CommWorld::flow_components(const std::vector<const Route*>& routes)
{
  // Union-find over the flows, joined through the links they share (fat pipes excepted: they share nothing). A link's
  // first flow is kept in an array indexed by the link's number, valid for this call (stamp).
  const std::size_t n = routes.size();
  std::vector<std::size_t> parent(n);
  for (std::size_t i = 0; i < n; ++i)
    parent[i] = i;
  auto root = [&parent](std::size_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  next_stamp();
  for (std::size_t i = 0; i < n; ++i)
    for (const std::uint32_t link : routes[i]->shared_ids) {
      if (link_stamp_[link] != stamp_) {
        link_stamp_[link] = stamp_;
        link_owner_[link] = i;
      } else {
        parent[root(i)] = root(link_owner_[link]);
      }
    }
  std::vector<std::vector<std::size_t>> components;
  std::vector<std::size_t> component_of(n, n); // root -> component (n: none yet)
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t& c = component_of[root(i)];
    if (c == n) {
      c = components.size();
      components.emplace_back();
    }
    components[c].push_back(i); // in plan order
  }
  return components;
}

const CommWorld::PlanShape& CommWorld::plan_shape(const std::vector<Flow>& flows)
{
  std::uint64_t hash = kFnv1aBasis; // over the endpoints
  for (const auto& f : flows)
    for (const int end : {f.from, f.to})
      hash = fnv1a(hash, static_cast<std::uint32_t>(end));
  for (const auto& s : plan_shapes_[hash])
    if (s->has_ends(flows))
      return *s;
  if (++shapes_kept_ > kMaxPlanShapes) { // plans of ever new endpoints: keep the memory bounded
    plan_shapes_.clear();
    shapes_kept_ = 1;
  }
  auto s = routed_shape(flows);
  s->components = flow_components(s->routes);
  for (const auto& component : s->components) {
    component_shape(s->routes, component);
    s->shape_of.push_back(shape_ids_.emplace(signature_, static_cast<std::uint32_t>(shape_ids_.size())).first->second);
  }
  auto& bucket = plan_shapes_[hash];
  bucket.push_back(std::move(s));
  return *bucket.back();
}

void CommWorld::component_shape(const std::vector<const Route*>& routes, const std::vector<std::size_t>& component)
{
  // Per flow, in plan order: its route's latency and narrowest bandwidth (the flow's bound), and for each link it
  // shares with others its bandwidth and its number within the component (in order of first use). With the flows'
  // bytes and message sizes, what SimGrid's model sees of the component.
  signature_.clear();
  next_stamp();
  std::uint32_t numbered = 0;
  for (std::size_t i : component) {
    const Route& r = *routes[i];
    sign(r.latency_s);
    sign(r.bandwidth);
    sign(static_cast<std::uint32_t>(r.shared.size()));
    for (std::size_t k = 0; k < r.shared.size(); ++k) {
      const std::uint32_t link = r.shared_ids[k];
      if (link_stamp_[link] != stamp_) {
        link_stamp_[link] = stamp_;
        link_owner_[link] = numbered++;
      }
      sign(static_cast<std::uint32_t>(link_owner_[link]));
      sign(r.shared_bandwidth[k]);
    }
  }
}

void CommWorld::next_stamp()
{
  link_stamp_.resize(link_ids_.size(), 0);
  link_owner_.resize(link_ids_.size(), 0);
  if (++stamp_ == 0) { // wrapped: no entry may look current
    std::fill(link_stamp_.begin(), link_stamp_.end(), 0);
    stamp_ = 1;
  }
}

const CommWorld::Route& CommWorld::cached_route(int from, int to) const
{
  const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint32_t>(to);
  auto it = routes_.find(key);
  if (it != routes_.end())
    return it->second;
  std::vector<sg4::Link*> links;
  Route r;
  hosts_[from]->route_to(hosts_[to], links, &r.latency_s);
  r.bandwidth = std::numeric_limits<double>::infinity();
  for (const auto* l : links) {
    r.bandwidth = std::min(r.bandwidth, l->get_bandwidth());
    if (l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE) { // a fat pipe limits each flow, not their sum
      r.shared.push_back(l);
      r.shared_bandwidth.push_back(l->get_bandwidth());
      r.shared_ids.push_back(link_ids_.emplace(l, static_cast<std::uint32_t>(link_ids_.size())).first->second);
    } else {
      r.fat.push_back(l);
    }
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

std::vector<double> CommWorld::max_min_rates(const std::vector<std::pair<int, int>>& ends)
{
  // Progressive filling: the smallest of every shared link's fair share (its remaining bandwidth over its unfixed
  // transfers) and every unfixed transfer's own bound (its route's narrowest link, a fat pipe's bandwidth included)
  // fixes the transfers it limits at that level; the links they cross lose it. Levels only rise (a transfer fixed at
  // the smallest share leaves the others on its links at least as much), so a heap of the current levels, with
  // entries made stale by a later change skipped, visits each transfer and each of its links once.
  const std::size_t n = ends.size();
  std::vector<const Route*> routes(n);
  for (std::size_t i = 0; i < n; ++i)
    routes[i] = &cached_route(ends[i].first, ends[i].second);
  struct Link {
    double left = 0;           ///< bandwidth not yet given out
    std::size_t unfixed = 0;   ///< transfers through it not yet fixed
    std::uint32_t version = 0; ///< heap entries of an older version are stale
    std::vector<std::size_t> transfers;
  };
  std::vector<Link> links;
  next_stamp(); // link number -> its index in `links` (link_owner_), valid for this call
  std::vector<std::vector<std::size_t>> link_of(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < routes[i]->shared_ids.size(); ++k) {
      const std::uint32_t id = routes[i]->shared_ids[k];
      if (link_stamp_[id] != stamp_) {
        link_stamp_[id] = stamp_;
        link_owner_[id] = links.size();
        links.emplace_back();
        links.back().left = routes[i]->shared_bandwidth[k];
      }
      Link& l = links[link_owner_[id]];
      ++l.unfixed;
      l.transfers.push_back(i);
      link_of[i].push_back(link_owner_[id]);
    }
  // (level, 0 = a link's share / 1 = a transfer's own bound, index, version); on equal levels links come first
  using Entry = std::tuple<double, int, std::size_t, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (std::size_t k = 0; k < links.size(); ++k)
    heap.emplace(links[k].left / double(links[k].unfixed), 0, k, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(routes[i]->bandwidth))
      heap.emplace(routes[i]->bandwidth, 1, i, 0);
  std::vector<double> rate(n, std::numeric_limits<double>::infinity());
  std::vector<char> fixed(n, 0);
  auto fix = [&](std::size_t i, double level) {
    rate[i] = level;
    fixed[i] = 1;
    for (std::size_t k : link_of[i]) {
      Link& l = links[k];
      l.left -= level;
      if (--l.unfixed > 0)
        heap.emplace(std::max(l.left, 0.0) / double(l.unfixed), 0, k, ++l.version);
    }
  };
  while (!heap.empty()) {
    const auto [level, kind, index, version] = heap.top();
    heap.pop();
    const double at = std::max(level, 0.0); // rounding may leave a link a hair below zero
    if (kind == 1) {
      if (!fixed[index])
        fix(index, at);
      continue;
    }
    if (version != links[index].version || links[index].unfixed == 0)
      continue;
    const std::vector<std::size_t> through = links[index].transfers; // fix() changes the link's count, not its list
    for (std::size_t i : through)
      if (!fixed[i])
        fix(i, at);
  }
  return rate;
}

bool CommWorld::alike(const std::vector<std::pair<int, int>>& ends, std::vector<double>* rates)
{
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); };
  std::vector<double> mine;
  std::vector<double>& r = rates != nullptr ? *rates : mine;
  r = max_min_rates(ends);
  if (ends.empty())
    return true;
  const double latency = cached_route(ends.front().first, ends.front().second).latency_s;
  for (std::size_t i = 0; i < ends.size(); ++i)
    if (!same(cached_route(ends[i].first, ends[i].second).latency_s, latency) || !std::isfinite(r[i]) ||
        !same(r[i], r.front()))
      return false;
  return true;
}

int CommWorld::driver_channel() const
{
  const auto driver = driver_channel_.find(sg4::this_actor::get_pid());
  return driver == driver_channel_.end() ? 0 : driver->second;
}

namespace {
/** The places of `after` in order of their offsets, equal offsets in their order (run_staggered posts them so). */
std::vector<std::size_t> in_posting_order(const std::vector<double>& after)
{
  std::vector<std::size_t> order(after.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return after[a] < after[b]; });
  return order;
}
} // namespace

void CommWorld::run_staggered(const std::vector<Flow>& flows, const std::vector<double>& after)
{
  if (mirror_) { // every lane's flows are all the network carries: computed, or not mirrored (Collective::posts_apart)
    if (flows.empty())
      return;
    if (!computed() || mirror_->classes) // a class's representative would stand for flows posted at other instants
      throw std::logic_error("mirrored lanes: flows posted apart in a mirror of classes, or one SimGrid runs "
                             "(run_staggered)");
    run_fluid_staggered(flows, after);
    return;
  }
  const std::vector<std::size_t> order = in_posting_order(after);
  const double now = sg4::Engine::get_clock();
  std::vector<Flow> posted, batch;
  std::vector<sg4::CommPtr> comms;
  for (std::size_t k = 0; k < order.size();) {
    batch.clear();
    const double at = after[order[k]];
    for (; k < order.size() && after[order[k]] == at; ++k)
      batch.push_back(flows[order[k]]);
    delay_until(now + at);
    for (auto& c : start_own(batch))
      comms.push_back(std::move(c));
    posted.insert(posted.end(), batch.begin(), batch.end());
  }
  finish_own(posted, comms);
}

std::vector<sg4::CommPtr> CommWorld::start_own(const std::vector<Flow>& flows)
{
  for (const auto& f : flows)
    count(f);
  return post(flows);
}

void CommWorld::account(const Flow& f, double start_s, double end_s)
{
  count(f);
  if (on_transfer_)
    on_transfer_(f.from, f.to, f.bytes, start_s, end_s, driver_channel());
}

void CommWorld::account(const Flow& f, double start_s, double end_s, const Route& route, int channel)
{
  count(f);
  report(f.from, f.to, f.bytes, start_s, end_s, channel, &route);
}

void CommWorld::load(const std::vector<Flow>& flows)
{
  if (mirror_ && !flows.empty()) { // one component per class, as run_flows (set_mirror was told of these flows)
    std::vector<std::size_t> first;
    std::vector<Flow> posted;
    std::vector<std::uint64_t> tags;
    const PlanShape& shape = mirror_layout(flows);
    choose_representatives(flows, shape, posted, first, nullptr, computed() ? &tags : nullptr);
    if (computed())
      run_fluid(posted, shape, tags);
    else
      for (const auto& c : post(posted))
        c->wait();
    return;
  }
  for (const auto& c : post(flows))
    c->wait();
}

void CommWorld::count(const Flow& f)
{
  sent_[f.from] += f.bytes;
  received_[f.to] += f.bytes;
  messages_[f.from] += 1;
}

std::vector<sg4::CommPtr> CommWorld::post(const std::vector<Flow>& flows)
{
  std::vector<sg4::CommPtr> comms;
  comms.reserve(flows.size());
  for (const auto& f : flows) {
    comms.push_back(sg4::Comm::sendto_init(hosts_[f.from], hosts_[f.to]));
    comms.back()->set_payload_size(f.bytes);
  }
  flows_posted_ += flows.size();
  // One simcall starts them all: inside it (in SimGrid's kernel) each start runs directly, and calls the factor
  // callbacks (install_factors) with the flow's message size.
  simgrid::kernel::actor::simcall_answered([&comms, &flows] {
    for (std::size_t i = 0; i < comms.size(); ++i) {
      g_message_bytes = flows[i].message_bytes > 0 ? double(flows[i].message_bytes) : -1;
      comms[i]->start();
    }
    g_message_bytes = -1;
  });
  return comms;
}

void CommWorld::finish_own(const std::vector<Flow>& flows, const std::vector<sg4::CommPtr>& comms)
{
  for (const auto& c : comms)
    c->wait();
  const int channel = driver_channel();
  for (std::size_t i = 0; i < flows.size(); ++i)
    transferred(flows[i].from, flows[i].to, flows[i].bytes, channel, comms[i]);
}

struct CommWorld::Fluid : std::enable_shared_from_this<CommWorld::Fluid> {
  analytical::FluidNetwork net;
  std::size_t links_known = 0; ///< links whose capacity net was given (the first of link_ids_, by number)
  sg4::Host* host = nullptr;   ///< where the timers run
  std::string tag;
  /** A driver waiting for its flows, asleep on its semaphore (no timeout) until they are all done. */
  struct Waiter {
    sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
    std::size_t left = 0; ///< its flows not done yet
    bool asleep = false;
  };
  std::vector<Waiter*> owner; ///< per flow id of the network: the driver waiting for it (nullptr: none)
  /** Starts `f` at `now` (the time processed to), flow number `tag & 0xffffffff` of its layout `shape` (a computed
   *  mirror's), as SimGrid's CM02 model would run it under `stack`, for `w` to wait for; returns its id. */
  std::size_t start(double now, const Flow& f, const PlanShape& shape, std::uint64_t tag, const StackProfile& stack,
                    Waiter& w);
  /** Puts `self` to sleep until its flows are all done (at once if they are). */
  void wait(Waiter& self);
  /** A daemon that sleeps until `at`, processes the events due then, and parks on `go` until armed again. Plain
   *  sleeps and untimed semaphores: drivers that waited with a timeout instead (a condition variable's wait_until, a
   *  semaphore's acquire_timeout) crashed inside SimGrid 3.32 in this use, where a waiter is woken at the very instant
   *  its timeout ends (docs/performance.md). */
  struct Timer {
    sg4::SemaphorePtr go = sg4::Semaphore::create(0);
    double at = 0;
  };
  std::vector<std::shared_ptr<Timer>> parked;
  std::multiset<double> armed; ///< when the timers sleeping wake
  std::size_t timers = 0;

  /** Processes the events due at `now`, wakes the drivers whose flows are all done, and makes sure a timer wakes at
   *  the next event. Simcalls last: other actors may run in between, and must see the network whole. */
  void process(double now)
  {
    std::vector<Waiter*> done;
    if (net.advance(now))
      for (std::size_t id : net.finished()) {
        Waiter* w = owner[id];
        owner[id] = nullptr;
        if (--w->left == 0 && w->asleep) {
          w->asleep = false;
          done.push_back(w);
        }
      }
    const double next = net.next_event();
    if (std::isfinite(next))
      arm(next);
    for (Waiter* w : done)
      w->wake->release();
  }

  void arm(double at)
  {
    if (!armed.empty() && *armed.begin() <= at)
      return; // a timer wakes no later, and arms the next
    armed.insert(at);
    std::shared_ptr<Timer> timer;
    if (!parked.empty()) {
      timer = parked.back();
      parked.pop_back();
    } else {
      timer = std::make_shared<Timer>();
      // The network may be gone when a timer wakes (its world destroyed while simulated time goes on): the timer then
      // ends. A parked one stays blocked, a daemon, until the simulation ends.
      sg4::Actor::create(tag + "-fluid-timer" + std::to_string(timers++), host, [fluid = weak_from_this(), timer] {
        for (;;) {
          timer->go->acquire();
          sg4::this_actor::sleep_until(timer->at);
          const std::shared_ptr<Fluid> f = fluid.lock();
          if (!f)
            return;
          f->armed.erase(f->armed.find(timer->at));
          f->parked.push_back(timer);
          f->process(sg4::Engine::get_clock());
        }
      })->daemonize();
    }
    timer->at = at;
    timer->go->release();
  }
};

bool CommWorld::fluid_in_flight() const
{
  return fluid_ && fluid_->net.flows() > 0;
}

void set_cm02(analytical::FluidNetwork::FlowSpec& spec, const StackProfile& stack, double route_latency_s,
              double route_bandwidth, double message_bytes, double bytes)
{
  spec.latency_s = route_latency_s * factor_for(stack.latency_factor, message_bytes);
  spec.penalty = spec.latency_s > 0 ? route_latency_s : 1.0;
  spec.bound = std::isfinite(route_bandwidth) ? route_bandwidth : 0.0;
  spec.work = bytes / factor_for(stack.bandwidth_factor, message_bytes);
}

CommWorld::Fluid& CommWorld::fluid_ready()
{
  if (!fluid_) {
    fluid_ = std::make_shared<Fluid>();
    fluid_->host = hosts_.front();
    fluid_->tag = tag_;
  }
  // A mirror without classes (flows posted apart) solves by components: a parameter server's pulls, one component
  // whatever else is in flight, become one processor-sharing group (analytical::FluidNetwork, Group). Set while no
  // flow is in flight (set_mirror needs none).
  if (!fluid_in_flight())
    fluid_->net.solve_by_components(mirror_ && !mirror_->classes);
  if (fluid_->links_known < link_ids_.size()) { // every link numbered so far: its capacity, once
    for (const auto& [link, id] : link_ids_)
      fluid_->net.set_capacity(id, link->get_bandwidth());
    fluid_->links_known = link_ids_.size();
  }
  return *fluid_;
}

std::size_t CommWorld::Fluid::start(double now, const Flow& f, const PlanShape& shape, std::uint64_t tag,
                                    const StackProfile& stack, Waiter& w)
{
  const PlanShape::FluidRoute& r = shape.fluid[tag & 0xffffffffu]; // the flow's place in its layout
  const double message = f.message_bytes > 0 ? double(f.message_bytes) : double(f.bytes);
  analytical::FluidNetwork::FlowSpec spec;
  spec.links.data = shape.fluid_links.data() + r.first; // a view: the layout lives as long as the mirror
  spec.links.size = r.count;
  set_cm02(spec, stack, r.latency_s, r.bandwidth, message, double(f.bytes));
  spec.tag = tag;
  const std::size_t id = net.start(now, spec);
  if (owner.size() <= id)
    owner.resize(id + 1, nullptr);
  owner[id] = &w;
  ++w.left;
  return id;
}

void CommWorld::Fluid::wait(Waiter& self)
{
  if (self.left == 0)
    return; // every flow has ended already
  self.asleep = true;
  if (!std::isfinite(net.next_event()))
    throw Error("internal: a mirrored flow never ends (CommWorld::run_fluid, run_fluid_staggered)");
  self.wake->acquire(); // until process() wakes it, or its release if it has already
}

std::vector<double> CommWorld::run_fluid(const std::vector<Flow>& flows, const PlanShape& shape,
                                         const std::vector<std::uint64_t>& tags)
{
  // Each lane's driver starts its flows in the shared network and sleeps until they are all done; a timer wakes at
  // every event (a latency paid, a flow done), processes it, and wakes the drivers whose flows are done. SimGrid's
  // actors run one at a time and switch only at simcalls, which come after every change here.
  if (flows.empty())
    return {};
  Fluid& fluid = fluid_ready();
  const double now = sg4::Engine::get_clock();
  fluid.process(now); // the events due now, before these flows start (a timer due now may not have run yet)
  Fluid::Waiter self;
  std::vector<std::size_t> ids;
  ids.reserve(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i)
    ids.push_back(fluid.start(now, flows[i], shape, tags[i], options_.stack, self));
  flows_computed_ += flows.size();
  fluid.process(now);
  fluid.wait(self);
  std::vector<double> ends;
  ends.reserve(ids.size());
  for (std::size_t id : ids) {
    ends.push_back(fluid.net.end(id));
    fluid.net.release(id);
  }
  return ends;
}

void CommWorld::run_fluid_staggered(const std::vector<Flow>& flows, const std::vector<double>& after)
{
  // As run_staggered's actor posts them in SimGrid (each distinct offset after delay_until), but into the shared
  // network: a layout's flows, every one of them (classes need one post time per class).
  const PlanShape& shape = mirror_layout(flows);
  const std::vector<std::size_t> order = in_posting_order(after);
  const std::uint64_t layout = layout_tag(shape);
  Fluid& fluid = fluid_ready();
  Fluid::Waiter self;
  std::vector<std::size_t> ids(flows.size());
  std::vector<double> starts(flows.size());
  const double t0 = sg4::Engine::get_clock();
  for (std::size_t k = 0; k < order.size();) {
    const double at = after[order[k]];
    delay_until(t0 + at);
    const double now = sg4::Engine::get_clock();
    fluid.process(now); // the events due now first, as run_fluid
    for (; k < order.size() && after[order[k]] == at; ++k) {
      const std::size_t i = order[k];
      count(flows[i]);
      ids[i] = fluid.start(now, flows[i], shape, layout | std::uint64_t(i), options_.stack, self);
      starts[i] = now;
      ++flows_computed_;
    }
    fluid.process(now); // a timer armed for the next event
  }
  fluid.wait(self);
  const int channel = driver_channel();
  for (std::size_t i : order) { // reported in the order posted, as finish_own reports run_staggered's
    report(flows[i].from, flows[i].to, flows[i].bytes, starts[i], fluid.net.end(ids[i]), channel, shape.routes[i]);
    fluid.net.release(ids[i]);
  }
}

struct CommWorld::Helper {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr wake = sg4::ConditionVariable::create();
  const std::function<void()>* job = nullptr; ///< set by fork_join, taken by the helper
  bool done = false;
};

void CommWorld::fork_join(int endpoint, int key, const std::function<void()>& first,
                          const std::function<void()>& second)
{
  auto& slot = helpers_[(static_cast<std::uint64_t>(endpoint) << 32) | static_cast<std::uint32_t>(key)];
  if (!slot) {
    slot = std::make_shared<Helper>();
    auto helper = slot; // the actor keeps it: a daemon outlives the world, blocked until the simulation ends
    sg4::Actor::create(tag_ + "-helper" + std::to_string(endpoint) + "-" + std::to_string(key), hosts_[endpoint],
                       [helper] {
                         for (;;) {
                           const std::function<void()>* job = nullptr;
                           {
                             std::unique_lock<sg4::Mutex> lock(*helper->mutex);
                             helper->wake->wait(lock, [&helper] { return helper->job != nullptr; });
                             std::swap(job, helper->job);
                           }
                           (*job)();
                           std::unique_lock<sg4::Mutex> lock(*helper->mutex);
                           helper->done = true;
                           helper->wake->notify_all();
                         }
                       })
        ->daemonize();
  }
  Helper& h = *slot;
  {
    std::unique_lock<sg4::Mutex> lock(*h.mutex);
    h.done = false;
    h.job = &second;
    h.wake->notify_all();
  }
  first();
  std::unique_lock<sg4::Mutex> lock(*h.mutex);
  h.wake->wait(lock, [&h] { return h.done; });
}

void CommWorld::delay(double delay_s)
{
  if (delay_s > 0)
    sg4::this_actor::sleep_for(delay_s);
}

void CommWorld::delay_until(double t)
{
  // A plan's times are sums of doubles: a target that is the current instant may come out a few 1e-16 s after the
  // clock. SimGrid sleeps at least its resolution (surf/precision, 1 ns by default: a whole step later), and the
  // message level, whose ranks reach the same sums by their own transfers and costs, does not sleep to them: below the
  // resolution the target is now. (A cost of its own, delay(), is slept however short, as the message level does.)
  static const double resolution_s = simgrid::config::get_value<double>("surf/precision");
  const double delay_s = t - sg4::Engine::get_clock();
  if (delay_s >= resolution_s)
    sg4::this_actor::sleep_for(delay_s);
}

void CommWorld::reduce(int /*self*/, std::uint64_t bytes)
{
  // A fixed time, like I/O: it neither slows down nor is slowed down by the GPU's compute stream.
  if (options_.reduce_s_per_byte > 0 && bytes > 0)
    sg4::this_actor::sleep_for(options_.reduce_s_per_byte * double(bytes));
}

analytical::Hop CommWorld::route(int from, int to) const
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  hosts_[from]->route_to(hosts_[to], links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto* link : links)
    bandwidth = std::min(bandwidth, link->get_bandwidth());
  return {latency, bandwidth};
}

std::vector<std::string> CommWorld::route_link_names(int from, int to) const
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  hosts_[from]->route_to(hosts_[to], links, &latency);
  std::vector<std::string> names;
  for (const auto* link : links)
    names.push_back(link->get_name());
  return names;
}

Group::Group(CommWorld& world)
    : world_(world)
{
  for (int r = 0; r < world.size(); ++r)
    members_.push_back(r);
}

bool Group::use_flow(AlgorithmId id) const
{
  return uses_flow(id, options().fidelity, size()) && flow_form_allowed(id, options());
}

double Group::ring_max_latency()
{
  if (ring_max_latency_ < 0) {
    ring_max_latency_ = 0;
    for (int i = 0; i < size(); ++i)
      ring_max_latency_ = std::max(ring_max_latency_, route(i, (i + 1) % size()).alpha_s);
  }
  return ring_max_latency_;
}

bool Group::arrive()
{
  if (++arrived_ < size())
    return false;
  arrived_ = 0;
  return true;
}

void Group::depart()
{
  if (!barrier_)
    barrier_ = sg4::Barrier::create(static_cast<unsigned>(size()));
  barrier_->wait();
}

double Group::cached(int key, const std::function<double()>& compute)
{
  auto it = cached_.find(key);
  if (it == cached_.end())
    it = cached_.emplace(key, compute()).first;
  return it->second;
}

double rendezvous_round_trip_s(const CollectiveOptions& o, double hop_latency_s)
{
  // Request and acknowledgement: two control messages (1 byte), each paying both ends' overheads and the latency.
  const StackProfile& s = o.stack;
  return 2 *
         (o.msg_overhead_s + s.send_overhead_s + s.recv_overhead_s + hop_latency_s * factor_for(s.latency_factor, 1.0));
}

std::uint64_t chunk_bytes(std::uint64_t bytes, std::uint64_t parts, std::uint64_t index)
{
  return bytes / parts + (index < bytes % parts ? 1 : 0);
}

} // namespace ddlsim::collectives
