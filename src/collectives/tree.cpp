// Binary-tree allreduce, pipelined in chunks: reduce to member 0, then broadcast from it.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"

namespace ddlsim::collectives {

void TreeAllreduce::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  const std::uint64_t chunk = pipeline_chunk_bytes(AlgorithmId::Tree, g.options(), bytes);
  const std::uint64_t chunks = bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
  std::vector<int> children;
  for (int c : {2 * self + 1, 2 * self + 2})
    if (c < p)
      children.push_back(c);
  const int parent = (self - 1) / 2;
  for (std::uint64_t i = 0; i < chunks; ++i) { // reduce: gather chunk i from each child, add it, pass it up
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    for (int c : children) {
      g.recv(self, c);
      g.reduce(self, size);
    }
    if (self != 0)
      g.send(self, parent, size);
  }
  for (std::uint64_t i = 0; i < chunks; ++i) { // broadcast
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    if (self != 0)
      g.recv(self, parent);
    for (int c : children)
      g.send(self, c, size);
  }
}

} // namespace ddlsim::collectives
