// Chakra execution traces in and out (proto/chakra_et.proto): per-layer data-parallel traces, every rule naming
// the file and the node (or the byte offset, for the framing).
#include "workload/chakra.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "proto/chakra_et.pb.h"
#include "workload/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace ddlsim::workload {
namespace {

namespace cp = ChakraProtoMsg;

enum class Phase { Forward, WeightGradient, InputGradient };

/** A node as read, with the byte offset of its length prefix. */
struct ReadNode {
  cp::Node node;
  std::size_t offset = 0;
};

/** "FILE: node 7 ('COMP_NODE_conv1_FWD')". */
std::string where(const std::string& file, const cp::Node& n)
{
  return file + ": node " + std::to_string(n.id()) + " ('" + n.name() + "')";
}

enum class Varint { Ok, Truncated, TooLong };

/** A base-128 varint at `pos` (advanced past it). */
Varint read_varint(const std::string& b, std::size_t& pos, std::uint64_t& value)
{
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= b.size())
      return Varint::Truncated;
    const auto byte = static_cast<unsigned char>(b[pos++]);
    value |= std::uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return Varint::Ok;
  }
  return Varint::TooLong;
}

void write_varint(std::string& out, std::uint64_t value)
{
  while (value >= 0x80) {
    out += static_cast<char>(0x80 | (value & 0x7f));
    value >>= 7;
  }
  out += static_cast<char>(value);
}

/** The length prefix of the record at `pos` and its end; InputError naming the byte offset otherwise. */
std::size_t record_end(const ChakraFile& f, std::size_t& pos, const std::string& what)
{
  const std::size_t start = pos;
  std::uint64_t length = 0;
  switch (read_varint(f.bytes, pos, length)) {
  case Varint::Ok:
    break;
  case Varint::Truncated:
    throw InputError(f.name + ": byte " + std::to_string(start) + ": the length of " + what +
                     " is cut off by the end of the file (truncated varint)");
  case Varint::TooLong:
    throw InputError(f.name + ": byte " + std::to_string(start) + ": the length of " + what +
                     " is not a varint (more than 10 bytes)");
  }
  if (length > f.bytes.size() - pos)
    throw InputError(f.name + ": byte " + std::to_string(start) + ": " + what + " of " + std::to_string(length) +
                     " bytes, but only " + std::to_string(f.bytes.size() - pos) + " remain (truncated file)");
  return pos + static_cast<std::size_t>(length);
}

/** Every node of a file, after its GlobalMetadata. */
std::vector<ReadNode> read_nodes(const ChakraFile& f)
{
  if (f.bytes.empty())
    throw InputError(f.name + ": empty file (expected a Chakra execution trace: GlobalMetadata, then nodes)");
  if (f.bytes.size() >= 2 && static_cast<unsigned char>(f.bytes[0]) == 0x1f &&
      static_cast<unsigned char>(f.bytes[1]) == 0x8b)
    throw InputError(f.name + ": gzip-compressed: decompress it first (gunzip)");
  std::size_t pos = 0;
  std::size_t end = record_end(f, pos, "the GlobalMetadata");
  cp::GlobalMetadata meta;
  if (!meta.ParseFromArray(f.bytes.data() + pos, static_cast<int>(end - pos)))
    throw InputError(f.name + ": byte 0: not a Chakra GlobalMetadata message");
  pos = end;
  std::vector<ReadNode> nodes;
  while (pos < f.bytes.size()) {
    const std::size_t start = pos;
    const std::string what =
        nodes.empty() ? "the first node" : "the node after node " + std::to_string(nodes.back().node.id());
    end = record_end(f, pos, what);
    if (std::int64_t(nodes.size()) == kMaxChakraNodes)
      throw InputError(f.name + ": byte " + std::to_string(start) + ": more than " + std::to_string(kMaxChakraNodes) +
                       " nodes");
    ReadNode n;
    n.offset = start;
    if (!n.node.ParseFromArray(f.bytes.data() + pos, static_cast<int>(end - pos)))
      throw InputError(f.name + ": byte " + std::to_string(start) + ": " + what + " is not a Chakra Node message");
    pos = end;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

/** An integer attribute `name` of a node, or nothing; InputError when it is there but not an integer. */
std::optional<std::int64_t> int_attr(const std::string& file, const cp::Node& n, const std::string& name)
{
  for (const auto& a : n.attr()) {
    if (a.name() != name)
      continue;
    switch (a.value_case()) {
    case cp::AttributeProto::kInt64Val:
      return a.int64_val();
    case cp::AttributeProto::kInt32Val:
      return a.int32_val();
    case cp::AttributeProto::kUint32Val:
      return a.uint32_val();
    case cp::AttributeProto::kSint32Val:
      return a.sint32_val();
    case cp::AttributeProto::kSint64Val:
      return a.sint64_val();
    case cp::AttributeProto::kUint64Val:
      if (a.uint64_val() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(a.uint64_val());
      [[fallthrough]];
    default:
      throw InputError(where(file, n) + ": attribute " + name + " is not an integer");
    }
  }
  return std::nullopt;
}

bool strip(std::string& s, const std::string& prefix, const std::string& suffix)
{
  if (s.size() <= prefix.size() + suffix.size() || s.compare(0, prefix.size(), prefix) != 0 ||
      s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  s = s.substr(prefix.size(), s.size() - prefix.size() - suffix.size());
  return true;
}

/** The layer and phase a compute node's name gives: COMP_NODE_<layer>_FWD | _BWD_WG | _BWD_IG. */
std::pair<std::string, Phase> compute_name(const std::string& file, const cp::Node& n)
{
  static const std::pair<const char*, Phase> kSuffixes[] = {
      {"_FWD", Phase::Forward}, {"_BWD_WG", Phase::WeightGradient}, {"_BWD_IG", Phase::InputGradient}};
  for (const auto& [suffix, phase] : kSuffixes) {
    std::string layer = n.name();
    if (strip(layer, "COMP_NODE_", suffix))
      return {layer, phase};
  }
  throw InputError(where(file, n) +
                   ": a compute node's name must be COMP_NODE_<layer>_FWD, _BWD_WG or _BWD_IG (ddlsim reads "
                   "per-layer data-parallel traces, named as Chakra's text converter names them)");
}

/** One pass (iteration) of one layer, in microseconds and bytes, with the nodes it came from. */
struct Pass {
  std::uint64_t forward_us = 0, weight_us = 0, input_us = 0;
  std::int64_t bytes = 0;
  const cp::Node* forward = nullptr;
  const cp::Node* weight = nullptr;
  const cp::Node* input = nullptr;
  const cp::Node* allreduce = nullptr;
};

struct TraceLayer {
  std::string name;
  std::vector<Pass> passes;
};

/** What one file holds: its layers in forward order, each with its passes. */
struct Trace {
  std::vector<ReadNode> nodes; ///< what the passes point into
  std::vector<TraceLayer> layers;
  std::size_t passes = 0;
};

/** Node indices in dependency order (Kahn; among ready nodes the earliest in the file first, so a file whose
 *  dependencies all point backwards keeps its order). InputError naming a node on a cycle. */
std::vector<int> dependency_order(const std::string& file, const std::vector<ReadNode>& nodes,
                                  const std::unordered_map<std::uint64_t, int>& index)
{
  const int n = static_cast<int>(nodes.size());
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> children(n);
  for (int i = 0; i < n; ++i)
    for (const auto* deps : {&nodes[i].node.data_deps(), &nodes[i].node.ctrl_deps()})
      for (std::uint64_t d : *deps) {
        children[index.at(d)].push_back(i);
        ++waiting[i];
      }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : children[i])
      if (--waiting[c] == 0)
        ready.push(c);
  }
  if (static_cast<int>(order.size()) == n)
    return order;
  // Every node left waits on another node left: walking back through those must come round to a node twice.
  int at = 0;
  while (waiting[at] == 0)
    ++at;
  std::vector<bool> seen(n, false);
  while (!seen[at]) {
    seen[at] = true;
    int next = -1;
    for (const auto* deps : {&nodes[at].node.data_deps(), &nodes[at].node.ctrl_deps()})
      for (std::uint64_t d : *deps)
        if (next < 0 && waiting[index.at(d)] > 0)
          next = index.at(d);
    at = next;
  }
  throw InputError(where(file, nodes[at].node) + ": is on a dependency cycle");
}

/** The checks of one file and its layers. */
Trace read_trace(const ChakraFile& f)
{
  Trace t;
  t.nodes = read_nodes(f);
  const std::vector<ReadNode>& nodes = t.nodes;
  std::unordered_map<std::uint64_t, int> index;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const cp::Node& n = nodes[i].node;
    try {
      checked_utf8(n.name(), f.name);
    } catch (const InputError&) {
      throw InputError(f.name + ": node " + std::to_string(n.id()) + ": its name is not valid UTF-8");
    }
    // names go into one-line messages and become layer names
    if (std::any_of(n.name().begin(), n.name().end(), [](char c) { return (c >= 0 && c < 0x20) || c == 0x7f; }))
      throw InputError(f.name + ": node " + std::to_string(n.id()) + ": its name has a control character");
    const auto [it, fresh] = index.emplace(n.id(), i);
    if (!fresh)
      throw InputError(where(f.name, n) + ": a second node with id " + std::to_string(n.id()) +
                       " (the first is at byte " + std::to_string(nodes[it->second].offset) + ")");
    if (n.type() != cp::COMP_NODE && n.type() != cp::COMM_COLL_NODE) {
      const std::string type =
          cp::NodeType_IsValid(n.type()) ? cp::NodeType_Name(n.type()) : "unknown (" + std::to_string(n.type()) + ")";
      throw InputError(where(f.name, n) + ": node type " + type +
                       " is not supported (ddlsim reads the compute and all-reduce nodes of a data-parallel trace: "
                       "COMP_NODE, COMM_COLL_NODE)");
    }
  }
  for (const auto& r : nodes)
    for (const auto* deps : {&r.node.data_deps(), &r.node.ctrl_deps()})
      for (std::uint64_t d : *deps)
        if (!index.count(d))
          throw InputError(where(f.name, r.node) + ": depends on node " + std::to_string(d) + ", which the file lacks");
  const std::vector<int> order = dependency_order(f.name, nodes, index);

  std::unordered_map<std::string, int> layer_of;
  // forward nodes first: they name the layers, in dependency order
  for (int i : order) {
    const cp::Node& n = nodes[i].node;
    if (n.type() != cp::COMP_NODE)
      continue;
    const auto [layer, phase] = compute_name(f.name, n);
    if (phase != Phase::Forward)
      continue;
    const auto [it, fresh] = layer_of.emplace(layer, static_cast<int>(t.layers.size()));
    if (fresh)
      t.layers.push_back({layer, {}});
    Pass p;
    p.forward_us = n.duration_micros();
    p.forward = &n;
    t.layers[it->second].passes.push_back(p);
  }
  if (t.layers.empty())
    throw InputError(f.name + ": no forward compute node (COMP_NODE_<layer>_FWD)");
  // backward nodes: the k-th of a layer and phase belongs to its k-th pass
  std::unordered_map<const cp::Node*, std::pair<int, std::size_t>> pass_of; // backward node -> layer, pass
  std::unordered_map<std::string, std::size_t> seen;
  for (int i : order) {
    const cp::Node& n = nodes[i].node;
    if (n.type() != cp::COMP_NODE)
      continue;
    const auto [layer, phase] = compute_name(f.name, n);
    if (phase == Phase::Forward)
      continue;
    const auto it = layer_of.find(layer);
    if (it == layer_of.end())
      throw InputError(where(f.name, n) + ": backward of layer '" + layer + "', which has no forward node (COMP_NODE_" +
                       layer + "_FWD)");
    const std::size_t k = seen[n.name()]++;
    TraceLayer& l = t.layers[it->second];
    if (k >= l.passes.size())
      throw InputError(where(f.name, n) + ": more " + (phase == Phase::WeightGradient ? "BWD_WG" : "BWD_IG") +
                       " nodes than forward nodes for layer '" + layer + "' (" + std::to_string(l.passes.size()) + ")");
    Pass& p = l.passes[k];
    (phase == Phase::WeightGradient ? p.weight_us : p.input_us) = n.duration_micros();
    (phase == Phase::WeightGradient ? p.weight : p.input) = &n;
    pass_of[&n] = {it->second, k};
  }
  // all-reduce nodes: their bytes belong to the one backward compute node they depend on
  for (int i : order) {
    const cp::Node& n = nodes[i].node;
    if (n.type() != cp::COMM_COLL_NODE)
      continue;
    const auto type = int_attr(f.name, n, "comm_type");
    if (!type)
      throw InputError(where(f.name, n) + ": a collective without a comm_type attribute");
    if (*type != cp::ALL_REDUCE) {
      const bool known = *type >= 0 && *type <= std::numeric_limits<int>::max() &&
                         cp::CollectiveCommType_IsValid(static_cast<int>(*type));
      const std::string name = known ? cp::CollectiveCommType_Name(static_cast<cp::CollectiveCommType>(*type))
                                     : "unknown (" + std::to_string(*type) + ")";
      throw InputError(where(f.name, n) + ": collective " + name +
                       " is not supported (ddlsim reads data-parallel traces: ALL_REDUCE only)");
    }
    const auto size = int_attr(f.name, n, "comm_size");
    if (!size)
      throw InputError(where(f.name, n) + ": an all-reduce without a comm_size attribute");
    if (*size < 0)
      throw InputError(where(f.name, n) + ": comm_size must be >= 0 (got " + std::to_string(*size) + ")");
    std::unordered_set<const cp::Node*> backward;
    for (const auto* deps : {&n.data_deps(), &n.ctrl_deps()})
      for (std::uint64_t d : *deps)
        if (pass_of.count(&nodes[index.at(d)].node))
          backward.insert(&nodes[index.at(d)].node);
    if (backward.size() != 1)
      throw InputError(where(f.name, n) + ": an all-reduce must depend on exactly one backward compute node, whose " +
                       "layer its bytes belong to (it depends on " + std::to_string(backward.size()) + ")");
    const auto [layer, k] = pass_of.at(*backward.begin());
    Pass& p = t.layers[layer].passes[k];
    if (p.allreduce)
      throw InputError(where(f.name, n) + ": a second all-reduce for layer '" + t.layers[layer].name +
                       "' (the first is " + "node " + std::to_string(p.allreduce->id()) + ")");
    p.allreduce = &n;
    p.bytes = *size;
  }
  // passes: every layer has as many, and each repeats the first exactly
  t.passes = t.layers[0].passes.size();
  for (const auto& l : t.layers) {
    if (l.passes.size() != t.passes)
      throw InputError(where(f.name, *l.passes.back().forward) + ": layer '" + l.name + "' has " +
                       std::to_string(l.passes.size()) + " forward nodes, layer '" + t.layers[0].name + "' " +
                       std::to_string(t.passes) + " (each pass must hold every layer)");
    const Pass& a = l.passes[0];
    for (std::size_t k = 1; k < l.passes.size(); ++k) {
      const Pass& b = l.passes[k];
      if (a.forward_us != b.forward_us || a.weight_us != b.weight_us || a.input_us != b.input_us ||
          a.bytes != b.bytes || !a.weight != !b.weight || !a.input != !b.input || !a.allreduce != !b.allreduce)
        throw InputError(where(f.name, *b.forward) + ": pass " + std::to_string(k + 1) + " of layer '" + l.name +
                         "' differs from pass 1 (forward " + std::to_string(b.forward_us) + " vs " +
                         std::to_string(a.forward_us) + " us, backward " + std::to_string(b.weight_us + b.input_us) +
                         " vs " + std::to_string(a.weight_us + a.input_us) + " us, all-reduce " +
                         std::to_string(b.bytes) + " vs " + std::to_string(a.bytes) +
                         " bytes): ddlsim reads one iteration, which passes must repeat");
    }
  }
  return t;
}

/** The rank a file name gives (NAME.<rank>.et), or -1. */
long rank_of(const std::string& name)
{
  if (name.size() < 4 || name.compare(name.size() - 3, 3, ".et") != 0)
    return -1;
  const std::size_t dot = name.find_last_of('.', name.size() - 4);
  if (dot == std::string::npos || dot + 1 == name.size() - 3 || name.size() - 3 - dot > 10)
    return -1;
  long rank = 0;
  for (std::size_t i = dot + 1; i < name.size() - 3; ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    rank = rank * 10 + (name[i] - '0');
  }
  return rank;
}

} // namespace

ChakraImport import_chakra(const std::vector<ChakraFile>& files, const ImportMetadata& meta)
{
  if (files.empty())
    throw ConfigError("no Chakra file to import");
  // rank order when every name carries a rank, else the order given
  std::vector<std::size_t> by_rank(files.size());
  for (std::size_t i = 0; i < files.size(); ++i)
    by_rank[i] = i;
  bool ranked = true;
  for (const auto& f : files)
    ranked = ranked && rank_of(f.name) >= 0;
  if (ranked) {
    std::stable_sort(by_rank.begin(), by_rank.end(),
                     [&](std::size_t a, std::size_t b) { return rank_of(files[a].name) < rank_of(files[b].name); });
    for (std::size_t i = 1; i < by_rank.size(); ++i)
      if (rank_of(files[by_rank[i]].name) == rank_of(files[by_rank[i - 1]].name))
        throw InputError(files[by_rank[i]].name + ": rank " + std::to_string(rank_of(files[by_rank[i]].name)) +
                         " again (also " + files[by_rank[i - 1]].name + ")");
  }
  const ChakraFile& first = files[by_rank[0]];
  const Trace ref = read_trace(first);
  ChakraImport out;
  if (ref.passes > 1)
    out.notes.push_back(first.name + ": " + std::to_string(ref.passes) + " passes of the same iteration; read one");
  std::uint64_t largest = 0;
  std::string largest_at;
  for (std::size_t i = 1; i < by_rank.size(); ++i) {
    const ChakraFile& f = files[by_rank[i]];
    const Trace t = read_trace(f);
    if (t.layers.size() != ref.layers.size())
      throw InputError(f.name + ": " + std::to_string(t.layers.size()) + " layers, but " + first.name + " has " +
                       std::to_string(ref.layers.size()) + " (data-parallel ranks run the same layers)");
    for (std::size_t l = 0; l < t.layers.size(); ++l) {
      const Pass& a = ref.layers[l].passes[0];
      const Pass& b = t.layers[l].passes[0];
      if (t.layers[l].name != ref.layers[l].name)
        throw InputError(where(f.name, *b.forward) + ": layer " + std::to_string(l + 1) + " is '" + t.layers[l].name +
                         "', in " + first.name + " '" + ref.layers[l].name +
                         "' (data-parallel ranks run the same layers)");
      if (a.bytes != b.bytes)
        throw InputError(where(f.name, *b.forward) + ": layer '" + t.layers[l].name + "' all-reduces " +
                         std::to_string(b.bytes) + " bytes, in " + first.name + " " + std::to_string(a.bytes) +
                         " (data-parallel ranks all-reduce the same gradients)");
      const auto diff = [](std::uint64_t x, std::uint64_t y) { return x > y ? x - y : y - x; };
      const std::uint64_t d =
          std::max(diff(a.forward_us, b.forward_us), diff(a.weight_us + a.input_us, b.weight_us + b.input_us));
      if (d > largest) {
        largest = d;
        largest_at = f.name + ", layer '" + t.layers[l].name + "'";
      }
    }
  }
  if (files.size() > 1)
    out.notes.push_back(std::to_string(files.size()) + " ranks with the same layers and gradient bytes; " +
                        (largest == 0 ? "the same times too"
                                      : "times differ by up to " + std::to_string(largest) + " us (" + largest_at +
                                            "): the workload has " + first.name + "'s"));

  out.workload = workload_from_metadata(meta);
  proto::Workload& w = out.workload;
  for (const auto& l : ref.layers) {
    const Pass& p = l.passes[0];
    if (p.weight_us > std::numeric_limits<std::uint64_t>::max() - p.input_us)
      throw InputError(where(first.name, *p.weight) + ": BWD_WG + BWD_IG durations overflow 64 bits");
    auto* layer = w.add_layers();
    layer->set_name(l.name);
    layer->set_forward_s(double(p.forward_us) / 1e6);
    layer->set_backward_s(double(p.weight_us + p.input_us) / 1e6);
    layer->set_gradient_bytes(p.bytes);
  }
  if (w.layers_size() > kMaxLayers)
    throw InputError(first.name + ": " + std::to_string(w.layers_size()) + " layers (at most " +
                     std::to_string(kMaxLayers) + ")");
  validate_workload(w, first.name);
  return out;
}

ChakraExport export_chakra(const proto::Workload& w)
{
  ChakraExport out;
  auto append = [&](const google::protobuf::Message& m) {
    const std::string bytes = m.SerializeAsString();
    write_varint(out.bytes, bytes.size());
    out.bytes += bytes;
  };
  cp::GlobalMetadata meta; // never empty: Chakra's reader takes a zero length for the end of the file
  auto* schema = meta.add_attr();
  schema->set_name("schema");
  schema->set_string_val("chakra et_def.proto (mlcommons/chakra 6dc63e147b9d115286626cc122459e44d9d08401), "
                         "written by ddlsim " DDLSIM_VERSION);
  auto* model = meta.add_attr();
  model->set_name("model");
  model->set_string_val(w.model());
  append(meta);
  std::uint64_t next_id = 0;
  auto micros = [&](double s, const std::string& layer) {
    const double us = s * 1e6;
    if (!(us < 1.8e19))
      throw InputError("layer '" + layer + "': " + format_double(s) + " s does not fit in Chakra's duration_micros");
    const auto whole = static_cast<std::uint64_t>(std::llround(us));
    const double back = double(whole) / 1e6;
    if (back != s) {
      ++out.rounded;
      out.max_change_s = std::max(out.max_change_s, std::fabs(back - s));
    }
    return whole;
  };
  auto node = [&](const std::string& name, cp::NodeType type, std::uint64_t us, long dep) {
    cp::Node n;
    n.set_id(next_id++);
    n.set_name(name);
    n.set_type(type);
    n.set_duration_micros(us);
    if (dep >= 0)
      n.add_data_deps(static_cast<std::uint64_t>(dep));
    return n;
  };
  long last = -1;
  for (const auto& l : w.layers()) {
    const cp::Node n = node("COMP_NODE_" + l.name() + "_FWD", cp::COMP_NODE, micros(l.forward_s(), l.name()), last);
    last = static_cast<long>(n.id());
    append(n);
  }
  for (int i = w.layers_size() - 1; i >= 0; --i) {
    const auto& l = w.layers(i);
    const cp::Node n = node("COMP_NODE_" + l.name() + "_BWD_WG", cp::COMP_NODE, micros(l.backward_s(), l.name()), last);
    last = static_cast<long>(n.id());
    append(n);
    if (l.gradient_bytes() > 0) {
      cp::Node c = node("COMM_COLL_NODE_" + l.name() + "_ALLREDUCE", cp::COMM_COLL_NODE, 0, last);
      auto* type = c.add_attr();
      type->set_name("comm_type");
      type->set_int64_val(cp::ALL_REDUCE);
      auto* size = c.add_attr();
      size->set_name("comm_size");
      size->set_int64_val(l.gradient_bytes());
      append(c);
    }
  }
  return out;
}

} // namespace ddlsim::workload
