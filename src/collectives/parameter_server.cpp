// Parameter server: workers push shards to S servers, servers aggregate, workers pull.
#include "collectives/algorithms.hpp"

#include "common/error.hpp"

#include <simgrid/s4u/Actor.hpp>

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

} // namespace

void ParameterServer::prepare(CommWorld& world) const
{
  if (world.size() <= 1)
    return; // a single GPU needs no aggregation
  const auto& o = world.options();
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
  const int p = world.size();
  for (int s = 0; s < o.ps_servers; ++s) {
    const int me = p + s;
    servers.push_back(sg4::Actor::create("ps-server" + std::to_string(s), world.host(me), [&world, sequence, s, me, p] {
      const auto& o = world.options();
      std::vector<int> workers;
      for (int w = 0; w < p; ++w)
        workers.push_back(w);
      for (std::size_t k = 0; k < sequence.size(); ++k) {
        if (!involved(o, k, s))
          continue;
        const std::uint64_t bytes = shard(o, k, sequence[k], s);
        world.exchange(me, {}, workers); // every worker's push
        world.reduce(me, bytes * static_cast<std::uint64_t>(p));
        std::vector<std::pair<int, std::uint64_t>> pulls;
        for (int w : workers)
          pulls.emplace_back(w, bytes);
        world.exchange(me, pulls, {});
      }
    }));
  }
  return servers;
}

void ParameterServer::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (g.size() <= 1)
    return;
  CommWorld& world = g.world();
  const auto& o = world.options();
  const int me = g.endpoint(self);
  const std::uint64_t k = world.next_call(me);
  std::vector<std::pair<int, std::uint64_t>> pushes;
  std::vector<int> pulls;
  for (int s = 0; s < o.ps_servers; ++s) {
    if (!involved(o, k, s))
      continue;
    pushes.emplace_back(world.size() + s, shard(o, k, bytes, s));
    pulls.push_back(world.size() + s);
  }
  world.exchange(me, pushes, pulls);
}

} // namespace ddlsim::collectives
