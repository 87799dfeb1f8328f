// Allreduces that pick one of several algorithms by message size or group size, as MPI libraries do, and the
// stack's per-call costs.
#include "collectives/algorithms.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <algorithm>
#include <typeinfo>

namespace ddlsim::collectives {

namespace {
const Collective& by_size(const std::vector<SizeSwitch::Choice>& choices, std::uint64_t bytes)
{
  for (std::size_t i = 0; i + 1 < choices.size(); ++i)
    if (bytes <= choices[i].max_bytes)
      return *choices[i].collective;
  return *choices.back().collective;
}
const Collective& by_ranks(const std::vector<RankSwitch::Rule>& rules, const Group& group)
{
  for (const auto& r : rules)
    if (r.max_ranks == 0 || group.size() <= r.max_ranks)
      return *r.collective;
  return *rules.back().collective;
}
/** The stack's per-call cost of an allreduce of `bytes`, seconds (slept by every rank). */
double call_s(const Group& group, std::uint64_t bytes)
{
  const StackProfile& stack = group.options().stack;
  return stack.call_overhead_s + stack.call_copy_s_per_byte * double(bytes);
}
} // namespace

SizeSwitch::SizeSwitch(std::vector<Choice> choices)
    : choices_(std::move(choices))
{
  // Mixed when its algorithms differ and one of them ends its members at their own times (Group::set_mixed).
  auto apart = [](const Collective& c) {
    return dynamic_cast<const TreeAllreduce*>(&c) != nullptr || dynamic_cast<const DoubleBinaryTree*>(&c) != nullptr ||
           dynamic_cast<const NcclTree*>(&c) != nullptr || dynamic_cast<const Nccl*>(&c) != nullptr ||
           dynamic_cast<const Hierarchical*>(&c) != nullptr;
  };
  for (const auto& c : choices_)
    for (const auto& d : choices_)
      if (typeid(*c.collective) != typeid(*d.collective) && apart(*c.collective))
        mixed_ = true;
}

void SizeSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  group.set_mixed(mixed_);
  by_size(choices_, bytes).allreduce(group, self, bytes);
}

bool SizeSwitch::drivable(Group& group, std::uint64_t bytes) const
{
  group.set_mixed(mixed_);
  return by_size(choices_, bytes).drivable(group, bytes);
}

void SizeSwitch::drive(Group& group, std::uint64_t bytes) const
{
  group.set_mixed(mixed_);
  by_size(choices_, bytes).drive(group, bytes);
}

std::vector<std::vector<Flow>> SizeSwitch::flow_calls(Group& group, std::uint64_t bytes) const
{
  return by_size(choices_, bytes).flow_calls(group, bytes);
}

bool SizeSwitch::posts_apart(Group& group) const
{
  return std::any_of(choices_.begin(), choices_.end(),
                     [&](const Choice& c) { return c.collective->posts_apart(group); });
}

bool SizeSwitch::concurrent_flows(Group& group) const
{
  return std::any_of(choices_.begin(), choices_.end(),
                     [&](const Choice& c) { return c.collective->concurrent_flows(group); });
}

bool RankSwitch::posts_apart(Group& group) const
{
  return by_ranks(rules_, group).posts_apart(group);
}

bool RankSwitch::concurrent_flows(Group& group) const
{
  return by_ranks(rules_, group).concurrent_flows(group);
}

void RankSwitch::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  by_ranks(rules_, group).allreduce(group, self, bytes);
}

bool RankSwitch::drivable(Group& group, std::uint64_t bytes) const
{
  return by_ranks(rules_, group).drivable(group, bytes);
}

void RankSwitch::drive(Group& group, std::uint64_t bytes) const
{
  by_ranks(rules_, group).drive(group, bytes);
}

std::vector<std::vector<Flow>> RankSwitch::flow_calls(Group& group, std::uint64_t bytes) const
{
  return by_ranks(rules_, group).flow_calls(group, bytes);
}

std::unique_ptr<StreamProgram> RankSwitch::stream_program(Group& group) const
{
  return by_ranks(rules_, group).stream_program(group);
}

std::unique_ptr<StreamProgram> StackCall::stream_program(Group& group) const
{
  std::unique_ptr<StreamProgram> program = inner_->stream_program(group);
  if (program) // (the group outlives the phase's program)
    program->add_call_cost([&group](std::uint64_t bytes) { return call_s(group, bytes); });
  return program;
}

void StackCall::allreduce(Group& group, int self, std::uint64_t bytes) const
{
  const double s = call_s(group, bytes);
  if (s > 0)
    simgrid::s4u::this_actor::sleep_for(s);
  inner_->allreduce(group, self, bytes);
}

bool StackCall::drivable(Group& group, std::uint64_t bytes) const
{
  return inner_->drivable(group, bytes);
}

void StackCall::drive(Group& group, std::uint64_t bytes) const
{
  // Every rank sleeps the same call cost before it enters the flow form, whose plan starts when the last one does;
  // member-timed, each rank enters it the call cost after its own start.
  const double s = call_s(group, bytes);
  if (s > 0) {
    if (Group::MemberTimes* times = group.member_times())
      times->delay(s);
    simgrid::s4u::this_actor::sleep_for(s);
  }
  inner_->drive(group, bytes);
}

std::vector<std::vector<Flow>> StackCall::flow_calls(Group& group, std::uint64_t bytes) const
{
  return inner_->flow_calls(group, bytes); // the call cost is a sleep before the plan
}

} // namespace ddlsim::collectives
