// The allreduce algorithms ddlsim simulates message by message (derivations in docs/collectives.md).
#pragma once

#include "collectives/collective.hpp"

namespace ddlsim::collectives {

/** @brief Ring (Patarasuk and Yuan 2009; NCCL's ring): reduce-scatter then allgather, 2(P-1) steps of
 *  M/P bytes to the right neighbour. In reduce-scatter step s member r sends chunk (r - s) mod P; in
 *  allgather step s it sends chunk (r + 1 - s) mod P. Flow level: one flow per member. */
class RingAllreduce final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;

private:
  static void ring_steps(Group& group, int self, std::uint64_t bytes);
};

/** @brief Recursive doubling of the whole vector: log2 P exchanges of M bytes with partner self XOR 2^k
 *  (what MPI libraries use for small messages). P not a power of two: the first 2r members (r = P - p',
 *  p' the largest power of two <= P) fold in pairs first and get the result back at the end. */
class RecursiveDoubling final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
};

/** @brief Rabenseifner: recursive halving reduce-scatter (halves of M/2, M/4, ...), then recursive
 *  doubling allgather; P not a power of two handled as in RecursiveDoubling. Flow level: one flow per
 *  member and phase. */
class HalvingDoubling final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
};

/** @brief Binary tree (member r's children are 2r+1 and 2r+2, root 0), pipelined in chunks: reduce to the
 *  root, then broadcast. Each member does one transfer at a time (children in order). */
class TreeAllreduce final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
};

/** @brief Double binary tree (NCCL): two binary trees, each carrying half of the vector at the same time. The
 *  second is the first with members mirrored (r -> P-1-r), so for an even P every member is an inner node
 *  in exactly one tree and a leaf in the other. Each tree uses its own mailbox channel. */
class DoubleBinaryTree final : public Collective {
public:
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
};

/** @brief Two levels: every rank of a node sends its vector to the node's leader (its lowest rank),
 *  leaders allreduce with a flat algorithm over the network, leaders send the result back. */
class Hierarchical final : public Collective {
public:
  explicit Hierarchical(std::unique_ptr<Collective> inter)
      : inter_(std::move(inter))
  {
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;

private:
  std::unique_ptr<Collective> inter_;
};

/** @brief Parameter server: S servers; every worker pushes its shard of each tensor to the servers, a
 *  server aggregates once all P pushes arrived, then every worker pulls. Incast on a server's link is
 *  ordinary link sharing. */
class ParameterServer final : public Collective {
public:
  void prepare(CommWorld& world) const override;
  std::vector<simgrid::s4u::ActorPtr> start(CommWorld& world,
                                            const std::vector<std::uint64_t>& sequence) const override;
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;
};

/** @brief Algorithms chosen by message size (spec "rd<=8KiB,hd"): the first choice whose max_bytes holds the
 *  message, the last one above every threshold. */
class SizeSwitch final : public Collective {
public:
  struct Choice {
    std::uint64_t max_bytes;
    std::unique_ptr<Collective> collective;
  };
  explicit SizeSwitch(std::vector<Choice> choices)
      : choices_(std::move(choices))
  {
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;

private:
  std::vector<Choice> choices_;
};

/** @brief A library's choice by group size (a stack profile's rules): the first rule with size <= max_ranks
 *  (0: any). */
class RankSwitch final : public Collective {
public:
  struct Rule {
    int max_ranks;
    std::unique_ptr<Collective> collective;
  };
  explicit RankSwitch(std::vector<Rule> rules)
      : rules_(std::move(rules))
  {
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;

private:
  std::vector<Rule> rules_;
};

/** @brief The stack's per-call costs (call_overhead_s + call_copy_s_per_byte x bytes, slept by every rank), then
 *  the algorithm. */
class StackCall final : public Collective {
public:
  explicit StackCall(std::unique_ptr<Collective> inner)
      : inner_(std::move(inner))
  {
  }
  void prepare(CommWorld& world) const override { inner_->prepare(world); }
  std::vector<simgrid::s4u::ActorPtr> start(CommWorld& world, const std::vector<std::uint64_t>& sequence) const override
  {
    return inner_->start(world, sequence);
  }
  void allreduce(Group& group, int self, std::uint64_t bytes) const override;

private:
  std::unique_ptr<Collective> inner_;
};

} // namespace ddlsim::collectives
