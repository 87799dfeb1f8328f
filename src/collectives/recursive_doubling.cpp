// Recursive doubling allreduce: log2 P exchanges of the whole vector.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

#include <utility>
#include <vector>

namespace ddlsim::collectives {

void RecursiveDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  run_folded(g, self, bytes, [&](const PowerOfTwoFold& fold, int v) {
    for (int mask = 1; mask < fold.p2; mask <<= 1) {
      const int partner = fold.member(v ^ mask);
      g.send_recv(self, partner, bytes, partner);
      g.reduce(self, bytes);
    }
  });
}

bool RecursiveDoubling::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && (g.use_flow(AlgorithmId::Rd) || exact_flow_form(g));
}

bool RecursiveDoubling::exact_flow_form(Group& g) const
{
  const CollectiveOptions& o = g.options();
  if (o.fidelity != Fidelity::Auto || entry(AlgorithmId::Rd).flow != FlowForm::WhenExact ||
      g.size() <= kFlowAboveRanks || !flow_form_allowed(AlgorithmId::Rd, o))
    return false;
  if (g.world().lanes_solo()) {
    // Several lanes: the members' XOR translations are symmetries of every flow in flight (Group::xor_symmetric,
    // verified by whoever set it), so each step's transfers, one orbit of them, start, run and end together in every
    // lane whatever the other lanes carry: members never part, as in the step form.
    const int p = g.size();
    return (p & (p - 1)) == 0 && g.xor_symmetric();
  }
  if (!g.world().solo())
    return false;
  return g.cached(kRdExactKey, [&g] {
    const int p = g.size();
    if ((p & (p - 1)) != 0)
      return 0.0;               // a fold: the folded members end later than the others at message level
    for (int v = 1; v < p; ++v) // hosts of other speeds start their aggregations at other times (nominal times)
      if (g.world().host(g.endpoint(v))->get_speed() != g.world().host(g.endpoint(0))->get_speed())
        return 0.0;
    // Every step's transfers alike (one latency, one max-min rate): each starts, runs and ends with the others.
    std::vector<std::pair<int, int>> ends(static_cast<std::size_t>(p));
    for (int mask = 1; mask < p; mask <<= 1) {
      for (int v = 0; v < p; ++v)
        ends[v] = {g.endpoint(v), g.endpoint(v ^ mask)};
      if (!g.world().alike(ends))
        return 0.0;
    }
    return 1.0;
  }) > 0;
}

namespace {
/** The main algorithm's steps over `fold`: in step k every member's M to member XOR 2^k. */
std::vector<std::vector<Flow>> rd_steps(Group& g, const PowerOfTwoFold& fold, std::uint64_t bytes)
{
  std::vector<std::vector<Flow>> steps;
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    steps.emplace_back();
    steps.back().reserve(static_cast<std::size_t>(fold.p2));
    for (int v = 0; v < fold.p2; ++v)
      steps.back().push_back({g.endpoint(fold.member(v)), g.endpoint(fold.member(v ^ mask)), bytes});
  }
  return steps;
}
} // namespace

std::vector<std::vector<Flow>> RecursiveDoubling::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (!drivable(g, bytes))
    return {};
  return folded_calls(g, bytes, rd_steps(g, PowerOfTwoFold(g.size()), bytes));
}

bool RecursiveDoubling::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps for every member at once: in step k every member sends M to member XOR 2^k, after the
  // overheads (CommWorld::run_step: with a stack's costs per message), then reduces M. On a uniform platform this
  // equals the message level exactly; every step waits for its slowest pair (docs/collectives.md, "Fidelity"); a solo
  // world simulates each step's components once per class.
  if (g.options().fidelity == Fidelity::Auto)
    g.world().note_exact_form(AlgorithmId::Rd); // exact_flow_form said so (drivable)
  run_folded_flows(g, bytes, [&](const PowerOfTwoFold& fold) {
    const CollectiveOptions& o = g.options();
    for (const auto& flows : rd_steps(g, fold, bytes)) {
      g.world().run_step(flows);
      CommWorld::delay(o.reduce_s_per_byte * double(bytes));
    }
  });
  return true;
}

} // namespace ddlsim::collectives
