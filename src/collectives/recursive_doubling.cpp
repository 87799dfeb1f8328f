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
  const int v = fold.virtual_rank(self);
  if (self < 2 * fold.extra) { // fold in: even members hand their vector to their odd neighbour
    if (v < 0) {
      g.send(self, self + 1, bytes);
      g.recv(self, self + 1); // the result, at the end
      return;
    }
    g.recv(self, self - 1);
    g.reduce(self, bytes);
  }
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    const int partner = fold.member(v ^ mask);
    g.send_recv(self, partner, bytes, partner);
    g.reduce(self, bytes);
  }
  if (self < 2 * fold.extra)
    g.send(self, self - 1, bytes);
}

} // namespace ddlsim::collectives
