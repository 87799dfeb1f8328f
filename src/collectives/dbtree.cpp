// Double binary tree allreduce: two complementary pipelined trees, each with half of the vector.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <vector>

namespace ddlsim::collectives {

void DoubleBinaryTree::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  const int p = g.size();
  if (p <= 1)
    return;
  if (drivable(g, bytes)) {
    g.flow_call([&] { flow_plan(g, bytes); });
    return;
  }
  const TreeAllreduce tree;
  // Channels 4c+1 and 4c+2 keep both trees apart from each other, from the caller's channel c, and from the
  // channels 4k of concurrent aggregations (engine/phase.cpp). Made once per group.
  TreePair& trees = g.cached_object<TreePair>(kDbtreeGroupsKey, [&g] {
    std::vector<int> mirrored(g.members().rbegin(), g.members().rend());
    return TreePair{Group(g.world(), g.members(), 4 * g.channel() + 1),
                    Group(g.world(), std::move(mirrored), 4 * g.channel() + 2)};
  });
  const std::uint64_t half0 = chunk_bytes(bytes, 2, 0);
  const std::uint64_t half1 = chunk_bytes(bytes, 2, 1);
  g.world().fork_join(
      g.endpoint(self), g.channel(), [&] { tree.allreduce(trees.first, self, half0); },
      [&] { tree.allreduce(trees.second, p - 1 - self, half1); });
}

bool DoubleBinaryTree::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return g.size() > 1 && (g.use_flow(AlgorithmId::Dbtree) || exact_flow_form(g));
}

bool DoubleBinaryTree::exact_flow_form(Group& g) const
{
  return g.options().fidelity == Fidelity::Auto && entry(AlgorithmId::Dbtree).flow == FlowForm::WhenExact &&
         g.size() > kFlowAboveRanks && (member_timed_dbtree(g) || stream_dbtree(g));
}

namespace {
/** The two trees of the flow form: the binary heap, and the heap over the mirrored members. */
TreeFlows& double_tree_flows(Group& g)
{
  return g.cached_object<TreeFlows>(kDbtreeFlowsKey, [&] {
    const int p = g.size();
    analytical::TreeShape first = analytical::binary_heap(p);
    analytical::TreeShape second; // the heap over the mirrored members: position i is member P-1-i
    second.children.resize(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
      second.order.push_back(p - 1 - i);
      for (int c : first.children[i])
        second.children[p - 1 - i].push_back(p - 1 - c);
    }
    return tree_flows_of(g, {std::move(first), std::move(second)});
  });
}

/** What the two trees' transfers make of their shared links (tree_links), found once per group. */
const TreeLinks& double_tree_links(Group& g)
{
  return g.cached_object<TreeLinks>(kDbtreeLinksKey, [&g] { return tree_links(double_tree_flows(g)); });
}
} // namespace

bool member_timed_dbtree(Group& g)
{
  // Under Fidelity::Auto only: --fidelity flow keeps the lock-step model (tree_flow_plan), as --per-rank-actors runs
  // it.
  return g.options().fidelity == Fidelity::Auto && g.member_timed() && !g.mixed() && g.world().solo() && g.size() > 1 &&
         flow_form_allowed(AlgorithmId::Dbtree, g.options()) && double_tree_links(g).exact;
}

bool stream_dbtree(Group& g)
{
  return whole_stream_allowed(g, AlgorithmId::Dbtree) && double_tree_links(g).computable;
}

std::unique_ptr<StreamProgram> DoubleBinaryTree::stream_program(Group& g) const
{
  // One lane: aggregation by aggregation (flow_plan), computed where each is alone on its links. Several lanes (a
  // member in one aggregation per lane at once): the program wherever the routes are computable.
  if (!exact_flow_form(g) || (member_timed_dbtree(g) && g.world().lanes() <= 1) || !stream_dbtree(g))
    return nullptr;
  g.world().note_computed_form(AlgorithmId::Dbtree);
  TreeFlows& t = double_tree_flows(g);
  ComputedTrees& net =
      g.cached_object<ComputedTrees>(kDbtreeComputedKey, [&] { return computed_trees_of(t, double_tree_links(g)); });
  return std::make_unique<TreeStream>(g, t, net, AlgorithmId::Tree); // half of each aggregation per tree
}

bool DoubleBinaryTree::flow_plan(Group& g, std::uint64_t bytes) const
{
  const std::vector<std::uint64_t> halves{chunk_bytes(bytes, 2, 0), chunk_bytes(bytes, 2, 1)};
  if (g.member_times() != nullptr && member_timed_dbtree(g)) {
    // Member-timed on links each its member's own: the message level, computed
    g.world().note_exact_form(AlgorithmId::Dbtree); // exact_flow_form said so (drivable), or hier's leaders
    TreeFlows& t = double_tree_flows(g);
    computed_trees_plan(g, t, halves, g.cached_object<ComputedTrees>(kDbtreeComputedKey, [&] {
      return computed_trees_of(t, double_tree_links(g));
    }));
    return true;
  }
  if (g.member_times() != nullptr && stream_dbtree(g) && exact_flow_form(g))
    throw Error("internal: dbtree's whole stream driven aggregation by aggregation (stream_program)");
  tree_flow_plan(g, double_tree_flows(g), halves, AlgorithmId::Dbtree);
  return true;
}

std::vector<std::vector<Flow>> DoubleBinaryTree::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (!drivable(g, bytes) || g.world().solo())
    return {};
  return tree_load_calls(g, double_tree_flows(g), {chunk_bytes(bytes, 2, 0), chunk_bytes(bytes, 2, 1)});
}

} // namespace ddlsim::collectives
