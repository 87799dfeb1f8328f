// Rabenseifner's allreduce: recursive halving reduce-scatter, recursive doubling allgather.
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <algorithm>
#include <vector>

namespace ddlsim::collectives {

void HalvingDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  const PowerOfTwoFold fold(p);
  const int v = fold.virtual_rank(self);
  if (self < 2 * fold.extra) {
    if (v < 0) {
      g.send(self, self + 1, bytes);
      g.recv(self, self + 1);
      return;
    }
    g.recv(self, self - 1);
    g.reduce(self, bytes);
  }
  if (fold.p2 > 1 && g.flow_level()) {
    // One flow per phase to the nearest partner carrying all that phase's bytes; the phase's other
    // log2(p')-1 steps cost their latency and overhead at the largest partner latency; then the reductions.
    std::uint64_t lo = 0, hi = bytes, given = 0, kept = 0;
    int steps = 0;
    double max_latency = 0;
    for (int mask = fold.p2 / 2; mask >= 1; mask >>= 1, ++steps) {
      max_latency = std::max(max_latency, g.route(self, fold.member(v ^ mask)).first);
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const bool keep_low = (v & mask) == 0;
      given += keep_low ? hi - mid : mid - lo;
      kept += keep_low ? mid - lo : hi - mid;
      (keep_low ? hi : lo) = mid;
    }
    const int partner = fold.member(v ^ 1);
    const double wait = (steps - 1) * (max_latency + g.options().msg_overhead_s);
    simgrid::s4u::this_actor::sleep_for(wait);
    g.send_recv(self, partner, given, partner); // reduce-scatter
    g.reduce(self, kept);
    simgrid::s4u::this_actor::sleep_for(wait);
    g.send_recv(self, partner, kept, partner); // allgather
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
  if (self < 2 * fold.extra)
    g.send(self, self - 1, bytes);
}

} // namespace ddlsim::collectives
