// Ring allreduce: reduce-scatter then allgather, 2(P-1) steps of about M/P bytes to the right neighbour.
#pragma once

#include "collectives/collective.hpp"

namespace ddlsim::collectives {

/** @brief The bandwidth-optimal ring (Patarasuk and Yuan 2009; NCCL's ring). In reduce-scatter step s
 *  rank r sends chunk (r - s) mod P and receives chunk (r - s - 1) mod P; in allgather step s it sends
 *  chunk (r + 1 - s) mod P. Each rank sends 2(P-1) chunks. */
class RingAllreduce final : public Collective {
public:
  std::string name() const override { return "ring"; }
  void allreduce(CommWorld& world, int rank, std::uint64_t bytes) const override;
};

} // namespace ddlsim::collectives
