// NCCL's allreduce as NCCL 2.5 builds it on a multi-node platform: the ring through the topology, the double binary
// tree across nodes with a chain inside each node, and NCCL's choice between them and of the protocol by size.
#include "collectives/algorithm_table.hpp"
#include "collectives/algorithms.hpp"
#include "common/error.hpp"

#include <algorithm>

#include <simgrid/s4u/Actor.hpp>

#include <cmath>

namespace ddlsim::collectives {
namespace {

bool nvlink_link(const std::string& name)
{
  return name.find("nvlink") != std::string::npos || name.find("nvswitch") != std::string::npos;
}

/** Volta (compute capability 7.0): NCCL enables LL128 only there (tuning.cc, minCompCap == maxCompCap == 70). */
bool volta(const char* gpu)
{
  return gpu != nullptr && std::string(gpu).rfind("V100", 0) == 0;
}

/** Member `self`'s part of one pipelined tree: reduce chunk by chunk from the children (one at a time, in order) to
 *  the parent, then broadcast back down; as TreeAllreduce, on any tree. */
void tree_part(Group& g, int self, std::uint64_t bytes, std::uint64_t chunk, const analytical::TreeShape& tree,
               int parent)
{
  const std::uint64_t chunks = analytical::pipeline_chunks(bytes, chunk);
  const auto& children = tree.children[self];
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    for (int c : children) {
      g.recv(self, c);
      g.reduce(self, size);
    }
    if (parent >= 0)
      g.send(self, parent, size);
  }
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::uint64_t size = chunk_bytes(bytes, chunks, i);
    if (parent >= 0)
      g.recv(self, parent);
    for (int c : children)
      g.send(self, c, size);
  }
}

/** The largest latency between neighbours of the ring `endpoints` (computed once per group). */
double ring_latency(Group& g, const std::vector<int>& endpoints)
{
  return g.cached(kNcclRingLatencyKey, [&] {
    double l = 0;
    for (std::size_t i = 0; i < endpoints.size(); ++i)
      l = std::max(l, g.world().route(endpoints[i], endpoints[(i + 1) % endpoints.size()]).alpha_s);
    return l;
  });
}

} // namespace

NcclShape nccl_shape(const CommWorld& world, const std::vector<int>& endpoints)
{
  std::vector<int> node_of_member;
  for (int e : endpoints)
    node_of_member.push_back(world.node(e));
  auto route = [&](int a, int b) { return world.route(endpoints[a], endpoints[b]); };
  NcclShape s = nccl_shape(node_of_member, route, false, false);
  // NVLink when every hop of the ring inside a node crosses NVLink (or NVSwitch) links only (graph->nvlink).
  bool nvlink = false;
  bool all = true;
  const int n = static_cast<int>(endpoints.size());
  for (int i = 0; i < n && n > 1; ++i) {
    const int a = s.ring[i], b = s.ring[(i + 1) % n];
    if (node_of_member[a] != node_of_member[b])
      continue;
    for (const auto& name : world.route_link_names(endpoints[a], endpoints[b])) {
      nvlink = nvlink || nvlink_link(name);
      all = all && nvlink_link(name);
    }
  }
  s.topology.nvlink = nvlink && all;
  bool volta_only = true;
  for (int e : endpoints)
    volta_only = volta_only && volta(world.host(e)->get_property("gpu"));
  s.topology.ll128 = s.topology.nvlink && volta_only;
  return s;
}

const NcclShape& NcclShapes::of(const Group& g) const
{
  auto it = shapes_.find(g.members());
  if (it == shapes_.end())
    it = shapes_.emplace(g.members(), nccl_shape(g.world(), g.members())).first;
  return it->second;
}

void NcclRing::run(Group& g, int self, std::uint64_t bytes, const NcclShape& shape)
{
  std::vector<int> endpoints;
  int position = 0;
  for (std::size_t i = 0; i < shape.ring.size(); ++i) {
    if (shape.ring[i] == self)
      position = static_cast<int>(i);
    endpoints.push_back(g.endpoint(shape.ring[i]));
  }
  if (driven(g)) {
    g.flow_call([&] { ring_plan(g, bytes, shape); });
    return;
  }
  if (g.use_flow(AlgorithmId::Ring)) { // the ring's flow form, posted by the members
    RingAllreduce::member_ring(g, position, endpoints, ring_latency(g, endpoints), bytes);
    return;
  }
  Group ring(g.world(), endpoints, g.channel()); // each member's own: RingAllreduce's driven forms need a shared one
  RingAllreduce::member_steps(ring, position, bytes);
}

bool NcclRing::driven(const Group& g)
{
  return g.size() > 1 && g.use_flow(AlgorithmId::Ring) && !g.member_flows();
}

void NcclRing::ring_plan(Group& g, std::uint64_t bytes, const NcclShape& shape)
{
  // The ring's flow form, driven on `g` (which every member shares), over the endpoints in NCCL's ring order.
  std::vector<int> endpoints;
  for (int member : shape.ring)
    endpoints.push_back(g.endpoint(member));
  const double latency = ring_latency(g, endpoints);
  const std::uint64_t slices = RingAllreduce::slices(g, bytes);
  for (std::uint64_t i = 0; i < slices; ++i)
    RingAllreduce::ring_flows(g, endpoints, latency, chunk_bytes(bytes, slices, i));
}

std::vector<std::vector<Flow>> NcclRing::flow_calls(Group& g, std::uint64_t bytes) const
{
  return ring_calls(g, bytes, shapes_.of(g));
}

std::vector<std::vector<Flow>> NcclRing::ring_calls(Group& g, std::uint64_t bytes, const NcclShape& shape)
{
  if (g.size() <= 1 || !g.use_flow(AlgorithmId::Ring)) // driven() but for member_flows, which a mirror turns off
    return {};
  std::vector<int> endpoints;
  for (int member : shape.ring)
    endpoints.push_back(g.endpoint(member));
  return RingAllreduce::slice_calls(g, endpoints, bytes); // ring_plan's slices
}

bool NcclRing::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return driven(g);
}

void NcclRing::drive(Group& g, std::uint64_t bytes) const
{
  const NcclShape& shape = shapes_.of(g);
  g.drive([&] { ring_plan(g, bytes, shape); });
}

void NcclRing::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (g.size() > 1)
    run(g, self, bytes, shapes_.of(g));
}

bool NcclTree::driven(Group& g)
{
  return g.size() > 1 && (g.use_flow(AlgorithmId::NcclTree) || NcclTree().exact_flow_form(g));
}

bool NcclTree::exact_flow_form(Group& g) const
{
  return g.options().fidelity == Fidelity::Auto && entry(AlgorithmId::NcclTree).flow == FlowForm::WhenExact &&
         g.size() > kFlowAboveRanks && (computed(g) || streamed(g));
}

namespace {
TreeFlows& nccl_tree_flows(Group& g, const NcclShape& shape)
{
  return g.cached_object<TreeFlows>(kNcclTreeFlowsKey, [&] {
    return tree_flows_of(g, {shape.trees[0], shape.trees[1]});
  });
}

/** What NCCL's two trees' transfers make of their shared links (tree_links), found once per group. */
const TreeLinks& nccl_tree_links(Group& g)
{
  return g.cached_object<TreeLinks>(
      kNcclTreeLinksKey, [&g] { return tree_links(nccl_tree_flows(g, nccl_shape(g.world(), g.members()))); });
}

/** ddlsim's own network over NCCL's two trees (computed_trees_of), kept between aggregations. */
ComputedTrees& nccl_tree_network(Group& g, TreeFlows& t)
{
  return g.cached_object<ComputedTrees>(kNcclTreeComputedKey, [&] { return computed_trees_of(t, nccl_tree_links(g)); });
}
} // namespace

bool NcclTree::computed(Group& g)
{
  // Under Fidelity::Auto only: --fidelity flow keeps the lock-step model (tree_flow_plan), as --per-rank-actors runs
  // it.
  return g.options().fidelity == Fidelity::Auto && g.member_timed() && !g.mixed() && g.world().solo() && g.size() > 1 &&
         flow_form_allowed(AlgorithmId::NcclTree, g.options()) && nccl_tree_links(g).exact;
}

bool NcclTree::streamed(Group& g)
{
  return whole_stream_allowed(g, AlgorithmId::NcclTree) && nccl_tree_links(g).computable;
}

std::unique_ptr<StreamProgram> NcclTree::stream_program(Group& g) const
{
  // One lane: aggregation by aggregation (tree_plan), computed where each is alone on its links. Several lanes (a
  // member in one aggregation per lane at once): the program wherever the routes are computable.
  if (!exact_flow_form(g) || (computed(g) && g.world().lanes() <= 1) || !streamed(g))
    return nullptr;
  g.world().note_computed_form(AlgorithmId::NcclTree);
  TreeFlows& t = nccl_tree_flows(g, shapes_.of(g));
  return std::make_unique<TreeStream>(g, t, nccl_tree_network(g, t), AlgorithmId::NcclTree); // half per tree
}

void NcclTree::tree_plan(Group& g, std::uint64_t bytes, const NcclShape& shape)
{
  const std::vector<std::uint64_t> halves{chunk_bytes(bytes, 2, 0), chunk_bytes(bytes, 2, 1)};
  if (g.member_times() != nullptr && computed(g)) { // member-timed on links each its member's own: the message level
    g.world().note_exact_form(AlgorithmId::NcclTree);
    TreeFlows& t = nccl_tree_flows(g, shape);
    computed_trees_plan(g, t, halves, nccl_tree_network(g, t), AlgorithmId::NcclTree);
    return;
  }
  if (g.member_times() != nullptr && streamed(g) && NcclTree().exact_flow_form(g))
    throw Error("internal: NCCL's trees' whole stream driven aggregation by aggregation (stream_program)");
  tree_flow_plan(g, nccl_tree_flows(g, shape), halves, AlgorithmId::NcclTree);
}

std::vector<std::vector<Flow>> NcclTree::load_calls(Group& g, std::uint64_t bytes, const NcclShape& shape)
{
  if (!driven(g) || g.world().solo()) // tree_flow_plan posts its loads outside a solo world only
    return {};
  return tree_load_calls(g, nccl_tree_flows(g, shape), {chunk_bytes(bytes, 2, 0), chunk_bytes(bytes, 2, 1)});
}

std::vector<std::vector<Flow>> NcclTree::flow_calls(Group& g, std::uint64_t bytes) const
{
  return load_calls(g, bytes, shapes_.of(g));
}

bool NcclTree::drivable(Group& g, std::uint64_t /*bytes*/) const
{
  return driven(g);
}

void NcclTree::drive(Group& g, std::uint64_t bytes) const
{
  const NcclShape& shape = shapes_.of(g);
  g.drive([&] { tree_plan(g, bytes, shape); });
}

void NcclTree::run(Group& g, int self, std::uint64_t bytes, const NcclShape& shape)
{
  if (driven(g)) {
    g.flow_call([&] { tree_plan(g, bytes, shape); });
    return;
  }
  // Two channels, as DoubleBinaryTree: 4c+1 and 4c+2 (engine/phase.cpp keeps 4k for concurrent aggregations).
  TreePair& trees = g.cached_object<TreePair>(kNcclTreeGroupsKey, [&g] {
    return TreePair{Group(g.world(), g.members(), 4 * g.channel() + 1),
                    Group(g.world(), g.members(), 4 * g.channel() + 2)};
  });
  const std::uint64_t half0 = chunk_bytes(bytes, 2, 0);
  const std::uint64_t half1 = chunk_bytes(bytes, 2, 1);
  const std::uint64_t chunk0 = pipeline_chunk_bytes(AlgorithmId::NcclTree, g.options(), half0);
  const std::uint64_t chunk1 = pipeline_chunk_bytes(AlgorithmId::NcclTree, g.options(), half1);
  const int parent0 = shape.parents[0][static_cast<std::size_t>(self)];
  const int parent1 = shape.parents[1][static_cast<std::size_t>(self)];
  g.world().fork_join(
      g.endpoint(self), g.channel(), [&] { tree_part(trees.first, self, half0, chunk0, shape.trees[0], parent0); },
      [&] { tree_part(trees.second, self, half1, chunk1, shape.trees[1], parent1); });
}

void NcclTree::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (g.size() > 1)
    run(g, self, bytes, shapes_.of(g));
}

std::uint64_t nccl_wire_bytes(std::uint64_t bytes, double efficiency)
{
  return efficiency >= 1 ? bytes : static_cast<std::uint64_t>(std::llround(double(bytes) / efficiency));
}

bool Nccl::trees_only(Group& g) const
{
  const NcclTopology& topology = shapes_.of(g).topology;
  return !g.sizes().empty() && std::all_of(g.sizes().begin(), g.sizes().end(), [&topology](std::uint64_t size) {
    return nccl_choose(topology, size).algo == NcclAlgo::Tree;
  });
}

bool Nccl::drivable(Group& g, std::uint64_t bytes) const
{
  if (g.size() <= 1)
    return false;
  // The trees: their lock-step model at --fidelity flow, or NcclTree's computed form (driven() under auto, which ends
  // each member at its own time: drive() starts each after its base latency) where every tensor of the phase takes
  // them. Where some take the ring, its flow form would start when the last member starts, which after members ended
  // apart is not the message level.
  const NcclTopology& topology = shapes_.of(g).topology;
  if (nccl_choose(topology, bytes).algo == NcclAlgo::Ring)
    return NcclRing::driven(g);
  // (One lane: the trees computed aggregation by aggregation, not NcclTree's whole stream. Several: its program,
  // stream_program.)
  const bool streams = g.world().lanes() > 1 && NcclTree::streamed(g);
  return g.use_flow(AlgorithmId::NcclTree) ||
         (trees_only(g) && NcclTree::driven(g) && (NcclTree::computed(g) || streams));
}

std::unique_ptr<StreamProgram> Nccl::stream_program(Group& g) const
{
  if (g.world().lanes() <= 1 || g.size() <= kFlowAboveRanks || !trees_only(g) || !NcclTree::driven(g) ||
      !NcclTree::streamed(g))
    return nullptr;
  g.world().note_computed_form(AlgorithmId::Nccl);
  const NcclShape& shape = shapes_.of(g);
  TreeFlows& t = nccl_tree_flows(g, shape);
  auto program = std::make_unique<TreeStream>(g, t, nccl_tree_network(g, t), AlgorithmId::NcclTree);
  const NcclTopology topology = shape.topology;
  program->set_wire([topology](std::uint64_t bytes) { return choose(topology, bytes).wire_bytes; });
  program->add_call_cost([topology](std::uint64_t bytes) { return choose(topology, bytes).computed_sleep_s(); });
  return program;
}

std::vector<std::vector<Flow>> Nccl::flow_calls(Group& g, std::uint64_t bytes) const
{
  if (g.size() <= 1)
    return {};
  const NcclShape& shape = shapes_.of(g);
  const Call call = choose(shape.topology, bytes); // as enter(), without its sleep
  return call.algo == NcclAlgo::Ring ? NcclRing::ring_calls(g, call.wire_bytes, shape)
                                     : NcclTree::load_calls(g, call.wire_bytes, shape);
}

double Nccl::Call::computed_sleep_s() const
{
  return base_s > 0 ? std::max(base_s, analytical::FluidNetwork::kSimultaneous) : 0.0;
}

Nccl::Call Nccl::choose(const NcclTopology& topology, std::uint64_t bytes)
{
  const NcclChoice choice = nccl_choose(topology, bytes);
  return {choice.algo, nccl_wire_bytes(bytes, nccl_efficiency(topology, choice.algo, choice.proto)),
          nccl_base_latency_us(choice.algo, choice.proto) * 1e-6};
}

Nccl::Call Nccl::enter(const NcclShape& shape, std::uint64_t bytes)
{
  const Call call = choose(shape.topology, bytes);
  simgrid::s4u::this_actor::sleep_for(call.base_s);
  return call;
}

void Nccl::drive(Group& g, std::uint64_t bytes) const
{
  // Every rank sleeps the protocol's base latency before it enters the ring's flow form, whose plan starts when the
  // last one does: the driver sleeps it once, when the last one arrives.
  const NcclShape& shape = shapes_.of(g);
  const Call call = enter(shape, bytes);
  Group::MemberTimes* times = g.member_times();
  if (call.algo == NcclAlgo::Tree && times != nullptr && NcclTree::computed(g)) {
    g.world().note_exact_form(AlgorithmId::Nccl); // every tensor takes the trees here (drivable)
    // The trees computed from each member's start (NcclTree::tree_plan): every rank sleeps the base latency from its
    // own start first (allreduce, enter), a sleep of at least 1 ns as SimGrid's (SimClock::sleep).
    if (call.base_s > 0)
      times->delay(call.computed_sleep_s());
  }
  g.drive([&] {
    if (call.algo == NcclAlgo::Ring)
      NcclRing::ring_plan(g, call.wire_bytes, shape);
    else
      NcclTree::tree_plan(g, call.wire_bytes, shape);
  });
}

void Nccl::allreduce(Group& g, int self, std::uint64_t bytes) const
{
  if (g.size() <= 1)
    return;
  const NcclShape& shape = shapes_.of(g);
  const Call call = enter(shape, bytes);
  if (call.algo == NcclAlgo::Ring)
    NcclRing::run(g, self, call.wire_bytes, shape);
  else
    NcclTree::run(g, self, call.wire_bytes, shape);
}

} // namespace ddlsim::collectives
