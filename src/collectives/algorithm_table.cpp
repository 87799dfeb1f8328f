// The algorithm table: one row per allreduce algorithm (derivations of the closed forms in docs/collectives.md).
#include "collectives/algorithm_table.hpp"

#include "collectives/algorithms.hpp"
#include "collectives/server_update.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

#include <algorithm>

namespace ddlsim::collectives {
namespace {

/** NCCL's default tree pipelining chunk is of this order; ddlsim's tree and dbtree default to 1 MiB
 *  (docs/collectives.md, "Pipelined tree"). */
constexpr std::uint64_t kTreeChunkBytes = 1 << 20;

analytical::Costs costs(const CollectiveOptions& o)
{
  return {o.msg_overhead_s, o.reduce_s_per_byte};
}

double ring_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  const std::uint64_t slices = ring_slices(in.options, in.options.chunk_bytes, in.ranks, bytes);
  if (slices <= 1 || in.ranks <= 1)
    return analytical::ring_allreduce_s(in.ranks, bytes, in.hops.flat, costs(in.options));
  // Exact when the slices are equal (slices divide M).
  return double(slices) * analytical::ring_allreduce_s(in.ranks, bytes / slices, in.hops.flat, costs(in.options));
}

double rd_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  return analytical::rd_allreduce_s(in.ranks, bytes, in.hops.flat, costs(in.options));
}

double hd_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  return analytical::hd_allreduce_s(in.ranks, bytes, in.hops.flat, costs(in.options));
}

double tree_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  return analytical::tree_allreduce_s(in.ranks, bytes, pipeline_chunk_bytes(AlgorithmId::Tree, in.options, bytes),
                                      in.hops.flat, costs(in.options));
}

double dbtree_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  // A lower bound: each tree alone with half the vector (the two trees share links).
  const std::uint64_t half = bytes - bytes / 2;
  return analytical::tree_allreduce_s(in.ranks, half, pipeline_chunk_bytes(AlgorithmId::Dbtree, in.options, half),
                                      in.hops.flat, costs(in.options));
}

double tree_floor_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  return analytical::tree_allreduce_floor_s(in.ranks, bytes, pipeline_chunk_bytes(AlgorithmId::Tree, in.options, bytes),
                                            in.hops.flat);
}

double dbtree_floor_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  const std::uint64_t half = bytes - bytes / 2; // dbtree_s's tree
  return analytical::tree_allreduce_floor_s(in.ranks, half, pipeline_chunk_bytes(AlgorithmId::Dbtree, in.options, half),
                                            in.hops.flat);
}

double ps_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  if (in.options.ps_hosts.empty())
    throw ConfigError("no closed form for parameter servers sharing hosts with ranks");
  // Round-robin: the whole tensor goes to one server, as if there were one.
  const int servers = in.options.ps_sharding == PsSharding::RoundRobin ? 1 : in.options.ps_servers;
  double update = 0; // PsUpdate::Server: the slowest server's sum and update of its shard (the largest one)
  if (in.options.ps_update == PsUpdate::Server && in.ranks > 1)
    for (const auto& rate : in.options.ps_rates)
      update = std::max(update, server_update_s(rate, in.ranks, chunk_bytes(bytes, servers, 0), in.options.optimizer));
  return analytical::ps_allreduce_s(in.ranks, servers, bytes, in.hops.server, costs(in.options)) + update;
}

double hier_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  if (in.ranks <= 1)
    return 0.0;
  ClosedFormInput leaders = in;
  leaders.ranks = in.nodes;
  leaders.hops.flat = in.hops.leaders;
  const double inter = entry(in.options.inter_algorithm).closed_form_s(bytes, leaders);
  return analytical::hier_allreduce_s(in.ranks_per_node, bytes, in.hops.intra, inter, costs(in.options));
}

/** NCCL's tree chunk: tuning.cc's hwLat comment, "Tree/Simple is the latency a 256kB chunk". */
constexpr std::uint64_t kNcclTreeChunkBytes = 256 << 10;

void need_nccl_shape(const ClosedFormInput& in)
{
  if (in.ranks > 1 && in.nccl.ring.empty())
    throw ConfigError("no closed form of NCCL's algorithms here (NCCL's ring and trees were not built)");
}

double nccl_ring_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  need_nccl_shape(in);
  // nccl's ring choice slices as the ring does (--chunks, --chunk-bytes; nccl-ring itself reads neither).
  const std::uint64_t slices =
      ring_slices(in.options, effective_chunk_bytes(AlgorithmId::Ring, in.options), in.ranks, bytes);
  if (slices <= 1 || in.ranks <= 1)
    return analytical::ring_allreduce_s(in.ranks, bytes, in.nccl.ring_hop, costs(in.options));
  return double(slices) * analytical::ring_allreduce_s(in.ranks, bytes / slices, in.nccl.ring_hop, costs(in.options));
}

double nccl_tree_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  need_nccl_shape(in);
  // A lower bound: one of the two trees alone with half of the vector (they share the heads' network links).
  const std::uint64_t half = bytes - bytes / 2;
  return analytical::tree_allreduce_s(in.nccl.trees[0], half,
                                      pipeline_chunk_bytes(AlgorithmId::NcclTree, in.options, half), costs(in.options));
}

double nccl_s(std::uint64_t bytes, const ClosedFormInput& in)
{
  if (in.ranks <= 1)
    return 0.0;
  need_nccl_shape(in);
  const NcclChoice c = nccl_choose(in.nccl.topology, bytes);
  const std::uint64_t wire = nccl_wire_bytes(bytes, nccl_efficiency(in.nccl.topology, c.algo, c.proto));
  const double base = nccl_base_latency_us(c.algo, c.proto) * 1e-6;
  return base + (c.algo == NcclAlgo::Ring ? nccl_ring_s(wire, in) : nccl_tree_s(wire, in));
}

template <class T>
std::unique_ptr<Collective> make(const CollectiveOptions&)
{
  return std::make_unique<T>();
}

std::unique_ptr<Collective> make_hier(const CollectiveOptions& o)
{
  if (o.inter_algorithm == AlgorithmId::Ps) // the node leaders push (TensorFlow's distributed_replicated)
    return std::make_unique<Hierarchical>(std::make_unique<ParameterServer>(true));
  return std::make_unique<Hierarchical>(entry(o.inter_algorithm).make(o));
}

const std::vector<AlgorithmEntry> kTable = {
    {AlgorithmId::Ring, "ring", "ring reduce-scatter + allgather (NCCL's ring)", true, kKnobChunk | kKnobFidelity, 0,
     FlowForm::Auto, "2(P-1)(alpha + o + M/(P B)) + (P-1) gamma M/P", make<RingAllreduce>, ring_s},
    {AlgorithmId::Rd, "rd", "recursive doubling of the whole vector (MPI, small messages)", true, 0, 0,
     FlowForm::WhenExact, "log2(p')(alpha + o + M/B + gamma M) [+ fold if P is not a power of two]",
     make<RecursiveDoubling>, rd_s},
    {AlgorithmId::Hd, "hd", "halving-doubling, Rabenseifner (MPI, large messages)", true, kKnobFidelity, 0,
     FlowForm::Auto, "2 log2(p')(alpha + o) + (1 - 1/p')(2 M/B + gamma M) [+ fold]", make<HalvingDoubling>, hd_s},
    {AlgorithmId::Tree, "tree", "pipelined binary tree: reduce to rank 0, broadcast", true, kKnobChunk, kTreeChunkBytes,
     FlowForm::WhenExact, "max-plus recurrence of the pipelined binary tree (docs/collectives.md)", make<TreeAllreduce>,
     tree_s, tree_floor_s},
    {AlgorithmId::Dbtree, "dbtree", "double binary tree, each tree with half of the vector (NCCL)", true, kKnobChunk,
     kTreeChunkBytes, FlowForm::WhenExact, "lower bound: one pipelined tree with M/2 (the two trees contend for links)",
     make<DoubleBinaryTree>, dbtree_s, dbtree_floor_s},
    {AlgorithmId::Hier, "hier", "to each node's leader, flat allreduce among leaders, back", false, kKnobInter, 0,
     FlowForm::None, "2(alpha_intra + M/B_intra) + (G-1) gamma M + inter-node allreduce among leaders + overheads",
     make_hier, hier_s},
    {AlgorithmId::Ps, "ps", "parameter servers: push shards, servers sum, pull", false, kKnobServers, 0, FlowForm::Auto,
     "2(alpha + M max(P,S)/(S B)) + overheads + gamma P M/S", make<ParameterServer>, ps_s},
    {AlgorithmId::NcclRing, "nccl-ring", "NCCL's ring through the topology: a node's GPUs, then the next node's", false,
     kKnobFidelity, 0, FlowForm::Auto, "2(P-1)(alpha + o + M/(P B)) + (P-1) gamma M/P over NCCL's ring order",
     make<NcclRing>, nccl_ring_s},
    {AlgorithmId::NcclTree, "nccl-tree", "NCCL's trees: a chain in each node, a double binary tree across nodes", false,
     kKnobChunk, kNcclTreeChunkBytes, FlowForm::WhenExact,
     "lower bound: one of the two pipelined trees with M/2 (they share the network links)", make<NcclTree>,
     nccl_tree_s},
    {AlgorithmId::Nccl, "nccl", "NCCL 2.5's choice of nccl-ring or nccl-tree and LL/LL128/Simple by size", false,
     kKnobChunk, kNcclTreeChunkBytes, FlowForm::WhenAsked,
     "baseLat(algo, proto) + the chosen form with M / efficiency(algo, proto) bytes (docs/stacks.md)", make<Nccl>,
     nccl_s},
};

/** The option fields that only some algorithms read, in the order they are checked. */
const std::vector<std::pair<const char*, Knob>> kKnobFields = {
    {"ps_servers", kKnobServers}, {"ps_hosts", kKnobServers},  {"ps_sharding", kKnobServers},
    {"ps_update", kKnobServers},  {"optimizer", kKnobServers}, {"inter_algorithm", kKnobInter},
    {"chunk_bytes", kKnobChunk},  {"chunks", kKnobChunk},      {"fidelity", kKnobFidelity}};

unsigned knobs(const AlgorithmEntry& e)
{
  return e.knobs | (e.flow != FlowForm::None ? kKnobFidelity : 0u);
}

/** True when some algorithm `spec` runs (hier's inter algorithm included) reads `knob`. */
bool reads(const AlgorithmSpec& spec, const CollectiveOptions& o, Knob knob)
{
  auto reads_choice = [&](const AlgorithmSpec::Choice& c) {
    return (knobs(entry(c.id)) & knob) || (c.id == AlgorithmId::Hier && (knobs(entry(o.inter_algorithm)) & knob));
  };
  for (const auto& c : spec.choices)
    if (reads_choice(c))
      return true;
  for (const auto& r : spec.by_ranks)
    for (const auto& c : r.choices)
      if (reads_choice(c))
        return true;
  return false;
}

/** "ps", "ring and hd", "ring, tree and dbtree": the algorithms that read `knob`. */
std::string readers(Knob knob)
{
  std::vector<std::string> names;
  for (const auto& e : kTable)
    if (knobs(e) & knob)
      names.push_back(e.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

bool finite_non_negative(double x)
{
  return x >= 0 && x < 1e9;
}

} // namespace

const std::vector<AlgorithmEntry>& algorithm_table()
{
  return kTable;
}

const AlgorithmEntry& entry(AlgorithmId id)
{
  for (const auto& e : kTable)
    if (e.id == id)
      return e;
  throw Error("internal: algorithm without a table row");
}

const AlgorithmEntry* find_algorithm(const std::string& name)
{
  for (const auto& e : kTable)
    if (name == e.name)
      return &e;
  return nullptr;
}

std::string known_algorithms()
{
  std::string out;
  for (const auto& e : kTable)
    out += std::string(e.name) + ", ";
  return out + "or SMALL<=SIZE,LARGE (e.g. rd<=8KiB,hd)";
}

bool uses_servers(const AlgorithmSpec& spec, const CollectiveOptions& o)
{
  return spec.uses(AlgorithmId::Ps) || (spec.uses(AlgorithmId::Hier) && o.inter_algorithm == AlgorithmId::Ps);
}

bool inter_algorithm_allowed(AlgorithmId id)
{
  return entry(id).flat || id == AlgorithmId::Ps;
}

std::string flat_algorithms()
{
  std::string out;
  for (const auto& e : kTable)
    if (e.flat)
      out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

bool uses_flow(AlgorithmId id, Fidelity f, int members)
{
  if (f == Fidelity::Steps) // rd's and hd's flow forms are the message level's steps; the ring has its own (uses_steps)
    return id == AlgorithmId::Rd || id == AlgorithmId::Hd;
  const FlowForm form = entry(id).flow;
  return form != FlowForm::None &&
         (f == Fidelity::Flow || (f == Fidelity::Auto && form == FlowForm::Auto && members > kFlowAboveRanks));
}

bool uses_steps(AlgorithmId id, Fidelity f)
{
  return f == Fidelity::Steps && id == AlgorithmId::Ring;
}

bool flow_form_allowed(AlgorithmId id, const CollectiveOptions& o)
{
  if (o.stack.ideal())
    return !(o.cpu_contention && o.msg_overhead_s > 0);
  if (o.pcie_contention || o.cpu_contention)
    return false;
  return id == AlgorithmId::Rd || id == AlgorithmId::Hd || id == AlgorithmId::Ring || id == AlgorithmId::Hier ||
         id == AlgorithmId::Ps || id == AlgorithmId::Tree || id == AlgorithmId::Dbtree || id == AlgorithmId::NcclTree;
}

std::string fidelity_used(const AlgorithmSpec& spec, const ClosedFormInput& in, const std::vector<std::string>& exact,
                          const std::vector<std::string>& computed)
{
  const CollectiveOptions& options = in.options;
  std::vector<std::string> parts;
  for (const auto& c : spec.choices) {
    const bool hier = c.id == AlgorithmId::Hier; // its leaders run the inter algorithm
    const AlgorithmId run = hier ? options.inter_algorithm : c.id;
    const bool allowed = flow_form_allowed(c.id, options) && flow_form_allowed(run, options);
    const bool flow = uses_flow(run, options.fidelity, hier ? in.nodes : in.ranks) && allowed;
    const bool steps = options.fidelity == Fidelity::Steps && allowed;
    const bool equal = std::find(exact.begin(), exact.end(), entry(run).name) != exact.end();
    // Computed as one program where shared links' ties may part it from SimGrid's: said so, even where another
    // group of the phase took an exact form.
    const bool together = std::find(computed.begin(), computed.end(), entry(run).name) != computed.end();
    // NCCL's choice: the ring's calls take the ring's flow form wherever the ring would (NcclRing::driven).
    const bool nccl_ring_flow = c.id == AlgorithmId::Nccl && uses_flow(AlgorithmId::Ring, options.fidelity, in.ranks) &&
                                flow_form_allowed(AlgorithmId::Ring, options);
    parts.push_back(std::string(entry(c.id).name) + ": " +
                    (steps            ? "steps"
                     : flow           ? "flow"
                     : together       ? kComputedTogether
                     : equal          ? "flow (equal to the message level here)"
                     : nccl_ring_flow ? "flow where it takes the ring, message where the trees"
                                      : "message") +
                    (hier ? " among node leaders" : ""));
  }
  return join(parts, "; ");
}

std::uint64_t effective_chunk_bytes(AlgorithmId id, const CollectiveOptions& options)
{
  if (options.chunks > 0) // the chunk depends on each message's size (pipeline_chunk_bytes, ring_slices)
    return 0;
  return options.chunk_bytes > 0 ? options.chunk_bytes : entry(id).default_chunk_bytes;
}

std::uint64_t pipeline_chunk_bytes(AlgorithmId id, const CollectiveOptions& options, std::uint64_t bytes)
{
  if (options.chunks > 0)
    return std::max<std::uint64_t>(1, (bytes + options.chunks - 1) / options.chunks);
  return effective_chunk_bytes(id, options);
}

std::uint64_t ring_slices(const CollectiveOptions& options, std::uint64_t chunk, int ranks, std::uint64_t bytes)
{
  if (options.chunks > 0)
    return std::max<std::uint64_t>(1, std::min<std::uint64_t>(options.chunks, bytes));
  const std::uint64_t per_slice = chunk * static_cast<std::uint64_t>(ranks);
  return chunk > 0 && bytes > per_slice ? (bytes + per_slice - 1) / per_slice : 1; // chunk <= 1 GiB: no overflow
}

void check_options(const AlgorithmSpec& spec, const CollectiveOptions& o, const std::vector<std::string>& given)
{
  if (o.chunks > 0 && o.chunk_bytes > 0)
    throw ConfigError(field("chunks") + " and " + field("chunk_bytes") +
                      " exclude each other (a chunk count per collective, or one chunk size for all)");
  if (!finite_non_negative(o.msg_overhead_s))
    throw ConfigError(field("msg_overhead_s") + " must be a finite number of seconds >= 0");
  if (!finite_non_negative(o.reduce_s_per_byte))
    throw ConfigError(field("reduce_s_per_byte") + " must be a finite number of seconds per byte >= 0");
  if (spec.uses(AlgorithmId::Hier) && !inter_algorithm_allowed(o.inter_algorithm))
    throw ConfigError(field("inter_algorithm") + " must be a flat algorithm or ps: " + flat_algorithms() + " (got '" +
                      entry(o.inter_algorithm).name + "')");
  if (o.ps_servers < 1)
    throw ConfigError(field("ps_servers") + " must be >= 1 (got " + std::to_string(o.ps_servers) + ")");
  if (uses_servers(spec, o) && !o.ps_hosts.empty() && static_cast<int>(o.ps_hosts.size()) != o.ps_servers)
    throw ConfigError(field("ps_hosts") + " names " + std::to_string(o.ps_hosts.size()) + " hosts but " +
                      field("ps_servers") + " is " + std::to_string(o.ps_servers));
  if (std::find(given.begin(), given.end(), "optimizer") != given.end() && o.ps_update != PsUpdate::Server)
    throw ConfigError(field("optimizer") + " has no effect unless " + field("ps_update") +
                      " is server (workers run the workload's own update time)");
  if (o.fidelity == Fidelity::Steps)
    for (const auto& row : algorithm_table()) {
      const bool stepped = uses_steps(row.id, Fidelity::Steps) || uses_flow(row.id, Fidelity::Steps, 0);
      if (spec.uses(row.id) && !(stepped && flow_form_allowed(row.id, o)))
        throw ConfigError(field("fidelity") + " steps has no form for " + row.name +
                          " (only ring, rd and hd run their messages step by step, and none with --pcie-contention or "
                          "--cpu-contention): use message, flow or auto");
    }
  if (!o.stack.ideal() && o.fidelity == Fidelity::Flow)
    for (const auto& row : algorithm_table()) {
      const bool leaders = spec.uses(AlgorithmId::Hier) && row.id == o.inter_algorithm; // hier's among its leaders
      if ((spec.uses(row.id) || leaders) && !flow_form_allowed(row.id, o))
        throw ConfigError(field("fidelity") + " flow has no form for " + row.name +
                          (leaders ? " (hier's leaders)" : "") + " with the stack '" + o.stack.name +
                          "' (its per-message costs need every message; with a stack only ring, rd, hd, ps, the "
                          "pipelined trees (tree, dbtree, nccl-tree) and hier over one of those have one, and none "
                          "with --pcie-contention or --cpu-contention): use message or auto");
    }
  for (const auto& [name, knob] : kKnobFields)
    if (std::find(given.begin(), given.end(), name) != given.end() && !reads(spec, o, knob))
      throw ConfigError(field(name) + " has no effect with " + field("algorithm") + " " + spec.label() + " (only " +
                        readers(knob) + " read it)");
}

namespace {

std::unique_ptr<Collective> make_sized(const std::vector<AlgorithmSpec::Choice>& sized,
                                       const CollectiveOptions& options)
{
  if (sized.size() == 1)
    return entry(sized.front().id).make(options);
  std::vector<SizeSwitch::Choice> choices;
  for (const auto& c : sized)
    choices.push_back({c.max_bytes, entry(c.id).make(options)});
  return std::make_unique<SizeSwitch>(std::move(choices));
}

std::unique_ptr<Collective> make_algorithm(const AlgorithmSpec& spec, const CollectiveOptions& options)
{
  if (spec.by_ranks.empty())
    return make_sized(spec.choices, options);
  std::vector<RankSwitch::Rule> rules;
  for (const auto& r : spec.by_ranks)
    rules.push_back({r.max_ranks, make_sized(r.choices, options)});
  return std::make_unique<RankSwitch>(std::move(rules));
}

} // namespace

std::unique_ptr<Collective> make_collective(const AlgorithmSpec& spec, const CollectiveOptions& options)
{
  auto algorithm = make_algorithm(spec, options);
  const StackProfile& stack = options.stack;
  if (stack.call_overhead_s > 0 || stack.call_copy_s_per_byte > 0)
    return std::make_unique<StackCall>(std::move(algorithm));
  return algorithm;
}

namespace {
/** The row whose closed form gives `spec`'s time for `bytes` (ConfigError under a stack other than ideal). */
const AlgorithmEntry& closed_form_row(const AlgorithmSpec& spec, std::uint64_t bytes, const ClosedFormInput& in)
{
  if (!in.options.stack.ideal())
    throw ConfigError("no closed form for the stack '" + in.options.stack.name + "' (only for ideal)");
  return entry(spec.for_size(bytes, in.ranks));
}
} // namespace

double closed_form_s(const AlgorithmSpec& spec, std::uint64_t bytes, const ClosedFormInput& in)
{
  return closed_form_row(spec, bytes, in).closed_form_s(bytes, in);
}

double closed_form_floor_s(const AlgorithmSpec& spec, std::uint64_t bytes, const ClosedFormInput& in)
{
  const AlgorithmEntry& e = closed_form_row(spec, bytes, in);
  return e.closed_form_floor_s != nullptr ? e.closed_form_floor_s(bytes, in) : 0.0;
}

std::string formula(const AlgorithmSpec& spec)
{
  return spec.switches() ? "per size and rank count: the closed form of the algorithm chosen"
                         : entry(spec.choices.front().id).formula;
}

} // namespace ddlsim::collectives
