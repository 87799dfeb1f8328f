// Closed-form alpha-beta costs of collectives.
#include "analytical/alpha_beta.hpp"

#include <algorithm>

namespace ddlsim::analytical {

double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop) { return ring_allreduce_s(ranks, bytes, &hop, 1); }

double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop* hops, int hop_count)
{
  if (ranks <= 1)
    return 0.0;
  const double chunk = double(bytes) / ranks;
  double step = 0;
  for (int i = 0; i < hop_count; ++i)
    step = std::max(step, hops[i].alpha_s + chunk / hops[i].bandwidth_bytes_per_s);
  return 2.0 * (ranks - 1) * step;
}

} // namespace ddlsim::analytical
