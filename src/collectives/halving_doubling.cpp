// Rabenseifner's allreduce: recursive halving reduce-scatter, recursive doubling allgather.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

#include <algorithm>
#include <vector>

namespace ddlsim::collectives {

void HalvingDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  run_folded(g, self, bytes, [&](const PowerOfTwoFold& fold, int v) {
    // Reduce-scatter: keep one half of the current segment, send the other, add what the partner sent.
    struct Step {
      int partner;
      std::uint64_t kept; // bytes of the kept half
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
      steps.push_back({partner, keep});
      (keep_low ? hi : lo) = mid;
    }
    // Allgather: the same partners in reverse; send what we hold, receive the partner's part.
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
      g.send_recv(self, it->partner, it->kept, it->partner);
  });
}

bool HalvingDoubling::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && g.use_flow(AlgorithmId::Hd);
}

namespace {
/** The main algorithm's steps over `fold`: per reduce-scatter step k each member's flow to its partner with the half it
 *  gives (give[k]) and, for the allgather, with the half it kept (keep[k], run in reverse order); most_kept[k], the
 *  largest kept half (its reduction). */
struct HdSteps {
  std::vector<std::vector<Flow>> give, keep;
  std::vector<std::uint64_t> most_kept;
};
HdSteps hd_steps(Group& g, const PowerOfTwoFold& fold, std::uint64_t bytes)
{
  const auto steps = static_cast<std::size_t>(log2_of(fold.p2));
  HdSteps s{std::vector<std::vector<Flow>>(steps), std::vector<std::vector<Flow>>(steps),
            std::vector<std::uint64_t>(steps, 0)};
  for (int v = 0; v < fold.p2; ++v) {
    const int self = g.endpoint(fold.member(v));
    std::uint64_t lo = 0, hi = bytes;
    std::size_t k = 0;
    for (int mask = fold.p2 / 2; mask >= 1; mask >>= 1, ++k) {
      const int partner = g.endpoint(fold.member(v ^ mask));
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const bool keep_low = (v & mask) == 0;
      s.give[k].push_back({self, partner, keep_low ? hi - mid : mid - lo});
      s.keep[k].push_back({self, partner, keep_low ? mid - lo : hi - mid});
      s.most_kept[k] = std::max(s.most_kept[k], s.keep[k].back().bytes);
      (keep_low ? hi : lo) = mid;
    }
  }
  return s;
}
} // namespace

std::vector<std::vector<Flow>> HalvingDoubling::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (!drivable(g, bytes))
    return {};
  HdSteps s = hd_steps(g, PowerOfTwoFold(g.size()), bytes);
  std::vector<std::vector<Flow>> calls = std::move(s.give);
  for (auto it = s.keep.rbegin(); it != s.keep.rend(); ++it)
    calls.push_back(std::move(*it));
  return folded_calls(g, bytes, std::move(calls));
}

bool HalvingDoubling::flow_plan(Group& g, std::uint64_t bytes) const
{
  // The message level's steps for every member at once: each reduce-scatter step is one flow per member to its
  // partner (the half it gives), after the overheads (CommWorld::run_step: with a stack's costs per message), then the
  // reductions of the kept halves (the largest one); the allgather runs the same partners in reverse, each member
  // sending what it holds. On a uniform platform this equals the message level exactly; every step waits for its
  // slowest pair, where the message level lets a pair that is done go on (docs/collectives.md, "Fidelity"). Each step's
  // flows, run together, split into components of the pairs that share links, which a solo world simulates once per
  // class (CommWorld::run_flows).
  run_folded_flows(g, bytes, [&](const PowerOfTwoFold& fold) {
    const CollectiveOptions& o = g.options();
    const HdSteps s = hd_steps(g, fold, bytes);
    for (std::size_t k = 0; k < s.give.size(); ++k) { // reduce-scatter
      g.world().run_step(s.give[k]);
      CommWorld::delay(o.reduce_s_per_byte * double(s.most_kept[k]));
    }
    for (auto k = s.keep.size(); k-- > 0;) // allgather
      g.world().run_step(s.keep[k]);
  });
  return true;
}

} // namespace ddlsim::collectives
