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
  const int right = (self + 1) % p;
  const int left = (self + p - 1) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  const std::uint64_t chunk = effective_chunk_bytes(AlgorithmId::Ring, g.options());
  const bool flow = g.use_flow(AlgorithmId::Ring);
  if (chunk > 0 && !flow && bytes > chunk * static_cast<std::uint64_t>(p)) {
    // Slices of at most P x chunk bytes, each a whole ring allreduce, one after the other.
    const std::uint64_t per_slice = chunk * static_cast<std::uint64_t>(p);
    const std::uint64_t slices = (bytes + per_slice - 1) / per_slice; // chunk <= 1 GiB: no overflow
    for (std::uint64_t i = 0; i < slices; ++i)
      ring_steps(g, self, chunk_bytes(bytes, slices, i));
    return;
  }
  if (flow) {
    // One flow carrying every chunk this member sends (all but chunks self+1 and self+2), plus the other
    // 2P-3 steps' latencies and overheads at the slowest ring hop, plus the P-1 reductions.
    const double steps = 2.0 * (p - 1) - 1;
    simgrid::s4u::this_actor::sleep_for(steps * (g.ring_max_latency() + g.options().msg_overhead_s));
    g.reduce(self, bytes - chunk_bytes(bytes, p, self)); // it adds every chunk but its own
    const std::uint64_t sent = 2 * bytes - chunk_bytes(bytes, p, mod(self + 1)) - chunk_bytes(bytes, p, mod(self + 2));
    g.send_recv(self, right, sent, left);
    return;
  }
  ring_steps(g, self, bytes);
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
