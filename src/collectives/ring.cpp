// Ring allreduce: reduce-scatter then allgather over the ring 0 -> 1 -> ... -> P-1 -> 0.
#include "collectives/ring.hpp"

namespace ddlsim::collectives {

void RingAllreduce::allreduce(CommWorld& world, int rank, std::uint64_t bytes) const
{
  const int p = world.size();
  if (p <= 1)
    return;
  const int right = (rank + 1) % p;
  const int left = (rank + p - 1) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  for (int s = 0; s < p - 1; ++s) // reduce-scatter
    world.send_recv(rank, right, chunk_bytes(bytes, p, mod(rank - s)), left);
  for (int s = 0; s < p - 1; ++s) // allgather
    world.send_recv(rank, right, chunk_bytes(bytes, p, mod(rank + 1 - s)), left);
}

} // namespace ddlsim::collectives
