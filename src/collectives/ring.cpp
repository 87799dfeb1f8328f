// Ring allreduce: reduce-scatter then allgather over the ring 0 -> 1 -> ... -> P-1 -> 0.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"

#include <simgrid/s4u/Actor.hpp>

namespace ddlsim::collectives {

void RingAllreduce::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  if (drivable(g, bytes)) { // the flow form, or the message level's steps (Fidelity::Steps)
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  if (g.use_flow(AlgorithmId::Ring)) {
    member_ring(g, self, g.members(), g.ring_max_latency(), bytes);
    return;
  }
  member_steps(g, self, bytes);
}

void RingAllreduce::member_steps(Group& g, int self, std::uint64_t bytes)
{
  const std::uint64_t n = slices(g, bytes);
  for (std::uint64_t i = 0; i < n; ++i)
    ring_steps(g, self, chunk_bytes(bytes, n, i));
}

bool RingAllreduce::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && ((g.use_flow(AlgorithmId::Ring) && !g.member_flows()) || message_steps(g));
}

bool RingAllreduce::message_steps(const Group& g)
{
  return uses_steps(AlgorithmId::Ring, g.options().fidelity) && flow_form_allowed(AlgorithmId::Ring, g.options());
}

bool RingAllreduce::flow_plan(Group& g, std::uint64_t bytes) const
{
  const std::uint64_t n = slices(g, bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (message_steps(g))
      message_plan(g, chunk_bytes(bytes, n, i));
    else
      ring_flows(g, g.members(), g.ring_max_latency(), chunk_bytes(bytes, n, i));
  }
  return true;
}

void RingAllreduce::message_plan(Group& g, std::uint64_t bytes)
{
  // ring_steps for every member at once: step s of every member is one transfer of its chunk to its right neighbour,
  // after the overheads and before the receiver's reduction of what it got (CommWorld::run_step), every member's step s
  // after every member's step s-1. A member's step s waits for its own step s-1 and its left neighbour's; the member
  // behind the slowest hop sets the pace at every step, so the message level's time is 2(P-1) of the slowest step, as
  // here, whenever a step's transfers take the same time as the message level's.
  const int p = g.size();
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  const double gamma = g.options().reduce_s_per_byte;
  std::vector<Flow> flows(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    flows[r] = {g.endpoint(r), g.endpoint((r + 1) % p), 0};
  for (int s = 0; s < p - 1; ++s) { // reduce-scatter: member r sends chunk r - s; r + 1 adds it to its own
    std::uint64_t reduced = 0;
    for (int r = 0; r < p; ++r) {
      flows[r].bytes = chunk_bytes(bytes, p, mod(r - s));
      reduced = std::max(reduced, chunk_bytes(bytes, p, mod(r - s - 1)));
    }
    g.world().run_step(flows);
    CommWorld::delay(gamma * double(reduced));
  }
  for (int s = 0; s < p - 1; ++s) { // allgather: member r sends chunk r + 1 - s
    for (int r = 0; r < p; ++r)
      flows[r].bytes = chunk_bytes(bytes, p, mod(r + 1 - s));
    g.world().run_step(flows);
  }
}

std::uint64_t RingAllreduce::slices(const Group& g, std::uint64_t bytes)
{
  return ring_slices(g.options(), effective_chunk_bytes(AlgorithmId::Ring, g.options()), g.size(), bytes);
}

namespace {
/** The closed sum a ring flow plan sleeps before its flows (ring_flows): the other 2P-3 steps' latencies, every
 *  step's overheads, and the reductions. A step's latency is the slowest ring hop's times the stack's latency factor
 *  for the step's largest chunk (SimGrid gives the flows that factor too: Flow::message_bytes); its overheads are the
 *  message's (msg_overhead_s) and the stack's: its send and receive overheads, its copy of that chunk and, when the
 *  chunk is above the eager limit, the rendezvous round trip (rendezvous_round_trip_s) at the slowest hop. A step lasts
 *  as long as its slowest rank; the ideal stack has none of these costs. */
double ring_delay_s(const CollectiveOptions& o, int p, double max_latency, std::uint64_t bytes)
{
  const double steps = 2.0 * (p - 1) - 1;
  const StackProfile& s = o.stack;
  const std::uint64_t largest = chunk_bytes(bytes, std::uint64_t(p), 0); // the first chunks are the largest
  double overhead = o.msg_overhead_s + s.send_overhead_s + s.recv_overhead_s + s.copy_s_per_byte * double(largest);
  if (s.rendezvous(largest))
    overhead += rendezvous_round_trip_s(o, max_latency);
  const double latency = max_latency * factor_for(s.latency_factor, double(largest));
  return steps * (latency + overhead) + overhead + o.reduce_s_per_byte * double(bytes - bytes / std::uint64_t(p));
}
/** The bytes of the flow of ring position i: every chunk it sends (all but chunks i+1 and i+2). */
std::uint64_t ring_flow_bytes(int p, int i, std::uint64_t bytes)
{
  return 2 * bytes - chunk_bytes(bytes, p, (i + 1) % p) - chunk_bytes(bytes, p, (i + 2) % p);
}
} // namespace

void RingAllreduce::member_ring(Group& g, int position, const std::vector<int>& ring, double max_latency,
                                std::uint64_t bytes)
{
  const int p = static_cast<int>(ring.size());
  const std::uint64_t n = slices(g, bytes);
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t slice = chunk_bytes(bytes, n, k);
    g.sync(); // as the driver: the slice starts once every member is there (and done with the previous one)
    CommWorld::delay(ring_delay_s(g.options(), p, max_latency, slice));
    g.world().exchange(ring[position], {{ring[(position + 1) % p], ring_flow_bytes(p, position, slice)}},
                       {ring[(position + p - 1) % p]}, false, g.channel());
  }
  g.sync(); // every member leaves when the last flow is done, as from Group::flow_call
}

void RingAllreduce::ring_flows(Group& g, const std::vector<int>& ring, double max_latency, std::uint64_t bytes)
{
  // Every member sends one flow carrying every chunk it sends (all but chunks i+1 and i+2 of its ring position i),
  // after the other 2P-3 steps' latencies at the slowest ring hop, all 2(P-1) overheads and its P-1 reductions
  // (every chunk but its own: at most M - floor(M/P) bytes).
  CommWorld::delay(ring_delay_s(g.options(), static_cast<int>(ring.size()), max_latency, bytes));
  g.world().run_flows(ring_flow_list(ring, bytes));
}

std::vector<Flow> RingAllreduce::ring_flow_list(const std::vector<int>& ring, std::uint64_t bytes)
{
  const int p = static_cast<int>(ring.size());
  std::vector<Flow> flows;
  flows.reserve(ring.size());
  const std::uint64_t message = chunk_bytes(bytes, std::uint64_t(p), 0); // the factors read the chunk, not the flow
  for (int i = 0; i < p; ++i)
    flows.push_back({ring[i], ring[(i + 1) % p], ring_flow_bytes(p, i, bytes), message});
  return flows;
}

std::vector<std::vector<Flow>> RingAllreduce::slice_calls(const Group& g, const std::vector<int>& ring,
                                                          std::uint64_t bytes)
{
  const std::uint64_t n = slices(g, bytes);
  std::vector<std::vector<Flow>> calls{ring_flow_list(ring, chunk_bytes(bytes, n, 0))};
  if (chunk_bytes(bytes, n, n - 1) != chunk_bytes(bytes, n, 0))
    calls.push_back(ring_flow_list(ring, chunk_bytes(bytes, n, n - 1)));
  return calls;
}

std::vector<std::vector<Flow>> RingAllreduce::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (g.size() <= 1 || !g.use_flow(AlgorithmId::Ring) || message_steps(g))
    return {}; // no flow form here, or the message level's steps (run_step)
  return slice_calls(g, g.members(), bytes);
}

void RingAllreduce::ring_steps(Group& g, int self, std::uint64_t bytes)
{
  const int p = g.size();
  const int right = (self + 1) % p;
  const int left = (self + p - 1) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  for (int s = 0; s < p - 1; ++s) { // reduce-scatter: add the received chunk to our own
    g.send_recv(self, right, chunk_bytes(bytes, p, mod(self - s)), left);
    g.reduce(self, chunk_bytes(bytes, p, mod(self - s - 1)));
  }
  for (int s = 0; s < p - 1; ++s) // allgather
    g.send_recv(self, right, chunk_bytes(bytes, p, mod(self + 1 - s)), left);
}

} // namespace ddlsim::collectives
