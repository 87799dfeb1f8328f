// Folding a group whose size is not a power of two onto the largest power of two below it.
#pragma once

#include "collectives/collective.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ddlsim::collectives {

/** @brief The standard fold (MPICH): with p' the largest power of two <= P and r = P - p', members
 *  0..2r-1 pair up (2i, 2i+1): the even one hands its vector to the odd one before the main algorithm
 *  and gets the result back after it. Members that take part have a virtual rank in 0..p'-1. */
struct PowerOfTwoFold {
  int p2 = 1;    ///< p', the largest power of two <= P
  int extra = 0; ///< r = P - p'
  explicit PowerOfTwoFold(int p)
  {
    while (p2 * 2 <= p)
      p2 *= 2;
    extra = p - p2;
  }
  /** -1 for a member that sits the main algorithm out (an even member below 2r). */
  int virtual_rank(int member) const
  {
    if (member < 2 * extra)
      return member % 2 == 0 ? -1 : member / 2;
    return member - extra;
  }
  int member(int virtual_rank) const { return virtual_rank < extra ? 2 * virtual_rank + 1 : virtual_rank + extra; }

  /** Before the main algorithm. Returns false for a member that sits out: it has handed its vector over and
   *  already received the result. */
  bool fold_in(Group& g, int self, std::uint64_t bytes) const
  {
    if (self >= 2 * extra)
      return true;
    if (self % 2 == 0) {
      g.send(self, self + 1, bytes);
      g.recv(self, self + 1); // the result, after the main algorithm
      return false;
    }
    g.recv(self, self - 1);
    g.reduce(self, bytes);
    return true;
  }
  /** After the main algorithm: the odd member of a folded pair returns the result to its partner. */
  void fold_out(Group& g, int self, std::uint64_t bytes) const
  {
    if (self < 2 * extra)
      g.send(self, self - 1, bytes);
  }
};

/** @brief Runs `main(fold, virtual_rank)` for `self` inside the fold of its group (nothing for one member): the
 *  shared frame of recursive doubling and halving-doubling. */
template <class Main>
void run_folded(Group& g, int self, std::uint64_t bytes, Main main)
{
  if (g.size() <= 1)
    return;
  const PowerOfTwoFold fold(g.size());
  if (!fold.fold_in(g, self, bytes))
    return;
  main(fold, fold.virtual_rank(self));
  fold.fold_out(g, self, bytes);
}

/** @brief The fold's pushes: each even member below 2r hands its vector of `bytes` to the odd one above it (the
 *  results go back the other way). */
inline std::vector<Flow> fold_pushes(Group& g, const PowerOfTwoFold& fold, std::uint64_t bytes)
{
  std::vector<Flow> flows;
  for (int i = 0; i < fold.extra; ++i)
    flows.push_back({g.endpoint(2 * i), g.endpoint(2 * i + 1), bytes});
  return flows;
}

/** @brief Flow level, run by a plan's driver for every member at once: the fold's pushes (M each, after the
 *  overheads: CommWorld::run_step) and the odd members' reductions, then `main(fold)`, then the results back: the same
 * critical path as the message level, whose folded members take part in every step of the main algorithm. */
template <class Main>
void run_folded_flows(Group& g, std::uint64_t bytes, Main main)
{
  if (g.size() <= 1)
    return;
  const PowerOfTwoFold fold(g.size());
  const CollectiveOptions& o = g.options();
  std::vector<Flow> flows = fold_pushes(g, fold, bytes);
  if (!flows.empty()) {
    g.world().run_step(flows);
    CommWorld::delay(o.reduce_s_per_byte * double(bytes));
  }
  main(fold);
  if (!flows.empty()) {
    for (auto& f : flows)
      std::swap(f.from, f.to);
    g.world().run_step(flows);
  }
}

/** @brief The run_step calls of run_folded_flows around `main_calls` (the main algorithm's, in order): the fold's
 *  pushes first and the results back last, where the group's size is not a power of two (Collective::flow_calls). */
inline std::vector<std::vector<Flow>> folded_calls(Group& g, std::uint64_t bytes,
                                                   std::vector<std::vector<Flow>> main_calls)
{
  const PowerOfTwoFold fold(g.size());
  if (g.size() <= 1)
    return {};
  std::vector<Flow> in = fold_pushes(g, fold, bytes), out = in;
  for (auto& f : out)
    std::swap(f.from, f.to);
  std::vector<std::vector<Flow>> calls;
  if (!in.empty())
    calls.push_back(std::move(in));
  for (auto& c : main_calls)
    calls.push_back(std::move(c));
  if (!out.empty())
    calls.push_back(std::move(out));
  return calls;
}

/** @brief log2 of a power of two. */
inline int log2_of(int p2)
{
  int steps = 0;
  while ((1 << steps) < p2)
    ++steps;
  return steps;
}

} // namespace ddlsim::collectives
