// Generated clusters: validation of the description, its inline form, and the layout of one server.
#include "platform/cluster_spec.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

namespace ddlsim::platform {
namespace {

const std::vector<std::string> kIntra = {"pcie", "nvlink", "nvswitch"};
const std::vector<std::string> kInter = {"10gbe", "25gbe", "ib56", "ib100", "ib200"};
const std::vector<std::string> kTopologies = {"star", "fat-tree"};

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items)
    out += (out.empty() ? "" : sep) + i;
  return out;
}

bool contains(const std::vector<std::string>& items, const std::string& x) {
  return std::find(items.begin(), items.end(), x) != items.end();
}

/** NVLink 2.0 links between the GPUs of a DGX-1 (V100), upper triangle: count[a][b] for a < b. */
int dgx1_v100_links(int a, int b) {
  static const int count[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {0, 0, 2, 1, 0, 2, 0, 0}, {0, 0, 0, 2, 0, 0, 1, 0},
                                  {0, 0, 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 1, 1, 2}, {0, 0, 0, 0, 0, 0, 2, 1},
                                  {0, 0, 0, 0, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 0, 0}};
  return a < b ? count[a][b] : count[b][a];
}

/** A PCIe tree: vertex 0 is socket 0 (where the CPU host sits); every other vertex has a parent and the link to
 *  it (used "up" when going towards socket 0). */
struct PcieTree {
  std::vector<int> parent = {-1};
  std::vector<int> edge = {-1};
  std::vector<int> depth = {0};
  std::vector<std::string> label = {"socket 0 (CPU host)"};

  int add(int parent_vertex, int link, const std::string& what) {
    parent.push_back(parent_vertex);
    edge.push_back(link);
    depth.push_back(depth[parent_vertex] + 1);
    label.push_back(what);
    return static_cast<int>(parent.size()) - 1;
  }

  /** One line per vertex, children indented under their parent: "link-to-parent: device". */
  void draw(const std::vector<LayoutLink>& links, int vertex, const std::string& indent, std::string& out) const {
    out += indent + (vertex == 0 ? "" : links[edge[vertex]].name + ": ") + label[vertex] + "\n";
    for (int pass = 0; pass < 2; ++pass) // sockets last
      for (std::size_t c = 0; c < parent.size(); ++c)
        if (parent[c] == vertex && (label[c].rfind("socket", 0) == 0) == (pass == 1))
          draw(links, static_cast<int>(c), indent + "  ", out);
  }

  /** Links from vertex a to vertex b: up from a to their lowest common ancestor, then down to b. */
  std::vector<LayoutHop> path(int a, int b) const {
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

std::string node_name(int node) {
  return "node" + std::to_string(node);
}
std::string gpu_host_name(int node, int gpu) {
  return node_name(node) + "-gpu" + std::to_string(gpu);
}
std::string cpu_host_name(int node) {
  return node_name(node) + "-cpu";
}
std::string gateway_name(int node) {
  return node_name(node) + "-gw";
}

void validate(const ClusterSpec& s, SpecNaming naming) {
  const bool opt = naming == SpecNaming::Options;
  const std::string head = opt ? "" : "--cluster: ";
  auto key = [&](const std::string& k) { return (opt ? "--" : "") + k; };
  auto fail = [&](const std::string& msg) { throw ConfigError(head + msg); };
  auto at_least_one = [&](const std::string& k, int v) {
    if (v < 1)
      fail(key(k) + " must be >= 1 (got " + std::to_string(v) + ")");
  };
  auto one_of = [&](const std::string& k, const std::string& v, const std::vector<std::string>& allowed) {
    if (!contains(allowed, v))
      fail(key(k) + " must be one of: " + join(allowed) + " (got '" + v + "')");
  };

  at_least_one("nodes", s.nodes);
  at_least_one("gpus-per-node", s.gpus_per_node);
  if (find_gpu(s.gpu) == nullptr)
    fail(key("gpu") + ": unknown GPU '" + s.gpu + "' (known: " + known_gpus() + ")");
  one_of("intra", s.intra, kIntra);
  one_of("inter", s.inter, kInter);
  at_least_one("nics-per-node", s.nics_per_node);
  if (s.gpus_per_node % s.nics_per_node != 0)
    fail(key("nics-per-node") + " " + std::to_string(s.nics_per_node) + " does not divide " + key("gpus-per-node") +
         " " + std::to_string(s.gpus_per_node) + " (every NIC serves the same number of GPUs)");
  one_of("topology", s.topology, kTopologies);

  if (s.intra == "pcie" && s.gpu == "K80" && s.gpus_per_node % 2 != 0)
    fail(key("gpu") + " K80 needs an even " + key("gpus-per-node") + " (two GK210 GPUs per K80 board; got " +
         std::to_string(s.gpus_per_node) + ")");
  if (s.intra == "nvlink") {
    if (s.gpu != "P100-SXM2" && s.gpu != "V100-SXM2")
      fail(key("intra") + " nvlink (the DGX-1 hybrid cube-mesh) needs " + key("gpu") +
           " P100-SXM2 or V100-SXM2 (got '" + s.gpu + "')");
    if (s.gpus_per_node != 8)
      fail(key("intra") + " nvlink (the DGX-1 hybrid cube-mesh) needs " + key("gpus-per-node") + " 8 (got " +
           std::to_string(s.gpus_per_node) + ")");
  }
  if (s.intra == "nvswitch" && s.gpu != "V100-SXM2" && s.gpu != "A100-SXM4-40GB")
    fail(key("intra") + " nvswitch needs " + key("gpu") + " V100-SXM2 or A100-SXM4-40GB (got '" + s.gpu + "')");

  if (s.topology == "star") {
    if (s.nodes_per_leaf != 0)
      fail(key("nodes-per-leaf") + " needs " + key("topology") + " fat-tree");
    if (s.oversubscription != 1)
      fail(key("oversubscription") + " needs " + key("topology") + " fat-tree");
  } else {
    if (s.nodes_per_leaf < 1)
      fail(key("topology") + " fat-tree needs " + key("nodes-per-leaf") + " >= 1 (got " +
           std::to_string(s.nodes_per_leaf) + ")");
    if (s.nodes % s.nodes_per_leaf != 0)
      fail(key("nodes-per-leaf") + " " + std::to_string(s.nodes_per_leaf) + " does not divide " + key("nodes") + " " +
           std::to_string(s.nodes));
    if (!(s.oversubscription >= 1) || !std::isfinite(s.oversubscription))
      fail(key("oversubscription") + " must be >= 1 (got " + format_double(s.oversubscription) + ")");
  }
}

ClusterSpec parse_cluster_string(const std::string& text) {
  const std::vector<std::string> keys = {"nodes",    "gpus-per-node",  "gpu",
                                         "intra",    "inter",          "nics-per-node",
                                         "topology", "nodes-per-leaf", "oversubscription"};
  const std::vector<std::string> required = {"nodes", "gpus-per-node", "gpu", "intra", "inter"};
  std::map<std::string, std::string> values;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--cluster: expected KEY=VALUE, got '" + item + "' (keys: " + join(keys) + ")");
    const std::string k = item.substr(0, eq);
    if (!contains(keys, k))
      throw ConfigError("--cluster: unknown key '" + k + "' (keys: " + join(keys) + ")");
    if (!values.emplace(k, item.substr(eq + 1)).second)
      throw ConfigError("--cluster: key '" + k + "' given twice");
  }
  for (const auto& k : required)
    if (!values.count(k))
      throw ConfigError("--cluster: missing key '" + k + "' (required: " + join(required) + ")");

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
      throw ConfigError("--cluster: " + k + " must be an integer (got '" + v + "')");
    out = static_cast<int>(x);
  };
  ClusterSpec s;
  integer("nodes", s.nodes);
  integer("gpus-per-node", s.gpus_per_node);
  integer("nics-per-node", s.nics_per_node);
  integer("nodes-per-leaf", s.nodes_per_leaf);
  s.gpu = values["gpu"];
  s.intra = values["intra"];
  s.inter = values["inter"];
  if (values.count("topology"))
    s.topology = values["topology"];
  if (auto it = values.find("oversubscription"); it != values.end()) {
    char* end = nullptr;
    s.oversubscription = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(it->second[0])))
      throw ConfigError("--cluster: oversubscription must be a number (got '" + it->second + "')");
  }
  validate(s, SpecNaming::ClusterKeys);
  return s;
}

std::string to_cluster_string(const ClusterSpec& s) {
  std::string out = "nodes=" + std::to_string(s.nodes) + ",gpus-per-node=" + std::to_string(s.gpus_per_node) +
                    ",gpu=" + s.gpu + ",intra=" + s.intra + ",inter=" + s.inter +
                    ",nics-per-node=" + std::to_string(s.nics_per_node) + ",topology=" + s.topology;
  if (s.topology == "fat-tree")
    out += ",nodes-per-leaf=" + std::to_string(s.nodes_per_leaf) +
           ",oversubscription=" + format_double(s.oversubscription);
  return out;
}

double leaf_uplink_bandwidth(const ClusterSpec& s) {
  return s.nodes_per_leaf * s.nics_per_node * link_by_name(s.inter).bandwidth_bytes_per_s / s.oversubscription;
}

NodeLayout build_node_layout(const ClusterSpec& s) {
  const int g = s.gpus_per_node;
  // A100 is a PCIe 4.0 device; the older GPUs are PCIe 3.0.
  const LinkClass& pcie = link_by_name(s.gpu == "A100-SXM4-40GB" ? "pcie4-x16" : "pcie3-x16");
  const LinkClass& nic = link_by_name(s.inter);
  NodeLayout layout;
  layout.gpus = g;
  auto add_link = [&](const std::string& name, const std::string& cls, double bw, double lat) {
    layout.links.push_back({name, cls, bw, lat});
    return static_cast<int>(layout.links.size()) - 1;
  };
  auto add_pcie = [&](const std::string& name, double lat) {
    return add_link(name, pcie.name, pcie.bandwidth_bytes_per_s, lat);
  };

  // --- PCIe tree: every GPU has its own x16 link carrying the PCIe hop latency; the pieces above it (board and
  // switch uplinks, the inter-socket link) add bandwidth constraints but no latency (see link_catalog.hpp).
  PcieTree tree;
  std::vector<int> gpu_vertex(g);
  std::vector<int> socket_of_gpu(g, 0);
  std::vector<int> attach_of_gpu(g, 0); // where a NIC serving this GPU first would sit
  std::string pcie_text;
  auto add_sockets = [&](bool two) {
    std::vector<int> sockets = {0};
    if (two)
      sockets.push_back(tree.add(0, add_link("qpi", "qpi", kQpiBandwidth_bytes_per_s, 0), "socket 1"));
    return sockets;
  };
  if (s.intra == "pcie" && s.gpu == "K80") {
    const int boards = g / 2;
    const bool two = boards >= 2 && boards % 2 == 0;
    const auto sockets = add_sockets(two);
    std::vector<int> sw;
    for (std::size_t k = 0; k < sockets.size(); ++k)
      sw.push_back(tree.add(sockets[k], add_pcie("sw" + std::to_string(k) + "-pcie", 0), "PCIe switch"));
    std::vector<int> board(boards);
    for (int b = 0; b < boards; ++b) {
      const int k = b / (boards / static_cast<int>(sockets.size()));
      board[b] = tree.add(sw[k], add_pcie("board" + std::to_string(b) + "-pcie", 0), "K80 board (PCIe switch)");
    }
    for (int i = 0; i < g; ++i) {
      gpu_vertex[i] = tree.add(board[i / 2], add_pcie("gpu" + std::to_string(i) + "-pcie", pcie.latency_s),
                               "gpu" + std::to_string(i) + " (GK210)");
      socket_of_gpu[i] = (i / 2) / (boards / static_cast<int>(sockets.size()));
      attach_of_gpu[i] = sockets[socket_of_gpu[i]];
    }
    pcie_text = "Tesla K80 boards: two GK210 GPUs per board behind the board's PCIe switch, each GK210 on its own x16 "
                "link to it (gpuI-pcie, 2.85 us), the pair sharing the board's x16 link (boardB-pcie); boards behind "
                "one PCIe switch per CPU socket (swS-pcie, its x16 uplink to the socket)" +
                std::string(two ? "; the two sockets joined by one QPI link (qpi)" : "") +
                ". NICs hang off the CPU socket of the first GPU they serve; the CPU host sits at socket 0.";
  } else if (s.intra == "pcie") {
    for (int i = 0; i < g; ++i)
      gpu_vertex[i] =
          tree.add(0, add_pcie("gpu" + std::to_string(i) + "-pcie", pcie.latency_s), "gpu" + std::to_string(i));
    pcie_text = "every GPU has its own " + pcie.name +
                " link (gpuI-pcie, 2.85 us) to the node's PCIe fabric (switch "
                "and socket limits not modelled); NICs and the CPU host sit on that fabric.";
  } else {
    const int switches = (g + 1) / 2;
    const bool two = switches >= 2 && switches % 2 == 0;
    const auto sockets = add_sockets(two);
    std::vector<int> sw(switches);
    for (int k = 0; k < switches; ++k)
      sw[k] = tree.add(sockets[k / (switches / static_cast<int>(sockets.size()))],
                       add_pcie("sw" + std::to_string(k) + "-pcie", 0), "PCIe switch");
    for (int i = 0; i < g; ++i) {
      gpu_vertex[i] =
          tree.add(sw[i / 2], add_pcie("gpu" + std::to_string(i) + "-pcie", pcie.latency_s), "gpu" + std::to_string(i));
      attach_of_gpu[i] = sw[i / 2];
    }
    pcie_text = "PCIe as in a DGX-1: two GPUs per PCIe switch, each on its own " + pcie.name +
                " link (gpuI-pcie, 2.85 us), the switch's uplink of the same class to its CPU socket (swS-pcie)" +
                std::string(two ? ", the two sockets joined by one QPI link (qpi)" : "") +
                ". NICs hang off the PCIe switch of the first GPU they serve; the CPU host sits at socket 0.";
  }

  // --- NICs: GPU i uses NIC i / (G / K).
  const int per_nic = g / s.nics_per_node;
  std::vector<int> nic_link(s.nics_per_node), nic_vertex(s.nics_per_node);
  for (int k = 0; k < s.nics_per_node; ++k) {
    nic_link[k] = add_link("nic" + std::to_string(k), nic.name, nic.bandwidth_bytes_per_s, nic.latency_s);
    nic_vertex[k] = attach_of_gpu[k * per_nic];
    tree.label[nic_vertex[k]] += ", nic" + std::to_string(k);
  }

  // --- GPU-to-GPU links other than PCIe.
  std::vector<std::vector<int>> nvlink(g, std::vector<int>(g, -1));
  std::vector<int> nvswitch(g, -1);
  std::string gpu_text;
  if (s.intra == "nvlink") {
    const LinkClass& nv = link_by_name(s.gpu == "V100-SXM2" ? "nvlink2" : "nvlink1");
    for (int a = 0; a < g; ++a)
      for (int b = a + 1; b < g; ++b) {
        const int n = s.gpu == "V100-SXM2" ? dgx1_v100_links(a, b) : (dgx1_v100_links(a, b) > 0 ? 1 : 0);
        if (n > 0)
          nvlink[a][b] = nvlink[b][a] = add_link("nvlink" + std::to_string(a) + "-" + std::to_string(b), nv.name,
                                                 n * nv.bandwidth_bytes_per_s, nv.route_latency_s);
      }
    gpu_text = "GPUs joined by NVLink in the DGX-1 hybrid cube-mesh (" +
               std::string(s.gpu == "V100-SXM2" ? "V100: 6 NVLink 2.0 links per GPU, pairs joined by one or two"
                                                : "P100: 4 NVLink 1.0 links per GPU, pairs joined by one") +
               "); a pair's links are one split-duplex link nvlinkA-B of their summed bandwidth carrying the whole "
               "NVLink hop latency (3.4 us); GPUs not directly joined route through the partner of the destination "
               "(GPU d ^ 4), two NVLink hops.";
  } else if (s.intra == "nvswitch") {
    const bool v100 = s.gpu == "V100-SXM2";
    const LinkClass& nv = link_by_name(v100 ? "nvlink2" : "nvlink3");
    const int links = v100 ? 6 : 12;
    for (int i = 0; i < g; ++i)
      nvswitch[i] =
          add_link("gpu" + std::to_string(i) + "-nvswitch", nv.name, links * nv.bandwidth_bytes_per_s, nv.latency_s);
    gpu_text = "GPUs joined by NVSwitch: each GPU's " + std::to_string(links) + " " + nv.name +
               " links are one split-duplex link gpuI-nvswitch of their summed bandwidth (1.7 us) to a non-blocking "
               "switch.";
  } else {
    gpu_text = "GPUs talk over PCIe.";
  }

  // --- Routes.
  const int n = layout.endpoints();
  layout.routes.assign(n, std::vector<std::vector<LayoutHop>>(n));
  auto gpu_to_gpu = [&](int a, int b) -> std::vector<LayoutHop> {
    if (s.intra == "nvswitch")
      return {{nvswitch[a], true}, {nvswitch[b], false}};
    if (s.intra == "nvlink") {
      if (nvlink[a][b] >= 0)
        return {{nvlink[a][b], a < b}};
      const int via = b ^ 4; // the destination's partner in the source's quad: joined to both
      return {{nvlink[a][via], a < via}, {nvlink[via][b], via < b}};
    }
    return tree.path(gpu_vertex[a], gpu_vertex[b]);
  };
  auto to_network = [&](int vertex, int k) {
    auto hops = tree.path(vertex, nic_vertex[k]);
    hops.push_back({nic_link[k], true});
    return hops;
  };
  for (int a = 0; a < g; ++a) {
    for (int b = a + 1; b < g; ++b)
      layout.routes[a][b] = gpu_to_gpu(a, b);
    layout.routes[a][layout.cpu()] = tree.path(gpu_vertex[a], 0);
    layout.routes[a][layout.gateway()] = to_network(gpu_vertex[a], a / per_nic);
  }
  layout.routes[layout.cpu()][layout.gateway()] = to_network(0, 0);

  layout.diagram = "PCIe tree (each line: its link to the line above, then the device):\n";
  tree.draw(layout.links, 0, "  ", layout.diagram);
  if (s.intra == "nvlink") {
    layout.diagram += "NVLink (links per pair):\n";
    for (int a = 0; a < g; ++a) {
      std::string line = "  gpu" + std::to_string(a) + ":";
      for (int b = 0; b < g; ++b)
        if (nvlink[a][b] >= 0)
          line += " gpu" + std::to_string(b) + " x" + std::to_string(s.gpu == "V100-SXM2" ? dgx1_v100_links(a, b) : 1);
      layout.diagram += line + "\n";
    }
  } else if (s.intra == "nvswitch") {
    layout.diagram += "NVSwitch: gpuI-nvswitch from every GPU to one non-blocking switch\n";
  }
  layout.description = gpu_text + " " + pcie_text + " " + std::to_string(s.nics_per_node) + " " + nic.name + " NIC" +
                       (s.nics_per_node > 1 ? "s" : "") + " per node (nicK, " + format_double(nic.latency_s * 1e6) +
                       " us), GPU i using NIC i / " + std::to_string(per_nic) +
                       ". The CPU host's own memory and root-complex bandwidth are not modelled.";
  return layout;
}

} // namespace ddlsim::platform
