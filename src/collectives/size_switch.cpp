// An allreduce that picks one of several algorithms by message size, as MPI libraries do.
#include "collectives/algorithms.hpp"

namespace ddlsim::collectives {

void SizeSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  for (std::size_t i = 0; i + 1 < choices_.size(); ++i)
    if (bytes <= choices_[i].max_bytes)
      return choices_[i].collective->allreduce(group, self, bytes);
  choices_.back().collective->allreduce(group, self, bytes);
}

} // namespace ddlsim::collectives
