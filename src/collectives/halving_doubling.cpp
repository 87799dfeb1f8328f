// Rabenseifner's allreduce: recursive halving reduce-scatter, recursive doubling allgather.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <algorithm>
#include <vector>

namespace ddlsim::collectives {

void HalvingDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  run_folded(g, self, bytes, [&](const PowerOfTwoFold& fold, int v) {
    if (fold.p2 > 1 && g.use_flow(AlgorithmId::Hd)) {
      // Flow level: each phase sends its log2(p') messages as concurrent flows, one per partner, after
      // charging the phase's per-message overheads and all but one of its latencies (at the largest partner
      // latency) up front. On a uniform platform this equals the message-level time exactly.
      std::vector<std::pair<int, std::uint64_t>> give, keep;
      std::vector<int> partners;
      std::uint64_t lo = 0, hi = bytes, kept = 0;
      double max_latency = 0;
      for (int mask = fold.p2 / 2; mask >= 1; mask >>= 1) {
        const int partner = fold.member(v ^ mask);
        max_latency = std::max(max_latency, g.route(self, partner).alpha_s);
        const std::uint64_t mid = lo + (hi - lo) / 2;
        const bool keep_low = (v & mask) == 0;
        give.emplace_back(g.endpoint(partner), keep_low ? hi - mid : mid - lo);
        keep.emplace_back(g.endpoint(partner), keep_low ? mid - lo : hi - mid);
        kept += keep.back().second;
        partners.push_back(g.endpoint(partner));
        (keep_low ? hi : lo) = mid;
      }
      const double steps = double(partners.size());
      const double wait = (steps - 1) * max_latency + steps * g.options().msg_overhead_s;
      CommWorld& world = g.world();
      simgrid::s4u::this_actor::sleep_for(wait);
      world.exchange(g.endpoint(self), give, partners, false, g.channel()); // reduce-scatter
      g.reduce(self, kept);
      simgrid::s4u::this_actor::sleep_for(wait);
      world.exchange(g.endpoint(self), keep, partners, false, g.channel()); // allgather
    } else {
      // Reduce-scatter: keep one half of the current segment, send the other, add what the partner sent.
      struct Step {
        int partner;
        std::uint64_t kept, given; // bytes of the kept and of the sent half
      };
      std::vector<Step> steps;
      std::uint64_t lo = 0, hi = bytes;
      for (int mask = fold.p2 / 2; mask >= 1; mask >>= 1) {
        const int partner = fold.member(v ^ mask);
        const std::uint64_t mid = lo + (hi - lo) / 2;
        const bool keep_low = (v & mask) == 0;
        const std::uint64_t give = keep_low ? hi - mid : mid - lo;
        const std::uint64_t keep = keep_low ? mid - lo : hi - mid;
        g.send_recv(self, partner, give, partner);
        g.reduce(self, keep);
        steps.push_back({partner, keep, give});
        (keep_low ? hi : lo) = mid;
      }
      // Allgather: the same partners in reverse; send what we hold, receive the partner's part.
      for (auto it = steps.rbegin(); it != steps.rend(); ++it)
        g.send_recv(self, it->partner, it->kept, it->partner);
    }
  });
}

} // namespace ddlsim::collectives
