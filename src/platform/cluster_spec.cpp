// Generated clusters: validation of the description, its inline form, and the layout of one server.
#include "platform/cluster_spec.hpp"

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

namespace ddlsim::platform {
namespace {

// --- One name table per kind: parsing, printing and the lists in error messages all read it.

const NameTable<Intra> kIntraNames = {{Intra::Pcie, "pcie"}, {Intra::NvLink, "nvlink"}, {Intra::NvSwitch, "nvswitch"}};
const NameTable<Inter> kInterNames = {{Inter::Eth10G, "10gbe"},
                                      {Inter::Eth25G, "25gbe"},
                                      {Inter::Ib56, "ib56"},
                                      {Inter::Ib100, "ib100"},
                                      {Inter::Ib200, "ib200"}};
const NameTable<Topology> kTopologyNames = {{Topology::Star, "star"}, {Topology::FatTree, "fat-tree"}};

bool contains(const std::vector<std::string>& items, const std::string& x)
{
  return std::find(items.begin(), items.end(), x) != items.end();
}

/** Latency in prose: "2.85 us" (up to 12 significant digits, as the XML writer prints numbers). */
std::string microseconds(double seconds)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g us", seconds * 1e6);
  return buf;
}

/** 12 significant digits: 24.999999999999996 -> "25". */
std::string digits12(double x)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return buf;
}

/** 2 -> "two": counts in prose. */
std::string count_word(int n)
{
  static const char* const words[] = {"zero", "one", "two", "three", "four"};
  return n >= 0 && n <= 4 ? words[n] : std::to_string(n);
}

// --- What the GPU catalogue's interconnect facts allow.

/** The DGX-1 hybrid cube-mesh exists with NVLink 1.0 (P100, 4 links: one per neighbour) and NVLink 2.0 (V100,
 *  6 links: two neighbours joined twice). */
bool fits_dgx1_mesh(const GpuSpec& gpu)
{
  return (gpu.nvlink_generation == 1 && gpu.nvlink_links == 4) || (gpu.nvlink_generation == 2 && gpu.nvlink_links == 6);
}

/** NVSwitch joins NVLink 2.0 and later GPUs (DGX-2: V100, DGX A100: A100). */
bool fits_nvswitch(const GpuSpec& gpu)
{
  return gpu.nvlink_generation >= 2;
}

/** Catalogued GPUs that pass `fits`, "A or B". */
std::string gpus_that(const std::function<bool(const GpuSpec&)>& fits)
{
  std::vector<std::string> names;
  for (const auto& gpu : gpu_catalog())
    if (fits(gpu))
      names.push_back(gpu.name);
  return join(names, " or ");
}

/** NVLink 2.0 links between the GPUs of a DGX-1 (V100), upper triangle: count[a][b] for a < b. */
int dgx1_v100_links(int a, int b)
{
  static const int count[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {0, 0, 2, 1, 0, 2, 0, 0}, {0, 0, 0, 2, 0, 0, 1, 0},
                                  {0, 0, 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 1, 1, 2}, {0, 0, 0, 0, 0, 0, 2, 1},
                                  {0, 0, 0, 0, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 0, 0}};
  return a < b ? count[a][b] : count[b][a];
}

/** Links joining GPUs a and b of a DGX-1 built of `gpu`: the V100 counts, or one per neighbour with 4 links. */
int dgx1_links(const GpuSpec& gpu, int a, int b)
{
  const int v100 = dgx1_v100_links(a, b);
  return gpu.nvlink_links >= 6 ? v100 : (v100 > 0 ? 1 : 0);
}

// --- Validation, in option order, one step per group of fields.

/** Names fields as options or as inline keys, and throws the ConfigError. */
class Checker {
public:
  explicit Checker(SpecNaming naming)
      : options_(naming == SpecNaming::Options)
  {
  }

  std::string key(const std::string& k) const { return options_ ? field(k) : k; }

  [[noreturn]] void fail(const std::string& msg) const
  {
    throw ConfigError((options_ ? "" : field("cluster") + ": ") + msg);
  }

  void at_least_one(const std::string& k, int v) const
  {
    if (v < 1)
      fail(key(k) + " must be >= 1 (got " + std::to_string(v) + ")");
  }

  template <typename Kind>
  Kind parse(const std::string& k, const std::string& text, const NameTable<Kind>& table) const
  {
    if (auto kind = find_name(table, text))
      return *kind;
    fail(key(k) + " must be one of: " + names_of(table) + " (got '" + text + "')");
  }

private:
  bool options_;
};

void check_sizes(const ClusterSpec& s, const Checker& c)
{
  c.at_least_one("nodes", s.nodes);
  if (s.gpus_per_node < 0)
    c.fail(c.key("gpus-per-node") + " must be >= 0 (got " + std::to_string(s.gpus_per_node) +
           "; 0: CPU-only nodes, ranks on the CPU hosts)");
  if (s.nodes > kMaxNodes)
    c.fail(c.key("nodes") + " must be at most " + std::to_string(kMaxNodes) + " (got " + std::to_string(s.nodes) + ")");
  if (s.gpus_per_node > kMaxGpusPerNode)
    c.fail(c.key("gpus-per-node") + " must be at most " + std::to_string(kMaxGpusPerNode) + " (got " +
           std::to_string(s.gpus_per_node) + ")");
  const long long gpus = static_cast<long long>(s.nodes) * s.gpus_per_node; // no int overflow
  if (gpus > kMaxGpus)
    c.fail(c.key("nodes") + " x " + c.key("gpus-per-node") + " must be at most " + std::to_string(kMaxGpus) +
           " GPUs (got " + std::to_string(gpus) + ")");
  if (s.gpus_per_node == 0) {
    if (!s.gpu.empty())
      c.fail(c.key("gpu") + " needs " + c.key("gpus-per-node") + " >= 1 (CPU-only nodes have no GPU; got '" + s.gpu +
             "')");
    return;
  }
  if (s.gpu.empty())
    c.fail(c.key("gpu") + " is required with " + c.key("gpus-per-node") + " >= 1 (known: " + known_gpus() + ")");
  if (find_gpu(s.gpu) == nullptr)
    c.fail(c.key("gpu") + ": unknown GPU '" + s.gpu + "' (known: " + known_gpus() + ")");
}

/** The link overrides: times >= 0 with a unit, bandwidths > 0 with a unit; intra overrides need GPUs. */
void check_link_overrides(const ClusterSpec& s, const Checker& c)
{
  for (const auto& [k, v] : {std::pair{"inter-latency", s.inter_latency_s}, {"intra-latency", s.intra_latency_s}})
    if (v && !(*v >= 0 && std::isfinite(*v)))
      c.fail(c.key(k) + " must be a time >= 0 (got " + format_double(*v) + " s)");
  for (const auto& [k, v] : {std::pair{"inter-bandwidth", s.inter_bandwidth_bytes_per_s},
                             {"intra-bandwidth", s.intra_bandwidth_bytes_per_s}})
    if (v && !(*v > 0 && std::isfinite(*v)))
      c.fail(c.key(k) + " must be a bandwidth > 0 (got " + format_double(*v) + " B/s)");
  if (s.gpus_per_node == 0 && (s.intra_latency_s || s.intra_bandwidth_bytes_per_s))
    c.fail(c.key(s.intra_latency_s ? "intra-latency" : "intra-bandwidth") + " needs " + c.key("gpus-per-node") +
           " >= 1 (CPU-only nodes have no GPU-to-GPU links)");
}

/** Parses an override's text into `out` (empty text: unset). */
void parse_override(const Checker& c, const std::string& k, const std::string& text, bool time,
                    std::optional<double>& out)
{
  if (text.empty())
    return;
  try {
    out = time ? parse_seconds(text, c.key(k)) : parse_bandwidth(text, c.key(k));
  } catch (const ConfigError& e) {
    c.fail(e.message_template());
  }
}

void check_nics(const ClusterSpec& s, const Checker& c)
{
  c.at_least_one("nics-per-node", s.nics_per_node);
  if (s.gpus_per_node == 0 && s.nics_per_node != 1)
    c.fail(c.key("nics-per-node") + " must be 1 with " + c.key("gpus-per-node") +
           " 0 (the CPU host uses one NIC; got " + std::to_string(s.nics_per_node) + ")");
  if (s.gpus_per_node % s.nics_per_node != 0)
    c.fail(c.key("nics-per-node") + " " + std::to_string(s.nics_per_node) + " does not divide " +
           c.key("gpus-per-node") + " " + std::to_string(s.gpus_per_node) +
           " (every NIC serves the same number of GPUs)");
}

/** Combinations the hardware does not have (read from the GPU catalogue's interconnect facts). */
void check_hardware(const ClusterSpec& s, const Checker& c)
{
  if (s.gpus_per_node == 0) {
    if (s.intra != Intra::Pcie)
      c.fail(c.key("intra") + " needs " + c.key("gpus-per-node") + " >= 1 (CPU-only nodes have no GPU-to-GPU links)");
    return;
  }
  const GpuSpec& gpu = gpu_by_name(s.gpu);
  if (s.intra == Intra::Pcie && gpu.gpus_per_board > 1 && s.gpus_per_node % gpu.gpus_per_board != 0)
    c.fail(c.key("gpu") + " " + gpu.name + " needs " +
           (gpu.gpus_per_board == 2 ? std::string("an even ")
                                    : "a multiple of " + std::to_string(gpu.gpus_per_board) + " as ") +
           c.key("gpus-per-node") + " (" + count_word(gpu.gpus_per_board) + " " + gpu.chip + " GPUs per " + gpu.name +
           " board; got " + std::to_string(s.gpus_per_node) + ")");
  if (s.intra == Intra::NvLink) {
    if (!fits_dgx1_mesh(gpu))
      c.fail(c.key("intra") + " nvlink (the DGX-1 hybrid cube-mesh) needs " + c.key("gpu") + " " +
             gpus_that(fits_dgx1_mesh) + " (got '" + s.gpu + "')");
    if (s.gpus_per_node != 8)
      c.fail(c.key("intra") + " nvlink (the DGX-1 hybrid cube-mesh) needs " + c.key("gpus-per-node") + " 8 (got " +
             std::to_string(s.gpus_per_node) + ")");
  }
  if (s.intra == Intra::NvSwitch && !fits_nvswitch(gpu))
    c.fail(c.key("intra") + " nvswitch needs " + c.key("gpu") + " " + gpus_that(fits_nvswitch) + " (got '" + s.gpu +
           "')");
}

void check_topology(const ClusterSpec& s, const Checker& c)
{
  if (s.topology == Topology::Star) {
    if (s.nodes_per_leaf != 0)
      c.fail(c.key("nodes-per-leaf") + " needs " + c.key("topology") + " fat-tree");
    if (s.oversubscription != 1)
      c.fail(c.key("oversubscription") + " needs " + c.key("topology") + " fat-tree");
    return;
  }
  if (s.nodes_per_leaf < 1)
    c.fail(c.key("topology") + " fat-tree needs " + c.key("nodes-per-leaf") + " >= 1 (got " +
           std::to_string(s.nodes_per_leaf) + ")");
  if (s.nodes % s.nodes_per_leaf != 0)
    c.fail(c.key("nodes-per-leaf") + " " + std::to_string(s.nodes_per_leaf) + " does not divide " + c.key("nodes") +
           " " + std::to_string(s.nodes));
  if (!(s.oversubscription >= 1) || !std::isfinite(s.oversubscription))
    c.fail(c.key("oversubscription") + " must be >= 1 (got " + format_double(s.oversubscription) + ")");
}

/** A PCIe tree: vertex 0 is socket 0 (where the CPU host sits); every other vertex has a parent and the link to
 *  it (used "up" when going towards socket 0). */
struct PcieTree {
  std::vector<int> parent = {-1};
  std::vector<int> edge = {-1};
  std::vector<int> depth = {0};
  std::vector<std::string> label = {"socket 0 (CPU host)"};

  int add(int parent_vertex, int link, const std::string& what)
  {
    parent.push_back(parent_vertex);
    edge.push_back(link);
    depth.push_back(depth[parent_vertex] + 1);
    label.push_back(what);
    return static_cast<int>(parent.size()) - 1;
  }

  /** One line per vertex, children indented under their parent: "link-to-parent: device". */
  void draw(const std::vector<LayoutLink>& links, int vertex, const std::string& indent, std::string& out) const
  {
    out += indent + (vertex == 0 ? "" : links[edge[vertex]].name + ": ") + label[vertex] + "\n";
    for (int pass = 0; pass < 2; ++pass) // sockets last
      for (std::size_t c = 0; c < parent.size(); ++c)
        if (parent[c] == vertex && (label[c].rfind("socket", 0) == 0) == (pass == 1))
          draw(links, static_cast<int>(c), indent + "  ", out);
  }

  /** Links from vertex a to vertex b: up from a to their lowest common ancestor, then down to b. */
  std::vector<LayoutHop> path(int a, int b) const
  {
    std::vector<LayoutHop> up, down;
    while (a != b) {
      if (depth[a] >= depth[b]) {
        up.push_back({edge[a], true});
        a = parent[a];
      } else {
        down.push_back({edge[b], false});
        b = parent[b];
      }
    }
    up.insert(up.end(), down.rbegin(), down.rend());
    return up;
  }
};

} // namespace

std::string node_name(int node)
{
  return "node" + std::to_string(node);
}
std::string gpu_host_name(int node, int gpu)
{
  return node_name(node) + "-gpu" + std::to_string(gpu);
}
std::string cpu_host_name(int node)
{
  return node_name(node) + "-cpu";
}
std::string gateway_name(int node)
{
  return node_name(node) + "-gw";
}

const char* to_string(Intra intra)
{
  return name_of(kIntraNames, intra);
}
const char* to_string(Inter inter)
{
  return name_of(kInterNames, inter);
}
const char* to_string(Topology topology)
{
  return name_of(kTopologyNames, topology);
}

std::string intra_names(const char* separator)
{
  return names_of(kIntraNames, separator);
}
std::string inter_names(const char* separator)
{
  return names_of(kInterNames, separator);
}
std::string topology_names(const char* separator)
{
  return names_of(kTopologyNames, separator);
}

const LinkClass& nic_link(Inter inter)
{
  return link_by_name(to_string(inter));
}

void validate(const ClusterSpec& s, SpecNaming naming)
{
  const Checker c(naming);
  check_sizes(s, c);
  check_nics(s, c);
  check_hardware(s, c);
  check_topology(s, c);
  check_link_overrides(s, c);
}

ClusterSpec resolve_cluster_spec(ClusterSpec s, const ClusterKindNames& kinds, SpecNaming naming,
                                 const LinkOverrideNames& links)
{
  const Checker c(naming);
  check_sizes(s, c);
  if (s.gpus_per_node == 0 && !kinds.intra.empty())
    c.fail(c.key("intra") + " needs " + c.key("gpus-per-node") + " >= 1 (CPU-only nodes have no GPU-to-GPU links)");
  if (s.gpus_per_node >= 1 && kinds.intra.empty())
    c.fail(c.key("intra") + " is required with " + c.key("gpus-per-node") + " >= 1 (one of: " + names_of(kIntraNames) +
           ")");
  s.intra = s.gpus_per_node == 0 ? Intra::Pcie : c.parse("intra", kinds.intra, kIntraNames);
  s.inter = c.parse("inter", kinds.inter, kInterNames);
  check_nics(s, c);
  s.topology = c.parse("topology", kinds.topology, kTopologyNames);
  check_hardware(s, c);
  check_topology(s, c);
  parse_override(c, "inter-latency", links.inter_latency, true, s.inter_latency_s);
  parse_override(c, "inter-bandwidth", links.inter_bandwidth, false, s.inter_bandwidth_bytes_per_s);
  parse_override(c, "intra-latency", links.intra_latency, true, s.intra_latency_s);
  parse_override(c, "intra-bandwidth", links.intra_bandwidth, false, s.intra_bandwidth_bytes_per_s);
  check_link_overrides(s, c);
  return s;
}

ClusterSpec parse_cluster_string(const std::string& text)
{
  const std::vector<std::string> keys = {"nodes",          "gpus-per-node",   "gpu",
                                         "intra",          "inter",           "nics-per-node",
                                         "topology",       "nodes-per-leaf",  "oversubscription",
                                         "inter-latency",  "inter-bandwidth", "intra-latency",
                                         "intra-bandwidth"};
  const std::vector<std::string> required = {"nodes", "gpus-per-node", "inter"}; // gpu, intra: with GPUs
  std::map<std::string, std::string> values;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(field("cluster") + ": expected KEY=VALUE, got '" + item + "' (keys: " + join(keys) + ")");
    const std::string k = item.substr(0, eq);
    if (!contains(keys, k))
      throw ConfigError(field("cluster") + ": unknown key '" + k + "' (keys: " + join(keys) + ")");
    if (!values.emplace(k, item.substr(eq + 1)).second)
      throw ConfigError(field("cluster") + ": key '" + k + "' given twice");
  }
  for (const auto& k : required)
    if (!values.count(k))
      throw ConfigError(field("cluster") + ": missing key '" + k + "' (required: " + join(required) + ")");

  auto integer = [&](const std::string& k, int& out) {
    auto it = values.find(k);
    if (it == values.end())
      return;
    const std::string& v = it->second;
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    const bool digits_only = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
    if (!digits_only || *end != '\0' || errno != 0 || x > 1000000000)
      throw ConfigError(field("cluster") + ": " + k + " must be an integer (got '" + v + "')");
    out = static_cast<int>(x);
  };
  ClusterSpec s;
  integer("nodes", s.nodes);
  integer("gpus-per-node", s.gpus_per_node);
  integer("nics-per-node", s.nics_per_node);
  integer("nodes-per-leaf", s.nodes_per_leaf);
  s.gpu = values["gpu"];
  ClusterKindNames kinds;
  LinkOverrideNames links;
  kinds.intra = values["intra"];
  kinds.inter = values["inter"];
  if (values.count("topology"))
    kinds.topology = values["topology"];
  for (const char* k : {"inter-latency", "inter-bandwidth", "intra-latency", "intra-bandwidth"})
    if (auto it = values.find(k); it != values.end() && it->second.empty())
      throw ConfigError(field("cluster") + ": " + k + " needs a value (got '" + k + "=')");
  links.inter_latency = values["inter-latency"];
  links.inter_bandwidth = values["inter-bandwidth"];
  links.intra_latency = values["intra-latency"];
  links.intra_bandwidth = values["intra-bandwidth"];
  if (auto it = values.find("oversubscription"); it != values.end()) {
    char* end = nullptr;
    s.oversubscription = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(it->second[0])))
      throw ConfigError(field("cluster") + ": oversubscription must be a number (got '" + it->second + "')");
  }
  return resolve_cluster_spec(s, kinds, SpecNaming::ClusterKeys, links);
}

std::string to_cluster_string(const ClusterSpec& s)
{
  std::string out = "nodes=" + std::to_string(s.nodes) + ",gpus-per-node=" + std::to_string(s.gpus_per_node) +
                    (s.gpus_per_node == 0 ? "" : ",gpu=" + s.gpu + ",intra=" + to_string(s.intra)) +
                    ",inter=" + to_string(s.inter) + ",nics-per-node=" + std::to_string(s.nics_per_node) +
                    ",topology=" + to_string(s.topology);
  if (s.topology == Topology::FatTree)
    out += ",nodes-per-leaf=" + std::to_string(s.nodes_per_leaf) +
           ",oversubscription=" + format_double(s.oversubscription);
  // Overrides in us and GB/s, 12 significant digits (as the XML writer prints numbers).
  if (s.inter_latency_s)
    out += ",inter-latency=" + digits12(*s.inter_latency_s * 1e6) + "us";
  if (s.inter_bandwidth_bytes_per_s)
    out += ",inter-bandwidth=" + digits12(*s.inter_bandwidth_bytes_per_s / 1e9) + "GBps";
  if (s.intra_latency_s)
    out += ",intra-latency=" + digits12(*s.intra_latency_s * 1e6) + "us";
  if (s.intra_bandwidth_bytes_per_s)
    out += ",intra-bandwidth=" + digits12(*s.intra_bandwidth_bytes_per_s / 1e9) + "GBps";
  return out;
}

double parse_bandwidth(const std::string& text, const std::string& what)
{
  static const std::vector<std::pair<std::string, double>> units = {
      {"Bps", 1},        {"kBps", 1e3},        {"KBps", 1e3},           {"MBps", 1e6},    {"GBps", 1e9},
      {"KiBps", 1024},   {"MiBps", 1048576.0}, {"GiBps", 1073741824.0}, {"bps", 1.0 / 8}, {"kbps", 1e3 / 8},
      {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8},    {"Gbps", 1e9 / 8}};
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  const std::string unit(end);
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789.eE+-") >= std::size_t(end - begin);
  if (end == begin || !decimal || !std::isfinite(value) || !(value > 0) ||
      std::isspace(static_cast<unsigned char>(text[0])))
    throw ConfigError(what + ": expected a bandwidth > 0 such as 1.25GBps or 10Gbps (got '" + text + "')");
  for (const auto& [name, factor] : units)
    if (unit == name)
      return value * factor;
  if (unit.empty())
    throw ConfigError(what +
                      ": a bandwidth needs a unit: Bps, kBps, MBps, GBps, KiBps, MiBps, GiBps, bps, kbps, "
                      "Mbps, Gbps (got '" +
                      text + "')");
  throw ConfigError(what + ": unknown bandwidth unit '" + unit + "' in '" + text +
                    "' (use Bps, kBps, MBps, GBps, KiBps, MiBps, GiBps, bps, kbps, Mbps, Gbps)");
}

LinkClass effective_nic_link(const ClusterSpec& s)
{
  LinkClass c = nic_link(s.inter);
  if (s.inter_latency_s) {
    c.latency_s = *s.inter_latency_s / 2;
    c.route_latency_s = *s.inter_latency_s + kNcclPcieHopLatency_s;
    c.latency_source = "given: inter-latency " + digits12(*s.inter_latency_s * 1e6) +
                       " us NIC to NIC (catalogue: " + digits12(2 * nic_link(s.inter).latency_s * 1e6) + " us)";
  }
  if (s.inter_bandwidth_bytes_per_s) {
    c.bandwidth_bytes_per_s = *s.inter_bandwidth_bytes_per_s;
    c.bandwidth_source = "given: inter-bandwidth " + digits12(*s.inter_bandwidth_bytes_per_s / 1e9) +
                         " GB/s (catalogue: " + digits12(nic_link(s.inter).bandwidth_bytes_per_s / 1e9) + " GB/s)";
  }
  return c;
}

LinkClass effective_intra_link(const ClusterSpec& s, const LinkClass& base)
{
  LinkClass c = base;
  if (s.intra_latency_s) {
    c.route_latency_s = *s.intra_latency_s;
    c.latency_s = *s.intra_latency_s / 2;
    c.latency_source = "given: intra-latency " + digits12(*s.intra_latency_s * 1e6) + " us per GPU-to-GPU hop";
  }
  if (s.intra_bandwidth_bytes_per_s) {
    c.bandwidth_bytes_per_s = *s.intra_bandwidth_bytes_per_s;
    c.bandwidth_source = "given: intra-bandwidth " + digits12(*s.intra_bandwidth_bytes_per_s / 1e9) +
                         " GB/s per link (catalogue: " + digits12(base.bandwidth_bytes_per_s / 1e9) + " GB/s)";
  }
  return c;
}

double leaf_uplink_bandwidth(const ClusterSpec& s)
{
  return s.nodes_per_leaf * s.nics_per_node * effective_nic_link(s).bandwidth_bytes_per_s / s.oversubscription;
}

namespace {

/** The GPU of a spec; CPU-only nodes get a placeholder with one PCIe 3.0 fabric and no GPU (never printed). */
const GpuSpec& layout_gpu(const ClusterSpec& s)
{
  static const GpuSpec none = [] {
    GpuSpec g;
    g.pcie_generation = 3;
    g.gpus_per_board = 1;
    return g;
  }();
  return s.gpus_per_node == 0 ? none : gpu_by_name(s.gpu);
}

/** Builds one NodeLayout in steps: the PCIe tree (one of three shapes), the NICs, the NVLink or NVSwitch links,
 *  the routes, the diagram and the description. */
class LayoutBuilder {
public:
  explicit LayoutBuilder(const ClusterSpec& s)
      : s_(s)
      , gpu_(layout_gpu(s))
      , pcie_(s.intra == Intra::Pcie ? effective_intra_link(s, pcie_x16_link(gpu_.pcie_generation))
                                     : pcie_x16_link(gpu_.pcie_generation))
      , nic_(effective_nic_link(s))
      , g_(s.gpus_per_node)
      , gpu_vertex_(g_)
      , attach_of_gpu_(g_, 0)
      , nvlink_(g_, std::vector<int>(g_, -1))
      , nvswitch_(g_, -1)
  {
    layout_.gpus = g_;
  }

  NodeLayout build()
  {
    if (s_.intra == Intra::Pcie && gpu_.gpus_per_board > 1)
      add_board_pcie();
    else if (s_.intra == Intra::Pcie)
      add_flat_pcie();
    else
      add_switched_pcie();
    add_nics();
    if (s_.intra == Intra::NvLink)
      add_dgx1_nvlink();
    else if (s_.intra == Intra::NvSwitch)
      add_nvswitch();
    else
      gpu_text_ = g_ == 0 ? "" : "GPUs talk over PCIe.";
    add_routes();
    draw();
    describe();
    return std::move(layout_);
  }

private:
  int add_link(const std::string& name, const std::string& cls, double bw, double lat)
  {
    layout_.links.push_back({name, cls, bw, lat});
    return static_cast<int>(layout_.links.size()) - 1;
  }
  int add_pcie(const std::string& name, double lat)
  {
    return add_link(name, pcie_.name, pcie_.bandwidth_bytes_per_s, lat);
  }
  /** Socket 0, and socket 1 behind a QPI link when `two`. */
  std::vector<int> add_sockets(bool two)
  {
    std::vector<int> sockets = {0};
    if (two)
      sockets.push_back(tree_.add(0, add_link("qpi", "qpi", kQpiBandwidth_bytes_per_s, 0), "socket 1"));
    return sockets;
  }
  /** A GPU's own x16 link: the only PCIe piece carrying latency (the pieces above it constrain bandwidth only,
   *  see link_catalog.hpp). */
  int add_gpu(int parent, int i, const std::string& label)
  {
    return gpu_vertex_[i] = tree_.add(parent, add_pcie("gpu" + std::to_string(i) + "-pcie", pcie_.latency_s), label);
  }

  /** Multi-GPU boards (K80): GPUs behind the board's PCIe switch sharing its x16 link, boards behind one PCIe
   *  switch per socket. */
  void add_board_pcie()
  {
    const int per_board = gpu_.gpus_per_board;
    const int boards = g_ / per_board;
    const bool two = boards >= 2 && boards % 2 == 0;
    const auto sockets = add_sockets(two);
    const int boards_per_socket = boards / static_cast<int>(sockets.size());
    std::vector<int> sw;
    for (std::size_t k = 0; k < sockets.size(); ++k)
      sw.push_back(tree_.add(sockets[k], add_pcie("sw" + std::to_string(k) + "-pcie", 0), "PCIe switch"));
    std::vector<int> board(boards);
    for (int b = 0; b < boards; ++b)
      board[b] = tree_.add(sw[b / boards_per_socket], add_pcie("board" + std::to_string(b) + "-pcie", 0),
                           gpu_.name + " board (PCIe switch)");
    for (int i = 0; i < g_; ++i) {
      add_gpu(board[i / per_board], i, "gpu" + std::to_string(i) + " (" + gpu_.chip + ")");
      attach_of_gpu_[i] = sockets[(i / per_board) / boards_per_socket];
    }
    pcie_text_ = "Tesla " + gpu_.name + " boards: " + count_word(per_board) + " " + gpu_.chip +
                 " GPUs per board behind the board's PCIe switch, each " + gpu_.chip +
                 " on its own x16 link to it (gpuI-pcie, " + microseconds(pcie_.latency_s) + "), the " +
                 (per_board == 2 ? std::string("pair") : count_word(per_board)) +
                 " sharing the board's x16 link (boardB-pcie); boards behind one PCIe switch per CPU socket (swS-pcie, "
                 "its x16 uplink to the socket)" +
                 std::string(two ? "; the two sockets joined by one QPI link (qpi)" : "") +
                 ". NICs hang off the CPU socket of the first GPU they serve; the CPU host sits at socket 0.";
  }

  /** One x16 link per GPU to the node's fabric (socket 0); switches and sockets not modelled. */
  void add_flat_pcie()
  {
    for (int i = 0; i < g_; ++i)
      add_gpu(0, i, "gpu" + std::to_string(i));
    if (g_ == 0) {
      pcie_text_ = "CPU-only node: no GPU; the CPU host is the node's rank host and reaches the NIC directly.";
      return;
    }
    pcie_text_ = "every GPU has its own " + pcie_.name + " link (gpuI-pcie, " + microseconds(pcie_.latency_s) +
                 ") to the node's PCIe fabric (switch and socket limits not modelled); NICs and the CPU host sit on "
                 "that fabric.";
  }

  /** As in a DGX-1: two GPUs per PCIe switch, two switches per socket. */
  void add_switched_pcie()
  {
    const int switches = (g_ + 1) / 2;
    const bool two = switches >= 2 && switches % 2 == 0;
    const auto sockets = add_sockets(two);
    std::vector<int> sw(switches);
    for (int k = 0; k < switches; ++k)
      sw[k] = tree_.add(sockets[k / (switches / static_cast<int>(sockets.size()))],
                        add_pcie("sw" + std::to_string(k) + "-pcie", 0), "PCIe switch");
    for (int i = 0; i < g_; ++i) {
      add_gpu(sw[i / 2], i, "gpu" + std::to_string(i));
      attach_of_gpu_[i] = sw[i / 2];
    }
    pcie_text_ = "PCIe as in a DGX-1: two GPUs per PCIe switch, each on its own " + pcie_.name + " link (gpuI-pcie, " +
                 microseconds(pcie_.latency_s) +
                 "), the switch's uplink of the same class to its CPU socket (swS-pcie)" +
                 std::string(two ? ", the two sockets joined by one QPI link (qpi)" : "") +
                 ". NICs hang off the PCIe switch of the first GPU they serve; the CPU host sits at socket 0.";
  }

  /** GPU i uses NIC i / (G / K); a NIC sits where the first GPU it serves attaches. */
  void add_nics()
  {
    per_nic_ = g_ / s_.nics_per_node;
    nic_link_.resize(s_.nics_per_node);
    nic_vertex_.resize(s_.nics_per_node);
    for (int k = 0; k < s_.nics_per_node; ++k) {
      nic_link_[k] = add_link("nic" + std::to_string(k), nic_.name, nic_.bandwidth_bytes_per_s, nic_.latency_s);
      nic_vertex_[k] = g_ == 0 ? 0 : attach_of_gpu_[k * per_nic_];
      tree_.label[nic_vertex_[k]] += ", nic" + std::to_string(k);
    }
  }

  /** The DGX-1 hybrid cube-mesh: one link per joined pair, of the pair's summed bandwidth. */
  void add_dgx1_nvlink()
  {
    const LinkClass nv = effective_intra_link(s_, nvlink_link(gpu_.nvlink_generation));
    for (int a = 0; a < g_; ++a)
      for (int b = a + 1; b < g_; ++b)
        if (const int n = dgx1_links(gpu_, a, b); n > 0)
          nvlink_[a][b] = nvlink_[b][a] = add_link("nvlink" + std::to_string(a) + "-" + std::to_string(b), nv.name,
                                                   n * nv.bandwidth_bytes_per_s, nv.route_latency_s);
    const bool doubled = gpu_.nvlink_links >= 6;
    gpu_text_ = "GPUs joined by NVLink in the DGX-1 hybrid cube-mesh (" + gpu_.name.substr(0, gpu_.name.find('-')) +
                ": " + std::to_string(gpu_.nvlink_links) + " NVLink " + std::to_string(gpu_.nvlink_generation) +
                ".0 links per GPU, pairs joined by " + (doubled ? "one or two" : "one") +
                "); a pair's links are one split-duplex link nvlinkA-B of their summed bandwidth carrying the whole "
                "NVLink hop latency (" +
                microseconds(nv.route_latency_s) +
                "); GPUs not directly joined route through the partner of the destination (GPU d ^ 4), two NVLink "
                "hops.";
  }

  /** Every GPU's NVLinks as one link to a non-blocking switch. */
  void add_nvswitch()
  {
    const LinkClass nv = effective_intra_link(s_, nvlink_link(gpu_.nvlink_generation));
    const int links = gpu_.nvlink_links;
    for (int i = 0; i < g_; ++i)
      nvswitch_[i] =
          add_link("gpu" + std::to_string(i) + "-nvswitch", nv.name, links * nv.bandwidth_bytes_per_s, nv.latency_s);
    gpu_text_ = "GPUs joined by NVSwitch: each GPU's " + std::to_string(links) + " " + nv.name +
                " links are one split-duplex link gpuI-nvswitch of their summed bandwidth (" +
                microseconds(nv.latency_s) + ") to a non-blocking switch.";
  }

  std::vector<LayoutHop> gpu_to_gpu(int a, int b) const
  {
    if (s_.intra == Intra::NvSwitch)
      return {{nvswitch_[a], true}, {nvswitch_[b], false}};
    if (s_.intra == Intra::NvLink) {
      if (nvlink_[a][b] >= 0)
        return {{nvlink_[a][b], a < b}};
      const int via = b ^ 4; // the destination's partner in the source's quad: joined to both
      return {{nvlink_[a][via], a < via}, {nvlink_[via][b], via < b}};
    }
    return tree_.path(gpu_vertex_[a], gpu_vertex_[b]);
  }

  std::vector<LayoutHop> to_network(int vertex, int k) const
  {
    auto hops = tree_.path(vertex, nic_vertex_[k]);
    hops.push_back({nic_link_[k], true});
    return hops;
  }

  void add_routes()
  {
    const int n = layout_.endpoints();
    layout_.routes.assign(n, std::vector<std::vector<LayoutHop>>(n));
    for (int a = 0; a < g_; ++a) {
      for (int b = a + 1; b < g_; ++b)
        layout_.routes[a][b] = gpu_to_gpu(a, b);
      layout_.routes[a][layout_.cpu()] = tree_.path(gpu_vertex_[a], 0);
      layout_.routes[a][layout_.gateway()] = to_network(gpu_vertex_[a], a / per_nic_);
    }
    layout_.routes[layout_.cpu()][layout_.gateway()] = to_network(0, 0);
  }

  void draw()
  {
    layout_.diagram = "PCIe tree (each line: its link to the line above, then the device):\n";
    tree_.draw(layout_.links, 0, "  ", layout_.diagram);
    if (s_.intra == Intra::NvLink) {
      layout_.diagram += "NVLink (links per pair):\n";
      for (int a = 0; a < g_; ++a) {
        std::string line = "  gpu" + std::to_string(a) + ":";
        for (int b = 0; b < g_; ++b)
          if (nvlink_[a][b] >= 0)
            line += " gpu" + std::to_string(b) + " x" + std::to_string(dgx1_links(gpu_, a, b));
        layout_.diagram += line + "\n";
      }
    } else if (s_.intra == Intra::NvSwitch) {
      layout_.diagram += "NVSwitch: gpuI-nvswitch from every GPU to one non-blocking switch\n";
    }
  }

  void describe()
  {
    layout_.description = (gpu_text_.empty() ? "" : gpu_text_ + " ") + pcie_text_ + " " +
                          std::to_string(s_.nics_per_node) + " " + nic_.name + " NIC" +
                          (s_.nics_per_node > 1 ? "s" : "") + " per node (nicK, " + microseconds(nic_.latency_s) + ")" +
                          (g_ == 0 ? std::string() : ", GPU i using NIC i / " + std::to_string(per_nic_)) +
                          ". The CPU host's own memory and root-complex bandwidth are not modelled.";
  }

  const ClusterSpec& s_;
  const GpuSpec& gpu_;
  const LinkClass pcie_;
  const LinkClass nic_;
  const int g_;
  NodeLayout layout_;
  PcieTree tree_;
  std::vector<int> gpu_vertex_;
  std::vector<int> attach_of_gpu_; ///< where a NIC serving this GPU first would sit
  std::vector<int> nic_link_, nic_vertex_;
  int per_nic_ = 1;
  std::vector<std::vector<int>> nvlink_; ///< link index of a joined pair, -1 otherwise
  std::vector<int> nvswitch_;            ///< link index of each GPU's NVSwitch port
  std::string pcie_text_, gpu_text_;
};

} // namespace

NodeLayout build_node_layout(const ClusterSpec& s)
{
  return LayoutBuilder(s).build();
}

} // namespace ddlsim::platform
