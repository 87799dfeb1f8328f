// Recursive doubling allreduce: log2 P exchanges of the whole vector.
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

namespace ddlsim::collectives {

void RecursiveDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  run_folded(g, self, bytes, [&](const PowerOfTwoFold& fold, int v) {
    for (int mask = 1; mask < fold.p2; mask <<= 1) {
      const int partner = fold.member(v ^ mask);
      g.send_recv(self, partner, bytes, partner);
      g.reduce(self, bytes);
    }
  });
}

} // namespace ddlsim::collectives
