// `ddlsim collective`'s engine: one allreduce per message size, all ranks starting each size together.
#include "engine/sweep.hpp"

#include "collectives/algorithms.hpp"
#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "engine/setup.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <map>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

/** Per-size results, written by rank 0 between the two barriers of each size. */
struct SizeClock {
  std::vector<double> start, end;
  std::vector<std::uint64_t> sent_after, messages_after;
  std::size_t completed = 0;
};

/** Rank `r`'s part: every size in turn, each between two barriers. */
void run_rank(int r, const SweepInput& input, const collectives::Collective& collective, collectives::Group& group,
              sg4::BarrierPtr barrier, SizeClock& clock)
{
  const collectives::CommWorld& world = group.world();
  for (std::size_t k = 0; k < input.sizes.size(); ++k) {
    barrier->wait(); // every rank starts size k at the same time
    if (r == 0)
      clock.start[k] = sg4::Engine::get_clock();
    collective.allreduce(group, r, input.sizes[k]);
    clock.end[k] = std::max(clock.end[k], sg4::Engine::get_clock());
    barrier->wait(); // nobody starts size k+1 before everyone is done with k
    if (r != 0)
      continue;
    std::uint64_t sent = 0, messages = 0;
    for (int q = 0; q < world.size(); ++q) {
      sent += world.bytes_sent(q);
      messages += world.messages_sent(q);
    }
    clock.sent_after[k] = sent;
    clock.messages_after[k] = messages;
    clock.completed = k + 1;
    if (input.progress)
      input.progress(k, clock.end[k] - clock.start[k]);
  }
}

} // namespace

SweepOutput run_collective_sweep(const SweepInput& input)
{
  auto collective = collectives::make_collective(input.algorithm, input.collective);
  Setup setup = open_platform({input.platform_file, input.cluster, input.ranks, input.hosts, input.simgrid_cfg});
  if (input.check_hosts)
    input.check_hosts(setup.host_names);
  SweepOutput out;
  out.hosts = setup.host_names;
  out.simgrid_cfg = setup.simgrid_cfg;
  out.node_of_rank = setup.node_of_rank;

  collectives::CommWorld world(hosts_of(setup.ranks), setup.node_of_rank, input.collective, "sweep");
  world.set_static_links(setup.static_links); // a stack's rendezvous reads each pair's latency once where none changes
  collective->prepare(world);
  out.closed_form = closed_form_input(world, setup.node_of_rank, input.collective);
  using collectives::AlgorithmId;
  if (input.algorithm.uses(AlgorithmId::Nccl) || input.algorithm.uses(AlgorithmId::NcclRing) ||
      input.algorithm.uses(AlgorithmId::NcclTree)) {
    std::vector<int> ranks(static_cast<std::size_t>(world.size()));
    for (int r = 0; r < world.size(); ++r)
      ranks[r] = r;
    out.closed_form.nccl = collectives::nccl_shape(world, ranks);
  }

  const int p = world.size();
  const std::size_t n = input.sizes.size();
  collectives::Group group(world);
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(p));
  SizeClock clock{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), std::vector<std::uint64_t>(n, 0),
                  std::vector<std::uint64_t>(n, 0), 0};
  sg4::Actor::create("sweep-driver", world.host(0), [&] {
    auto actors = collective->start(world, input.sizes);
    for (int r = 0; r < p; ++r)
      actors.push_back(sg4::Actor::create("sweep-rank" + std::to_string(r), world.host(r),
                                          [&, r] { run_rank(r, input, *collective, group, barrier, clock); }));
    for (auto& a : actors)
      a->join();
  });
  setup.engine->run();

  if (clock.completed != n)
    throw Error(stalled_message(setup, "the collective sweep stopped after " + std::to_string(clock.completed) +
                                           " of " + std::to_string(n) + " sizes"));
  for (std::size_t k = 0; k < n; ++k)
    out.points.push_back({input.sizes[k], clock.end[k] - clock.start[k],
                          clock.sent_after[k] - (k == 0 ? 0 : clock.sent_after[k - 1]),
                          clock.messages_after[k] - (k == 0 ? 0 : clock.messages_after[k - 1])});
  return out;
}

} // namespace ddlsim::engine
