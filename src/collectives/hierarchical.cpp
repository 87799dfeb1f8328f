// Hierarchical allreduce: reduce to each node's leader, allreduce among leaders, broadcast in the node.
#include "analytical/fluid_network.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace ddlsim::collectives {
namespace {

/** The nodes of a group (computed once per group): each node's members, leader (lowest member) first, in order
 *  of first appearance, and the leaders as a group of their own. */
struct Layout {
  std::vector<std::vector<int>> nodes; ///< member ids
  std::vector<int> node_of_member;     ///< index into nodes
  std::unique_ptr<Group> leaders;      ///< the leaders' endpoints, in node order
  std::size_t largest = 0;             ///< members of the largest node
  /// Per member: its route to its node's leader and back (a leader: none), as the gather and the scatter cross them.
  std::vector<std::array<const CommWorld::Route*, 2>> routes;
  /** No link shared by the gather or scatter flows of two nodes (each node's on links of its own), so that every
   *  node's may run at its own times (member-timed). */
  bool nodes_private = false;
  /** xor_symmetric_nodes(), once asked (-1: not yet). */
  int xor_symmetric = -1;
};

bool nodes_private(const Layout& l)
{
  std::vector<int> owner; // per link number: the node whose flows cross it (-1: none yet)
  for (std::size_t n = 0; n < l.nodes.size(); ++n)
    for (std::size_t i = 1; i < l.nodes[n].size(); ++i)
      for (const auto* route : l.routes[static_cast<std::size_t>(l.nodes[n][i])])
        for (std::uint32_t id : route->shared_ids) {
          if (id >= owner.size())
            owner.resize(id + 1, -1);
          if (owner[id] >= 0 && owner[id] != static_cast<int>(n))
            return false;
          owner[id] = static_cast<int>(n);
        }
  return true;
}

Layout layout_of(Group& g)
{
  Layout l;
  CommWorld& world = g.world();
  std::unordered_map<int, int> index; // world node -> index into l.nodes
  std::vector<int> leaders;
  for (int m = 0; m < g.size(); ++m) {
    auto [it, fresh] = index.emplace(world.node(g.endpoint(m)), static_cast<int>(l.nodes.size()));
    if (fresh) {
      l.nodes.emplace_back();
      leaders.push_back(g.endpoint(m));
    }
    l.nodes[it->second].push_back(m);
    l.node_of_member.push_back(it->second);
  }
  for (const auto& n : l.nodes)
    l.largest = std::max(l.largest, n.size());
  l.leaders = std::make_unique<Group>(world, std::move(leaders), g.channel());
  l.routes.assign(static_cast<std::size_t>(g.size()), {nullptr, nullptr});
  for (const auto& local : l.nodes)
    for (std::size_t i = 1; i < local.size(); ++i) {
      const int member = g.endpoint(local[i]), leader = g.endpoint(local[0]);
      l.routes[static_cast<std::size_t>(local[i])] = {&world.cached_route(member, leader),
                                                      &world.cached_route(leader, member)};
    }
  l.nodes_private = nodes_private(l);
  return l;
}

/** Hier's flow form member-timed (every member from its own start to its own end, as at message level): in a
 *  member-timed group whose nodes' gather and scatter flows keep to links of their own, over the tree where its own
 *  form is member-timed among the leaders (member_timed_tree). Sets the leaders' group member-timed accordingly, and
 *  with several lanes a whole stream where the group is one (their program: Hierarchical::stream_program). */
bool member_timed_hier(Group& g, Layout& l)
{
  const AlgorithmId inter = g.options().inter_algorithm;
  const bool timed = g.member_timed() && g.world().solo() && l.nodes_private &&
                     (inter == AlgorithmId::Tree || inter == AlgorithmId::Dbtree) && l.leaders->size() > 1;
  l.leaders->set_member_timed(timed);
  if (g.world().lanes() > 1) // several lanes: a whole stream where every lane's group is one (HierStream)
    l.leaders->set_whole_stream(timed && g.whole_stream());
  return timed && (inter == AlgorithmId::Tree ? member_timed_tree(*l.leaders) : member_timed_dbtree(*l.leaders));
}

/** Every node's flows between its members and its leader, node after node, member after member: the gather's
 *  (`to_leader`) or the scatter's. */
std::vector<Flow> node_flows(Group& g, const Layout& l, std::uint64_t bytes, bool to_leader)
{
  std::vector<Flow> flows;
  for (const auto& local : l.nodes)
    for (std::size_t i = 1; i < local.size(); ++i) {
      const int member = g.endpoint(local[i]), leader = g.endpoint(local[0]);
      flows.push_back(to_leader ? Flow{member, leader, bytes} : Flow{leader, member, bytes});
    }
  return flows;
}

/** True when, for every m < L (L leaders, a power of two, nodes of one size), mapping each node n's i-th member to
 *  node n ^ m's i-th member (other endpoints kept) maps the gather's flows, the scatter's and every step of rd among
 *  the leaders (leader v to v ^ 2^k) onto themselves, and their routes onto the images' link for link
 *  (CommWorld::symmetric_under). These are every flow of hier over rd's plans, whatever the tensor (each plan's flows
 *  carry one size), so in a lanes-solo world (several streams of these plans, nothing else) the leaders' XOR
 * translations are symmetries of all the network carries. That rests on every lane running this hier: hier is never a
 * side of a size or rank switch (algorithm_spec.cpp takes only flat algorithms there), and its inter algorithm is one.
 * Checking the generators m = 2^j suffices: their products are the rest. Nodes of one size and L a power of two come
 * first: the maps below index node n ^ m's i-th member. */
bool xor_symmetric_nodes(Group& g, const Layout& l)
{
  const std::size_t leaders = l.nodes.size();
  if (leaders < 2 || (leaders & (leaders - 1)) != 0 ||
      std::any_of(l.nodes.begin(), l.nodes.end(), [&](const auto& n) { return n.size() != l.largest; }))
    return false;
  CommWorld& world = g.world();
  std::vector<std::vector<Flow>> sets = {node_flows(g, l, 1, true), node_flows(g, l, 1, false)};
  for (std::size_t mask = 1; mask < leaders; mask <<= 1) {
    sets.emplace_back();
    for (std::size_t v = 0; v < leaders; ++v)
      sets.back().push_back({g.endpoint(l.nodes[v][0]), g.endpoint(l.nodes[v ^ mask][0]), 1});
  }
  sets.erase(std::remove_if(sets.begin(), sets.end(), [](const auto& s) { return s.empty(); }), sets.end());
  for (std::size_t m = 1; m < leaders; m <<= 1) {
    std::vector<int> perm(static_cast<std::size_t>(world.endpoints()));
    for (std::size_t e = 0; e < perm.size(); ++e)
      perm[e] = static_cast<int>(e);
    for (std::size_t n = 0; n < leaders; ++n)
      for (std::size_t i = 0; i < l.largest; ++i)
        perm[static_cast<std::size_t>(g.endpoint(l.nodes[n][i]))] = g.endpoint(l.nodes[n ^ m][i]);
    if (!world.symmetric_under(sets, perm))
      return false;
  }
  return true;
}

/** The member-timed plan (member_timed_hier): the message level's steps at each member's own times. A member's send
 *  to its leader starts once it is posted (its start + its costs of sending) and the leader is there (it posts its
 *  receives at its start); the leader pays a receive overhead per message and reduces (G - 1) gamma M after the last
 *  one lands; the leaders' tree runs from those times (member-timed); the leader's k-th send back is posted its first
 *  k sends' costs after its tree ends, and each member ends when its own lands (and its receive overhead is paid), the
 *  leader when its last send does. Each node's flows run in SimGrid at the node's times
 *  (CommWorld::run_timed: its links are its own). */
void timed_plan(Group& g, Layout& layout, const Collective& inter, std::uint64_t bytes)
{
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  Group::MemberTimes& times = *g.member_times();
  const std::size_t nodes = layout.nodes.size();
  // As at message level (Hierarchical::allreduce, CommWorld::post_send, received): a member posts its send after its
  // costs of sending (CommWorld::send_cost_s: o alone for the ideal stack), the leader its receives when it starts;
  // the leader pays a receive overhead per landed message, then sums. The scatter's sends leave one after the other,
  // each after its costs; a member pays its receive overhead when its message has landed.
  const double recv_s = o.stack.recv_overhead_s;
  std::vector<Flow> flows = node_flows(g, layout, bytes, true);
  std::vector<double> post_at;
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    for (std::size_t i = 1; i < local.size(); ++i, ++f)
      post_at.push_back(std::max(times.starts[local[i]] + world.send_cost_s(flows[f].from, flows[f].to, bytes),
                                 times.starts[local[0]]));
  }
  std::vector<double> landed = world.run_timed(flows, post_at);
  Group::MemberTimes leaders;
  leaders.starts.resize(nodes);
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    double gathered = times.starts[local[0]];
    for (std::size_t i = 1; i < local.size(); ++i)
      gathered = std::max(gathered, landed[f++]);
    leaders.starts[n] =
        gathered + recv_s * double(local.size() - 1) + o.reduce_s_per_byte * double(bytes) * double(local.size() - 1);
  }
  layout.leaders->set_member_times(&leaders);
  CommWorld::delay_until(*std::max_element(leaders.starts.begin(), leaders.starts.end()));
  const bool ran = inter.flow_plan(*layout.leaders, bytes);
  layout.leaders->set_member_times(nullptr);
  if (!ran || leaders.ends.size() != nodes)
    throw Error("internal: hier's member-timed form needs its inter algorithm's member-timed form");
  flows = node_flows(g, layout, bytes, false);
  post_at.clear();
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    double posted = 0; // the leader's sends one after the other
    for (std::size_t k = 1; k < layout.nodes[n].size(); ++k, ++f) {
      posted += world.send_cost_s(flows[f].from, flows[f].to, bytes);
      post_at.push_back(leaders.ends[n] + posted);
    }
  }
  landed = world.run_timed(flows, post_at);
  times.ends.assign(static_cast<std::size_t>(g.size()), 0.0);
  double last = 0;
  for (std::size_t n = 0, f = 0; n < nodes; ++n) {
    const auto& local = layout.nodes[n];
    double leader_end = leaders.ends[n];
    for (std::size_t k = 1; k < local.size(); ++k, ++f) {
      times.ends[local[k]] = landed[f] + recv_s;
      leader_end = std::max(leader_end, landed[f]);
    }
    times.ends[local[0]] = leader_end;
    last = std::max(last, leader_end);
  }
  CommWorld::delay_until(last);
}

/** @brief hier over the pipelined trees for every aggregation of several in-order streams (lanes), as one program:
 *  each lane's aggregation is timed_plan's steps at each member's own times (the gather to each node's leader, the
 *  leader's receive overheads and reduction, the leaders' trees, the scatter), every member going on to its next
 *  aggregation in the lane at the later of its readiness and its end of the one before. The leaders' trees run in
 *  their own lanes' program (TreeStream, whose clock and network this one shares: TreeStream::Outer), and the nodes'
 *  flows in the same network, so that the two lanes' transfers share the links they meet on (a leader's NIC, a
 *  node's NVLink, a PCIe node's leader's link) as at message level. The trees' network keeps every link the nodes'
 *  flows cross (TreeStream::keep_links): it leaves out only links the trees' transfers alone cannot fill. */
class HierStream final : public StreamProgram, public TreeStream::Outer {
public:
  HierStream(Group& g, Layout& layout, std::unique_ptr<TreeStream> trees)
      : g_(g)
      , world_(g.world())
      , o_(g.options())
      , layout_(layout)
      , trees_(std::move(trees))
      , ranks_(static_cast<std::size_t>(g.size()))
      , nodes_(layout.nodes.size())
  {
    trees_->set_outer(this);
    trees_->set_floor_sink([this](double) { sink_floor(); }); // (this program's floor: its members' starts)
  }

  bool set_lanes(const std::vector<int>& channels) override
  {
    if (!trees_->set_lanes(channels)) // (its network has the nodes' links: Hierarchical::stream_program kept them)
      return false;
    lanes_.assign(channels.size(), Lane{});
    for (std::size_t l = 0; l < channels.size(); ++l)
      lanes_[l].channel = channels[l];
    queues_.reset(channels.size(), ranks_);
    node_.assign(channels.size() * nodes_, Node{});
    flow_start_.assign(channels.size() * ranks_ * 2, 0.0);
    return true;
  }

  void give(int lane, int member, std::uint64_t bytes, double ready_s) override
  {
    const std::size_t l = static_cast<std::size_t>(lane), r = static_cast<std::size_t>(member);
    if (l >= lanes_.size() || r >= ranks_)
      throw Error("internal: hier's lanes' program given an aggregation of another group or lane");
    const std::size_t mi = l * ranks_ + r;
    if (queues_.size_next(mi, bytes, call_cost_s(bytes), "hier's lanes' program"))
      trees_->add_aggregation(lane, bytes);
    if (queues_.give(mi, ready_s, trees_->now())) // idle: it starts this one next
      schedule(l, r);
  }

  std::size_t run(const std::vector<char>& open, std::vector<Ended>& ended) override
  {
    open_ = &open;
    ended_ = &ended;
    trees_->set_horizon(horizon_s_);
    const std::size_t steps = trees_->run(no_watch_, no_ends_);
    open_ = nullptr;
    ended_ = nullptr;
    return steps;
  }

  bool idle() const override { return queues_.idle(); }
  double floor_s() const override { return queues_.floor_s(trees_->now()); }

  void trees_ended(std::size_t lane, std::size_t node) override
  {
    // The leader's trees ended: it posts its sends to its members one after the other, each after its costs
    // (timed_plan's scatter); with none, it ends now.
    const std::vector<int>& local = layout_.nodes[node];
    const std::uint64_t bytes = bytes_of(lane, static_cast<std::size_t>(local.front()));
    double posted = 0;
    for (std::size_t i = 1; i < local.size(); ++i) {
      const std::size_t r = static_cast<std::size_t>(local[i]);
      posted += world_.send_cost_s(g_.endpoint(local.front()), g_.endpoint(local[i]), bytes);
      if (posted > 0)
        trees_->at(trees_->now() + posted, lane * ranks_ + r, kScatter);
      else
        start(lane, r, false);
    }
    if (local.size() == 1)
      rank_done(lane, static_cast<std::size_t>(local.front()));
  }

  void woken(std::size_t who, int what) override
  {
    if (what == kTrees) { // a leader's receive overheads and reduction done: its trees
      const std::size_t i = who - lanes_.size() * ranks_;
      trees_->begin_member(static_cast<int>(i / nodes_), static_cast<int>(i % nodes_));
      return;
    }
    const std::size_t l = who / ranks_, r = who % ranks_;
    switch (what) {
    case kStart: {
      queues_.started(who, trees_->now());
      const double delay = queues_.delay_s(l, queues_.at(who).k);
      if (delay > 0)
        trees_->at(trees_->now() + delay, who, kBegin); // a stack's call cost first (StackCall)
      else
        begin(l, r);
      break;
    }
    case kBegin:
      begin(l, r);
      break;
    case kPosted:
      posted(l, r);
      break;
    case kScatter:
      start(l, r, false);
      break;
    case kEnd:
      rank_done(l, r);
      break;
    default:
      throw Error("internal: hier's lanes' program woken for nothing");
    }
  }

  void flow_ended(std::size_t token) override
  {
    const std::size_t who = token / 2, l = who / ranks_, r = who % ranks_;
    const bool up = token % 2 == 0;
    const std::size_t n = static_cast<std::size_t>(layout_.node_of_member[r]);
    const int leader = layout_.nodes[n].front();
    const std::uint64_t bytes = bytes_of(l, r);
    const int from = g_.endpoint(up ? static_cast<int>(r) : leader),
              to = g_.endpoint(up ? leader : static_cast<int>(r));
    world_.account({from, to, bytes}, flow_start_[token], trees_->now(), *layout_.routes[r][up ? 0 : 1],
                   lanes_[l].channel);
    Node& x = node_[l * nodes_ + n];
    const std::size_t members = layout_.nodes[n].size();
    if (up) { // the gather: once every member's has landed, the leader's receive overheads and reduction
      if (++x.landed == members - 1)
        gathered(l, n);
      return;
    }
    // The scatter: the member ends after its receive overhead; the leader once its last send has landed.
    if (o_.stack.recv_overhead_s > 0)
      trees_->at(trees_->now() + o_.stack.recv_overhead_s, who, kEnd);
    else
      rank_done(l, r);
    if (++x.scattered == members - 1)
      rank_done(l, static_cast<std::size_t>(leader));
  }

private:
  enum : int { kStart, kBegin, kPosted, kScatter, kEnd, kTrees };
  /** A node in one lane, in its leader's current aggregation (queues_): whether the leader has started it, its
   *  members' sends posted before then, the gather's and the scatter's flows landed. */
  struct Node {
    bool started = false;
    std::vector<std::size_t> waiting;
    std::size_t landed = 0, scattered = 0;
  };
  /** A lane (its aggregations and each member's place in them: queues_). */
  struct Lane {
    int channel = 0;
  };

  bool is_leader(std::size_t r) const
  {
    return layout_.nodes[static_cast<std::size_t>(layout_.node_of_member[r])].front() == static_cast<int>(r);
  }
  std::size_t k_of(std::size_t l, std::size_t r) { return queues_.at(l * ranks_ + r).k; }
  std::uint64_t bytes_of(std::size_t l, std::size_t r) { return queues_.bytes(l, k_of(l, r)); }

  void schedule(std::size_t l, std::size_t r)
  {
    trees_->at(queues_.start_at(l * ranks_ + r, trees_->now()), l * ranks_ + r, kStart);
  }

  /** Member r starts its aggregation: a leader posts its receives (the sends posted before start now), a member
   *  posts its send after its costs. */
  void begin(std::size_t l, std::size_t r)
  {
    const std::size_t n = static_cast<std::size_t>(layout_.node_of_member[r]);
    if (!is_leader(r)) {
      const int leader = layout_.nodes[n].front();
      const double cost = world_.send_cost_s(g_.endpoint(static_cast<int>(r)), g_.endpoint(leader), bytes_of(l, r));
      if (cost > 0)
        trees_->at(trees_->now() + cost, l * ranks_ + r, kPosted);
      else
        posted(l, r);
      return;
    }
    Node& x = node_[l * nodes_ + n];
    x.started = true;
    for (std::size_t w : x.waiting)
      start(l, w, true);
    x.waiting.clear();
    if (layout_.nodes[n].size() == 1)
      gathered(l, n);
  }

  /** Member r's send to its leader is posted: it starts once the leader has started the same aggregation. */
  void posted(std::size_t l, std::size_t r)
  {
    const std::size_t n = static_cast<std::size_t>(layout_.node_of_member[r]);
    Node& x = node_[l * nodes_ + n];
    if (x.started && k_of(l, static_cast<std::size_t>(layout_.nodes[n].front())) == k_of(l, r))
      start(l, r, true);
    else
      x.waiting.push_back(r);
  }

  void start(std::size_t l, std::size_t r, bool up)
  {
    const std::size_t token = (l * ranks_ + r) * 2 + (up ? 0 : 1);
    flow_start_[token] = trees_->now();
    trees_->start_flow(*layout_.routes[r][up ? 0 : 1], bytes_of(l, r), token, r * 2 + (up ? 0 : 1));
  }

  /** Every member's send has landed at node n's leader: its receive overheads and reduction (timed_plan), then its
   *  trees. */
  void gathered(std::size_t l, std::size_t n)
  {
    const double others = double(layout_.nodes[n].size() - 1);
    const std::uint64_t bytes = bytes_of(l, static_cast<std::size_t>(layout_.nodes[n].front()));
    const double d = o_.stack.recv_overhead_s * others + o_.reduce_s_per_byte * double(bytes) * others;
    if (d > 0)
      trees_->at(trees_->now() + d, lanes_.size() * ranks_ + l * nodes_ + n, kTrees);
    else
      trees_->begin_member(static_cast<int>(l), static_cast<int>(n));
  }

  void rank_done(std::size_t l, std::size_t r)
  {
    if (is_leader(r)) { // its node goes on to its next aggregation (members' sends posted early wait for it)
      Node& x = node_[l * nodes_ + static_cast<std::size_t>(layout_.node_of_member[r])];
      x.started = false;
      x.landed = x.scattered = 0;
    }
    bool stop = false;
    const bool next = queues_.end(l * ranks_ + r, trees_->now(), open_, watched_lane_, watched_k_, ended_, stop);
    if (stop)
      trees_->stop();
    if (next)
      schedule(l, r);
  }

  Group& g_;
  CommWorld& world_;
  const CollectiveOptions& o_;
  Layout& layout_;
  std::unique_ptr<TreeStream> trees_;
  std::size_t ranks_, nodes_;
  std::vector<Lane> lanes_;
  LaneQueues queues_;              ///< every member's aggregations in each lane, member r of lane l at l * ranks + r
  std::vector<Node> node_;         ///< [lane * nodes + n]
  std::vector<double> flow_start_; ///< per flow token: when it started
  const std::vector<char> no_watch_;
  std::vector<Ended> no_ends_;
  const std::vector<char>* open_ = nullptr;
  std::vector<Ended>* ended_ = nullptr;
};

/** @brief hier over rd with the nodes as images: node 0's flows, computed in a network of the classes of links.
 *  Where the nodes' XOR translations are symmetries of every flow hier over rd makes (xor_symmetric_nodes), node m's
 *  flows are node 0's mapped by XOR m, route for route and link for link; so, when every node's members start each
 *  aggregation when node 0's do, every node does what node 0 does at the same instants, and the links of one class (a
 *  link and its images) carry the same load. The quotient network has a link per class, of the bandwidth times the
 *  class's size over the nodes' count (RecursiveDoubling::Blocks argues it for rd's blocks): max-min on it gives node
 *  0's flows their rates in the whole network. Node 0's transfers are its members' gather flows (slots 0 .. G-2,
 *  member i + 1 to the leader), its scatter flows (G-1 .. 2G-3) and its leader's rd steps (2G-2 on: to leader 2^k,
 *  whose send back is the image of this one). */
struct HierImages {
  bool exact = false;
  std::size_t nodes = 0, members = 0, steps = 0;
  struct Slot {
    std::vector<std::uint32_t> classes; ///< the classes of the links its route shares (ImageClasses)
    double latency_s = 0, bandwidth = 0;
    std::vector<Flow> flows;                     ///< node j's transfer [j] (bytes set per aggregation)
    std::vector<const CommWorld::Route*> routes; ///< node j's route [j]
    CommWorld::LinkFlows links;                  ///< link_flows_of(routes)
  };
  std::vector<Slot> slots;
  analytical::FluidNetwork net; ///< a link per class
};

/** Node j's transfer in `slot` of HierImages (bytes 1) and its route. */
std::pair<Flow, const CommWorld::Route*> hier_image(Group& g, const Layout& l, std::size_t slot, std::size_t j)
{
  const std::size_t gm = l.largest - 1;
  const std::vector<int>& local = l.nodes[j];
  if (slot < 2 * gm) {
    const bool up = slot < gm;
    const int member = local[slot % gm + 1];
    const int from = g.endpoint(up ? member : local[0]), to = g.endpoint(up ? local[0] : member);
    return {{from, to, 1}, l.routes[static_cast<std::size_t>(member)][up ? 0 : 1]};
  }
  const std::size_t partner = j ^ (std::size_t{1} << (slot - 2 * gm));
  const int from = g.endpoint(local[0]), to = g.endpoint(l.nodes[partner][0]);
  return {{from, to, 1}, &g.world().cached_route(from, to)};
}

/** HierImages for hier over rd on `g` (exact false where the nodes are not images of node 0, a route crosses two links
 *  of one class, or ddlsim's network would not compute the routes as SimGrid does: CommWorld::fluid_exact, over every
 *  route of every node's flows). */
HierImages hier_images_of(Group& g, Layout& l)
{
  HierImages h;
  if (l.xor_symmetric < 0)
    l.xor_symmetric = xor_symmetric_nodes(g, l) ? 1 : 0;
  if (l.xor_symmetric == 0) // (also: leaders a power of two, nodes of one size)
    return h;
  h.nodes = l.nodes.size();
  h.members = l.largest;
  for (std::size_t n = h.nodes; n > 1; n >>= 1)
    ++h.steps;
  const std::size_t slots = 2 * (h.members - 1) + h.steps;
  std::vector<const CommWorld::Route*> all;
  h.slots.resize(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    HierImages::Slot& x = h.slots[s];
    for (std::size_t j = 0; j < h.nodes; ++j) {
      const auto [flow, route] = hier_image(g, l, s, j);
      x.flows.push_back(flow);
      x.routes.push_back(route);
      all.push_back(route);
    }
    x.links = CommWorld::link_flows_of(x.routes);
  }
  if (!CommWorld::fluid_exact(all))
    return h;
  std::vector<std::vector<const CommWorld::Route*>> routes;
  for (const HierImages::Slot& x : h.slots)
    routes.push_back(x.routes);
  ImageClasses classes = image_classes(routes);
  if (!classes.exact)
    return h;
  for (std::size_t s = 0; s < slots; ++s) {
    HierImages::Slot& x = h.slots[s];
    x.latency_s = x.routes[0]->latency_s;
    x.bandwidth = x.routes[0]->bandwidth;
    x.classes = std::move(classes.classes[s]);
  }
  h.net.solve_by_components(true);
  for (std::uint32_t c = 0; c < classes.capacity.size(); ++c)
    h.net.set_capacity(c, classes.capacity[c]);
  h.exact = true;
  return h;
}

/** @brief hier over rd for every aggregation of an in-order stream, or of several (lanes), as one program over node
 *  images (HierImages): node 0's members, each in one aggregation per lane, at the message level's steps (timed_plan's
 *  gather and scatter; the leader's rd steps as RecursiveDoubling's blocks_plan takes them, its partner in every step
 *  an image whose times are its own), every other node its image, started, checked and ended with it. A member goes
 *  on to its next aggregation in a lane at the later of its readiness and its end of the one before, so that the
 *  lanes' flows meet on the links they share (a node's NVLinks, its leader's PCIe link and NIC) as at message level. */
class HierRdStream final : public ImageStream {
public:
  HierRdStream(Group& g, const Layout& layout, HierImages& images)
      : ImageStream(g, images.members, images.nodes, images.net, "hier over rd's program over node images", "node")
      , l_(layout)
      , h_(images)
      , gm_(images.members)
  {
    ImageStream::set_lanes({g.channel()});
  }

private:
  enum : int { kBegin = kStart + 1, kPosted, kGathered, kReduced, kRdPosted, kRdReceived, kRdReduced, kScatter, kEnd };
  /** Node 0 in one lane, in its leader's current aggregation (queues_): whether the leader has started it (posted its
   *  receives), its members' sends posted before then, the gather's and the scatter's flows landed, the leader's rd
   *  step, its next scatter send. */
  struct Node {
    bool started = false;
    std::vector<char> waiting; ///< per position
    std::size_t landed = 0, scattered = 0, step = 0, next = 0;
  };

  /** Node j's member at position i (0: the leader). */
  std::size_t image_of(std::size_t i, std::size_t j) const override { return static_cast<std::size_t>(l_.nodes[j][i]); }
  std::size_t representative_of(std::size_t r) const override
  {
    if (l_.node_of_member[r] != 0)
      return gm_;
    const std::vector<int>& local = l_.nodes[0];
    return static_cast<std::size_t>(std::find(local.begin(), local.end(), static_cast<int>(r)) - local.begin());
  }
  void reset_lanes() override
  {
    node_.assign(channels_.size(), Node{});
    for (Node& x : node_)
      x.waiting.assign(gm_, 0);
  }
  /** The costs of sending `slot`'s transfer, by position i's member in its aggregation in lane l. */
  double send_cost(const HierImages::Slot& x, std::size_t l, std::size_t i) const
  {
    return world_.send_cost_s(x.flows[0].from, x.flows[0].to, bytes_of(l, i), x.routes[0]);
  }

  void wake(std::size_t l, std::size_t i, int what) override
  {
    Node& x = node_[l];
    switch (what) {
    case kStart: // (its images with it: each was given this aggregation, ready no later)
      after(queues_.delay_s(l, start_images(l, i)), l, i, kBegin); // a stack's call cost first (StackCall)
      return;
    case kBegin:
      if (i != 0) { // its send to the leader, after its costs
        after(send_cost(h_.slots[i - 1], l, i), l, i, kPosted);
        return;
      }
      x.started = true; // its receives posted: the sends posted before start now
      for (std::size_t m = 1; m < gm_; ++m)
        if (x.waiting[m] != 0) {
          x.waiting[m] = 0;
          start(l, m - 1);
        }
      if (gm_ == 1)
        wake(l, 0, kReduced);
      return;
    case kPosted:
      if (x.started && k_of(l, 0) == k_of(l, i))
        start(l, i - 1);
      else
        x.waiting[i] = 1;
      return;
    case kGathered: // the leader's receive overheads paid (CommWorld::received), its sum (CommWorld::reduce)
      after(o_.reduce_s_per_byte * double(bytes_of(l, 0) * (gm_ - 1)), l, 0, kReduced);
      return;
    case kReduced: // rd among the leaders from step 0
      x.step = 0;
      rd_step(l);
      return;
    case kRdPosted:
      start(l, 2 * (gm_ - 1) + x.step);
      return;
    case kRdReceived:
      after(o_.reduce_s_per_byte * double(bytes_of(l, 0)), l, 0, kRdReduced);
      return;
    case kRdReduced:
      ++x.step;
      rd_step(l);
      return;
    case kScatter: // the leader's send to its next member is posted; then the one after, after its costs
      start(l, gm_ - 1 + x.next - 1);
      if (++x.next < gm_)
        after(send_cost(h_.slots[gm_ - 1 + x.next - 1], l, 0), l, 0, kScatter);
      return;
    case kEnd:
      done(l, i);
      return;
    default:
      throw Error("internal: hier over rd's program over node images woken for nothing");
    }
  }

  /** The leader's rd step (its send to its partner after its costs; the partner's send to it, its image, with it),
   *  or past the last one the scatter: its sends one after the other, each after its costs. */
  void rd_step(std::size_t l)
  {
    Node& x = node_[l];
    if (x.step < h_.steps) {
      after(send_cost(h_.slots[2 * (gm_ - 1) + x.step], l, 0), l, 0, kRdPosted);
      return;
    }
    if (gm_ == 1) {
      done(l, 0);
      return;
    }
    x.next = 1;
    after(send_cost(h_.slots[gm_ - 1], l, 0), l, 0, kScatter);
  }

  /** Node 0's transfer in `slot` starts now, in lane l (a member's gather and scatter are in its leader's aggregation).
   */
  void start(std::size_t l, std::size_t slot)
  {
    const HierImages::Slot& x = h_.slots[slot];
    start_transfer({l, 0, slot, now_}, x.classes, x.latency_s, x.bandwidth, bytes_of(l, 0));
  }

  /** Transfer `f` landed: its images are reported; its ends go on. */
  void landed(const InFlight& f) override
  {
    const std::size_t l = f.lane, s = f.slot;
    const HierImages::Slot& x = h_.slots[s];
    flows_ = x.flows;
    for (Flow& flow : flows_)
      flow.bytes = bytes_of(l, 0);
    report_images(f, flows_, x.routes, x.links);
    Node& n = node_[l];
    const double recv_s = o_.stack.recv_overhead_s;
    if (s < gm_ - 1) { // the gather: once every member's has landed, the leader's receive overheads
      if (++n.landed == gm_ - 1)
        after(recv_s * double(gm_ - 1), l, 0, kGathered);
    } else if (s < 2 * (gm_ - 1)) { // the scatter: the member ends after its receive overhead, the leader at the last
      after(recv_s, l, s - (gm_ - 1) + 1, kEnd);
      if (++n.scattered == gm_ - 1)
        done(l, 0);
    } else { // an rd step: its send and its receive (the image's) landed together; the receive overhead, the sum
      after(recv_s, l, 0, kRdReceived);
    }
  }

  /** Node 0's member at position i ends its aggregation in lane l, and so do its images. */
  void done(std::size_t l, std::size_t i)
  {
    if (i == 0) { // its node goes on to its next aggregation (members' sends posted early wait for it)
      Node& x = node_[l];
      x.started = false;
      x.landed = x.scattered = 0;
    }
    end_images(l, i);
  }

  const Layout& l_;
  HierImages& h_;
  std::size_t gm_;
  std::vector<Node> node_; ///< node 0, per lane
  std::vector<Flow> flows_;
};

/** The node images of hier over rd's program (HierRdStream), where it runs: a whole stream (the phase asks for a
 *  program in a world whose program is all the network carries: one in-order stream, the priority policy's, or
 *  several lanes), more than kFlowAboveRanks leaders (where Fidelity::Auto takes rd's exact forms), rd's
 *  flow form allowed under the stack, node 0's flows and their images computable (HierImages::exact). */
HierImages* stream_images(Group& g, Layout& layout)
{
  if (g.options().inter_algorithm != AlgorithmId::Rd || !whole_stream_allowed(g, AlgorithmId::Hier) ||
      layout.leaders->size() <= kFlowAboveRanks || !flow_form_allowed(AlgorithmId::Rd, g.options()))
    return nullptr;
  HierImages& images = g.cached_object<HierImages>(kHierImagesKey, [&] { return hier_images_of(g, layout); });
  return images.exact ? &images : nullptr;
}

/** Runs `flows`, flow i posted `after[i]` seconds from now (its sender's costs before it: CommWorld::send_cost_s,
 *  summed over a leader's earlier sends), and returns when the last has landed: all at once where every flow is posted
 *  at the same time (run_flows); in a solo world each component of flows as if alone from its first post (run_timed:
 *  nothing else runs meanwhile, and flows that share no link do not meet); otherwise posted in order of time. */
void run_posted(CommWorld& world, const std::vector<Flow>& flows, const std::vector<double>& after)
{
  if (std::all_of(after.begin(), after.end(), [&](double a) { return a == after.front(); })) {
    CommWorld::delay(after.front());
    world.run_flows(flows);
    return;
  }
  if (world.solo()) {
    const double now = simgrid::s4u::Engine::get_clock();
    std::vector<double> post_at;
    for (double a : after)
      post_at.push_back(now + a);
    const std::vector<double> ends = world.run_timed(flows, post_at);
    CommWorld::delay_until(*std::max_element(ends.begin(), ends.end()));
    return;
  }
  world.run_staggered(flows, after);
}

} // namespace

void Hierarchical::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  CommWorld& world = g.world();
  const int node = layout.node_of_member[self];
  const std::vector<int>& local = layout.nodes[node];
  const int leader = local.front();
  if (self != leader) {
    g.send(self, leader, bytes);
    g.recv(self, leader);
    return;
  }
  std::vector<int> from;
  for (std::size_t i = 1; i < local.size(); ++i)
    from.push_back(g.endpoint(local[i]));
  world.exchange(g.endpoint(self), {}, from, true, g.channel());
  g.reduce(self, bytes * (local.size() - 1));

  inter_->allreduce(*layout.leaders, node, bytes);

  std::vector<std::pair<int, std::uint64_t>> to;
  for (std::size_t i = 1; i < local.size(); ++i)
    to.emplace_back(g.endpoint(local[i]), bytes);
  world.exchange(g.endpoint(self), to, {}, true, g.channel());
}

bool Hierarchical::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  if (g.size() <= 1)
    return false;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  member_timed_hier(g, layout); // the leaders' group member-timed or not, before its exact_flow_form is asked
  const CollectiveOptions& o = g.options();
  if (g.world().lanes_solo() && o.inter_algorithm == AlgorithmId::Rd) { // before rd's exact_flow_form is asked too
    if (layout.xor_symmetric < 0)
      layout.xor_symmetric = xor_symmetric_nodes(g, layout) ? 1 : 0;
    layout.leaders->set_xor_symmetric(layout.xor_symmetric > 0);
  }
  if (stream_images(g, layout) != nullptr) // over rd, one program over node images (stream_program)
    return true;
  return (uses_flow(o.inter_algorithm, o.fidelity, layout.leaders->size()) ||
          inter_->exact_flow_form(*layout.leaders)) &&
         flow_form_allowed(AlgorithmId::Hier, o) && flow_form_allowed(o.inter_algorithm, o);
}

std::unique_ptr<StreamProgram> Hierarchical::stream_program(Group& g) const
{
  // Over rd, where every node is node 0's image: one program over node 0's members, one stream or several lanes
  // (HierRdStream). Several lanes over the pipelined trees: one program (HierStream); one lane runs aggregation by
  // aggregation, member-timed (timed_plan), as before.
  const AlgorithmId inter = g.options().inter_algorithm;
  if ((inter != AlgorithmId::Tree && inter != AlgorithmId::Dbtree && inter != AlgorithmId::Rd) ||
      !whole_stream_allowed(g, AlgorithmId::Hier))
    return nullptr;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  if (inter == AlgorithmId::Rd) {
    HierImages* images = stream_images(g, layout);
    if (images == nullptr)
      return nullptr;
    g.world().note_exact_form(AlgorithmId::Rd);
    return std::make_unique<HierRdStream>(g, layout, *images);
  }
  if (g.world().lanes() <= 1)
    return nullptr;
  Group& leaders = *layout.leaders;
  if (leaders.size() <= 1 || !layout.nodes_private)
    return nullptr;
  // The nodes' flows join the trees' network: computed as SimGrid runs them where they cross no fat pipe (the trees'
  // routes among themselves are checked by the trees' program: CommWorld::fluid_exact), on links the network keeps
  // (TreeStream::keep_links: it leaves out links the trees' own transfers cannot fill, which the nodes' flows may: a
  // PCIe node's leader's link, crossed by its members' flows and by the trees' transfers into it).
  for (const auto& both : layout.routes)
    for (const CommWorld::Route* r : both)
      if (r != nullptr && !r->fat.empty())
        return nullptr;
  leaders.set_member_timed(true);
  leaders.set_whole_stream(true);
  std::unique_ptr<StreamProgram> program = inter_->exact_flow_form(leaders) ? inter_->stream_program(leaders) : nullptr;
  auto* trees = dynamic_cast<TreeStream*>(program.get());
  if (trees == nullptr) { // (the trees' program notes its form only when it returns one: no form noted here)
    leaders.set_member_timed(false);
    leaders.set_whole_stream(false);
    return nullptr;
  }
  for (const auto& both : layout.routes)
    for (const CommWorld::Route* r : both)
      if (r != nullptr)
        trees->keep_links(*r);
  program.release();
  return std::make_unique<HierStream>(g, layout, std::unique_ptr<TreeStream>(trees));
}

std::vector<std::vector<Flow>> Hierarchical::flow_calls(Group& g, std::uint64_t bytes) const
{
  // flow_plan's calls: the gather (where a node has more than its leader), the leaders' plan, the scatter; run_flows
  // calls, or run_staggered's where senders' costs post them apart (run_posted; posts_apart).
  std::vector<std::vector<Flow>> calls;
  if (g.size() <= 1)
    return calls;
  // Under a stack's or a message's costs the gather and scatter run in lock step (every member leaves the call when its
  // last flow has landed, where at message level each leaves when its own message back has landed, the leader's sends
  // leaving one after the other, and starts its next send from then): a model, 0.13 % off the message level for hier
  // over rd under mpi-verbs with two streams on 128 DGX-1 nodes. An inter algorithm that Fidelity::Auto takes only
  // where exact keeps the message level there (no mirror: its exact form needs one), but for rd's lanes over node
  // images (HierRdStream, stream_program), taken before any mirror.
  const CollectiveOptions& o = g.options();
  if (o.fidelity == Fidelity::Auto && entry(o.inter_algorithm).flow == FlowForm::WhenExact &&
      (o.msg_overhead_s > 0 || !o.stack.ideal()))
    return calls;
  if (!drivable(g, bytes))
    return calls;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  if (layout.leaders->size() > 1) {
    calls = inter_->flow_calls(*layout.leaders, bytes);
    if (calls.empty())
      return calls;
  }
  if (layout.largest > 1) { // some node has more than its leader
    calls.push_back(node_flows(g, layout, bytes, true));
    calls.push_back(node_flows(g, layout, bytes, false));
  }
  return calls;
}

bool Hierarchical::posts_apart(Group& g) const
{
  if (g.size() <= 1)
    return false;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  return g.options().senders_pay() || (layout.leaders->size() > 1 && inter_->posts_apart(*layout.leaders));
}

bool Hierarchical::concurrent_flows(Group& g) const
{
  if (g.size() <= 1)
    return false;
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  return layout.leaders->size() > 1 && inter_->concurrent_flows(*layout.leaders);
}

bool Hierarchical::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps, for every node at once: the gather (each member's flow to its leader, posted after the
  // member's costs of sending it: CommWorld::send_cost_s), the leader's G-1 receive overheads and reductions, the
  // inter algorithm's flow plan among the leaders, then the scatter, whose k-th flow of a leader is posted after the
  // leader's costs of its first k sends (it posts them one after the other), and each member's receive overhead.
  Layout& layout = g.cached_object<Layout>(kHierLayoutKey, [&] { return layout_of(g); });
  if (g.member_times() != nullptr && member_timed_hier(g, layout)) {
    timed_plan(g, layout, *inter_, bytes);
    return true;
  }
  CommWorld& world = g.world();
  const CollectiveOptions& o = g.options();
  std::vector<Flow> flows = node_flows(g, layout, bytes, true);
  std::vector<double> after;
  for (const Flow& f : flows)
    after.push_back(world.send_cost_s(f.from, f.to, bytes));
  if (!flows.empty()) {
    run_posted(world, flows, after);
    CommWorld::delay((o.stack.recv_overhead_s + o.reduce_s_per_byte * double(bytes)) * double(layout.largest - 1));
  }
  if (layout.leaders->size() > 1 && !inter_->flow_plan(*layout.leaders, bytes))
    throw Error("internal: hier's flow form needs a flow form of its inter algorithm");
  flows = node_flows(g, layout, bytes, false);
  after.clear();
  for (std::size_t n = 0, f = 0; n < layout.nodes.size(); ++n) {
    double posted = 0; // the leader's sends one after the other
    for (std::size_t k = 1; k < layout.nodes[n].size(); ++k, ++f) {
      posted += world.send_cost_s(flows[f].from, flows[f].to, bytes);
      after.push_back(posted);
    }
  }
  if (!flows.empty()) {
    run_posted(world, flows, after);
    CommWorld::delay(o.stack.recv_overhead_s);
  }
  return true;
}

} // namespace ddlsim::collectives
