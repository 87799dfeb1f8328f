// Allreduces that pick one of several algorithms by message size or group size, as MPI libraries do, and the
// stack's per-call costs.
#include "collectives/algorithms.hpp"

#include <simgrid/s4u/Actor.hpp>

namespace ddlsim::collectives {

void SizeSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  for (std::size_t i = 0; i + 1 < choices_.size(); ++i)
    if (bytes <= choices_[i].max_bytes)
      return choices_[i].collective->allreduce(group, self, bytes);
  choices_.back().collective->allreduce(group, self, bytes);
}

void RankSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  for (const auto& r : rules_)
    if (r.max_ranks == 0 || group.size() <= r.max_ranks)
      return r.collective->allreduce(group, self, bytes);
  rules_.back().collective->allreduce(group, self, bytes);
}

void StackCall::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  const StackProfile& stack = group.options().stack;
  const double call_s = stack.call_overhead_s + stack.call_copy_s_per_byte * double(bytes);
  if (call_s > 0)
    simgrid::s4u::this_actor::sleep_for(call_s);
  inner_->allreduce(group, self, bytes);
}

} // namespace ddlsim::collectives
