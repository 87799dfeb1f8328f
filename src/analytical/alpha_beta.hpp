// Closed-form alpha-beta costs of collectives (derivations in docs/analytical.md).
#pragma once

#include <cstdint>

namespace ddlsim::analytical {

/** @brief One hop of a contention-free network: latency alpha (s) and bandwidth (bytes/s). */
struct Hop {
  double alpha_s = 0;
  double bandwidth_bytes_per_s = 0;
};

/** @brief Ring allreduce of `bytes` over `ranks` ranks, every hop alike: 2(P-1)(alpha + M/(P B)).
 *  Exact for the message-level ring when P divides M; 0 for one rank. */
double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop& hop);

/** @brief Ring allreduce when hops differ but do not contend: the ring is lock-step, so every one of the
 *  2(P-1) steps takes as long as its slowest hop: 2(P-1) max_i(alpha_i + M/(P B_i)). */
double ring_allreduce_s(int ranks, std::uint64_t bytes, const Hop* hops, int hop_count);

} // namespace ddlsim::analytical
