// Recursive doubling allreduce: log2 P exchanges of the whole vector.
#include "collectives/algorithms.hpp"
#include "collectives/power_of_two.hpp"

namespace ddlsim::collectives {

void RecursiveDoubling::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  const PowerOfTwoFold fold(p);
  if (!fold.fold_in(g, self, bytes))
    return;
  const int v = fold.virtual_rank(self);
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    const int partner = fold.member(v ^ mask);
    g.send_recv(self, partner, bytes, partner);
    g.reduce(self, bytes);
  }
  fold.fold_out(g, self, bytes);
}

} // namespace ddlsim::collectives
