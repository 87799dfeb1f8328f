// Parameter server: workers push shards to S servers, servers aggregate (and update), workers pull.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"

#include "collectives/server_update.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace ddlsim::collectives {
namespace {

/** Bytes server `s` of `servers` handles for tensor number `k` of `bytes`. */
std::uint64_t shard(const CollectiveOptions& o, std::uint64_t k, std::uint64_t bytes, int s)
{
  if (o.ps_sharding == PsSharding::Split)
    return chunk_bytes(bytes, o.ps_servers, s);
  return k % static_cast<std::uint64_t>(o.ps_servers) == static_cast<std::uint64_t>(s) ? bytes : 0;
}

bool involved(const CollectiveOptions& o, std::uint64_t k, int s)
{
  return o.ps_sharding == PsSharding::Split ||
         k % static_cast<std::uint64_t>(o.ps_servers) == static_cast<std::uint64_t>(s);
}

/** The endpoints that push: every rank, or the lowest rank of every node (hier's leaders). */
std::vector<int> pushers(const CommWorld& world, bool leaders_only)
{
  std::vector<int> workers;
  std::vector<int> nodes;
  for (int w = 0; w < world.size(); ++w) {
    bool seen = false;
    for (int n : nodes)
      seen = seen || n == world.node(w);
    if (leaders_only && seen)
      continue;
    nodes.push_back(world.node(w));
    workers.push_back(w);
  }
  return workers;
}

/** One server's part of the aggregations of one lane: entries lane, lane + lanes, ... of `sequence`. */
void serve(CommWorld& world, const std::vector<std::uint64_t>& sequence, int s, int lane,
           const std::vector<int>& workers)
{
  const auto& o = world.options();
  const int me = world.size() + s;
  const int channel = world.lane_channel(lane);
  const int n = static_cast<int>(workers.size());
  for (std::size_t k = static_cast<std::size_t>(lane); k < sequence.size(); k += std::size_t(world.lanes())) {
    if (!involved(o, k, s))
      continue;
    const std::uint64_t bytes = shard(o, k, sequence[k], s);
    world.exchange(me, {}, workers, true, channel); // every worker's push
    world.reduce(me, bytes * static_cast<std::uint64_t>(n));
    if (o.ps_update == PsUpdate::Server) { // sum and update as work on the server's host (shared by its actors)
      const double t = server_update_s(o.ps_rates[s], n, bytes, o.optimizer);
      if (t > 0)
        sg4::this_actor::execute(t * world.host(me)->get_speed());
    }
    std::vector<std::pair<int, std::uint64_t>> pulls;
    for (int w : workers)
      pulls.emplace_back(w, bytes);
    world.exchange(me, pulls, {}, true, channel);
  }
}

/** Every worker's flow to `server` (its pushes) or from it (its pulls), of `bytes` each, in worker order. */
std::vector<Flow> server_flows(Group& g, int server, std::uint64_t bytes, bool push)
{
  std::vector<Flow> flows;
  for (int w = 0; w < g.size(); ++w)
    flows.push_back(push ? Flow{g.endpoint(w), server, bytes} : Flow{server, g.endpoint(w), bytes});
  return flows;
}

/** From a helper actor: runs `flows`, flow i posted `at[i]` seconds from now, and returns when all have landed. `alone`
 *  (its flows are all the network carries: one server's, in a solo world): all posted at once without size factors,
 *  CommWorld::run_alike (computed where alike); otherwise CommWorld::run_incast (computed where the flows share one
 *  narrowest link). Otherwise in order of time (the helper's own flows: other servers' helpers, or other lanes, post
 *  theirs meanwhile), computed in a mirrored world's network (CommWorld::run_staggered, ParameterServer::posts_apart).
 */
void posted_in_order(CommWorld& world, const std::vector<Flow>& flows, const std::vector<double>& at, bool alone)
{
  const auto& stack = world.options().stack;
  const bool together = std::all_of(at.begin(), at.end(), [&](double a) { return a == at.front(); });
  if (alone && together && stack.latency_factor.empty() && stack.bandwidth_factor.empty()) {
    CommWorld::delay(at.front());
    if (!world.run_alike(flows))
      world.finish_own(flows, world.start_own(flows));
    return;
  }
  if (alone && world.run_incast(flows, at))
    return;
  if (together) {
    CommWorld::delay(at.front());
    if (world.mirrored()) // one component per class of every lane's listed calls (ParameterServer::flow_calls)
      world.run_flows(flows);
    else // not alone: other servers' helpers post theirs meanwhile, so this call is not all the network carries
      world.finish_own(flows, world.start_own(flows));
    return;
  }
  world.run_staggered(flows, at);
}

} // namespace

void ParameterServer::prepare(CommWorld& world) const
{
  if (world.size() <= 1)
    return; // a single GPU needs no aggregation
  const auto& o = world.options();
  if (o.ps_update == PsUpdate::Server && static_cast<int>(o.ps_rates.size()) != o.ps_servers)
    throw ConfigError(field("ps_update") +
                      " server needs each server host's speed and memory bandwidth, which only a training run "
                      "reads (ddlsim run)");
  for (int s = 0; s < o.ps_servers; ++s) {
    sg4::Host* host = nullptr;
    if (o.ps_hosts.empty()) {
      if (s >= world.size())
        throw ConfigError(field("ps_servers") + " " + std::to_string(o.ps_servers) +
                          " co-located servers need as many ranks (have " + std::to_string(world.size()) +
                          "); name server hosts with " + field("ps_hosts"));
      host = world.host(s);
    } else {
      host = sg4::Host::by_name_or_null(o.ps_hosts[s]);
      if (host == nullptr)
        throw ConfigError(field("ps_hosts") + ": no host '" + o.ps_hosts[s] + "' in the platform");
    }
    world.add_endpoint(host);
  }
}

std::vector<sg4::ActorPtr> ParameterServer::start(CommWorld& world, const std::vector<std::uint64_t>& sequence) const
{
  std::vector<sg4::ActorPtr> servers;
  if (world.size() <= 1)
    return servers;
  const auto& o = world.options();
  const std::vector<int> workers = pushers(world, leaders_only_);
  if (workers.size() <= 1)
    return servers; // one node under hier: its leader calls no inter-node aggregation
  if (uses_flow(AlgorithmId::Ps, o.fidelity, static_cast<int>(workers.size())) && flow_form_allowed(AlgorithmId::Ps, o))
    return servers; // flow level: the driver of each aggregation moves the servers' flows (flow_plan)
  for (int s = 0; s < o.ps_servers; ++s)
    for (int lane = 0; lane < world.lanes(); ++lane)
      servers.push_back(sg4::Actor::create(
          "ps-server" + std::to_string(s) + "-lane" + std::to_string(lane), world.host(world.size() + s),
          [&world, sequence, s, lane, workers] { serve(world, sequence, s, lane, workers); }));
  return servers;
}

void ParameterServer::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (g.size() <= 1)
    return;
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  CommWorld& world = g.world();
  const auto& o = world.options();
  const int me = g.endpoint(self);
  const int lane = world.lane_of_channel(g.channel());
  const std::uint64_t k = std::uint64_t(lane) + std::uint64_t(world.lanes()) * world.next_call(me, lane);
  std::vector<std::pair<int, std::uint64_t>> pushes;
  std::vector<int> pulls;
  for (int s = 0; s < o.ps_servers; ++s) {
    if (!involved(o, k, s))
      continue;
    pushes.emplace_back(world.size() + s, shard(o, k, bytes, s));
    pulls.push_back(world.size() + s);
  }
  world.exchange(me, pushes, pulls, true, g.channel());
}

bool ParameterServer::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && g.use_flow(AlgorithmId::Ps);
}

std::vector<std::vector<Flow>> ParameterServer::flow_calls(Group& g, std::uint64_t bytes) const
{
  // flow_plan's calls: posted_in_order's run_flows where they leave together (CommWorld::send_cost_s is 0), its
  // run_staggered where not (posts_apart: mirrored only where computed).
  const CollectiveOptions& o = g.options();
  std::vector<std::vector<Flow>> calls;
  if (g.size() <= 1 || !drivable(g, bytes))
    return calls;
  CommWorld& world = g.world();
  for (int s = 0; s < o.ps_servers; ++s) {
    const int server = world.size() + s;
    const std::uint64_t b = shard(o, std::uint64_t(s), bytes, s); // tensor s goes to server s (round-robin)
    calls.push_back(server_flows(g, server, b, true));
    calls.push_back(server_flows(g, server, b, false));
  }
  return calls;
}

bool ParameterServer::concurrent_flows(Group& g) const
{
  // Split shards: every tensor's pushes and pulls go to every server at once, each server's from its own helper
  // (where the plan is no flow form, flow_calls lists nothing and nothing is mirrored).
  const CollectiveOptions& o = g.options();
  return o.ps_servers > 1 && o.ps_sharding == PsSharding::Split;
}

bool ParameterServer::posts_apart(Group& g) const
{
  return g.options().senders_pay();
}

bool ParameterServer::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps for every worker and server at once: each worker posts its pushes one after the other
  // (server order), each after its costs of sending it (CommWorld::send_cost_s: the overhead, the stack's send
  // overhead and copy, above the eager limit the rendezvous round trip); each server (a helper actor on its host) pays
  // its receive overhead per push once all are in, sums (and updates), then posts its pulls one after the other
  // (worker order), each after its costs of sending it; each worker pays its receive overhead per pull at the end.
  if (g.size() <= 1)
    return true;
  CommWorld& world = g.world();
  const auto& o = world.options();
  const int lane = world.lane_of_channel(g.channel());
  const std::uint64_t k = std::uint64_t(lane) + std::uint64_t(world.lanes()) * world.next_call(g.endpoint(0), lane);
  const int n = g.size();
  int servers = 0; // involved in this tensor
  for (int s = 0; s < o.ps_servers; ++s)
    servers += involved(o, k, s) ? 1 : 0;
  // One server: its pushes and its pulls are all the network carries while they run (in a solo world): where they
  // are alike (CommWorld::run_alike, started together, no size factors) or share one narrowest link
  // (CommWorld::run_incast) they are computed, not run.
  const bool alone = servers == 1 && world.solo();
  // Each worker's pushes before the one to the j-th involved server: their costs, summed (per worker).
  std::vector<double> pushed(static_cast<std::size_t>(n), 0.0);
  std::vector<sg4::ActorPtr> helpers;
  for (int s = 0; s < o.ps_servers; ++s) {
    if (!involved(o, k, s))
      continue;
    const int server = world.size() + s;
    const std::uint64_t b = shard(o, k, bytes, s);
    std::vector<Flow> pushes = server_flows(g, server, b, true);
    std::vector<double> push_at; // from now
    for (int w = 0; w < n; ++w) {
      pushed[w] += world.send_cost_s(g.endpoint(w), server, b);
      push_at.push_back(pushed[w]);
    }
    helpers.push_back(sg4::Actor::create(
        "ps-flow", world.host(server),
        [&g, &world, &o, n, s, server, b, alone, pushes = std::move(pushes), push_at = std::move(push_at)] {
          posted_in_order(world, pushes, push_at, alone);
          CommWorld::delay((o.stack.recv_overhead_s + o.reduce_s_per_byte * double(b)) * n);
          if (o.ps_update == PsUpdate::Server) {
            const double t = server_update_s(o.ps_rates[s], n, b, o.optimizer);
            if (t > 0)
              sg4::this_actor::execute(t * world.host(server)->get_speed());
          }
          const std::vector<Flow> pulls = server_flows(g, server, b, false);
          std::vector<double> pull_at; // from now
          double posted = 0;
          for (int w = 0; w < n; ++w) {
            posted += world.send_cost_s(server, g.endpoint(w), b);
            pull_at.push_back(posted);
          }
          posted_in_order(world, pulls, pull_at, alone);
        }));
  }
  for (auto& h : helpers)
    h->join();
  CommWorld::delay(o.stack.recv_overhead_s * servers); // each worker's, after its last pull landed
  return true;
}

} // namespace ddlsim::collectives
