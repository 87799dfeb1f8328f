// Recursive doubling allreduce: log2 P exchanges of the whole vector.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

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
  return g.size() > 1 && g.use_flow(AlgorithmId::Rd);
}

bool RecursiveDoubling::flow_plan(Group& g, std::uint64_t bytes) const
{
  // Every member sends its log2(p') messages of M at once, one flow per partner, after the other steps'
  // latencies (at the largest partner latency) and every step's overhead; then its log2(p') reductions of M.
  run_folded_flows(g, bytes, [&](const PowerOfTwoFold& fold) {
    const CollectiveOptions& o = g.options();
    const int steps = log2_of(fold.p2);
    std::vector<Flow> flows;
    flows.reserve(static_cast<std::size_t>(fold.p2) * steps);
    for (int v = 0; v < fold.p2; ++v)
      for (int mask = 1; mask < fold.p2; mask <<= 1)
        flows.push_back({g.endpoint(fold.member(v)), g.endpoint(fold.member(v ^ mask)), bytes});
    const double latency = fold_partner_latency(g, fold, kRdLatencyKey);
    CommWorld::delay((steps - 1) * latency + steps * o.msg_overhead_s);
    g.world().run_flows(flows);
    CommWorld::delay(steps * o.reduce_s_per_byte * double(bytes));
  });
  return true;
}

} // namespace ddlsim::collectives
