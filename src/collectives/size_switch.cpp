// An allreduce that picks one of two algorithms by message size, as MPI libraries do.
#include "collectives/algorithms.hpp"

namespace ddlsim::collectives {

void SizeSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  (bytes <= threshold_bytes_ ? *small_ : *large_).allreduce(group, self, bytes);
}

} // namespace ddlsim::collectives
