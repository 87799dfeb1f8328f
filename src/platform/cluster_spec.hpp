// Description of a generated cluster (nodes x GPUs, intra- and inter-node links), its validation and node layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::platform {

struct LinkClass;

/** @brief GPU-to-GPU links inside a node. */
enum class Intra {
  Pcie,    ///< "pcie": PCIe only
  NvLink,  ///< "nvlink": the DGX-1 hybrid cube-mesh
  NvSwitch ///< "nvswitch": every GPU's NVLinks to one non-blocking switch
};

/** @brief The NIC class of every node; its name is also the link catalogue entry (link_catalog.hpp). */
enum class Inter { Eth10G, Eth25G, Ib56, Ib100, Ib200 };

/** @brief The network between nodes. */
enum class Topology {
  Star,   ///< "star": one non-blocking switch
  FatTree ///< "fat-tree": leaf switches and an aggregated spine
};

/** @brief Names as the command line and the inline form spell them ("nvlink", "ib100", "fat-tree"). */
const char* to_string(Intra intra);
const char* to_string(Inter inter);
const char* to_string(Topology topology);

/** @brief Every accepted name of a kind, in table order, joined by `separator` ("pcie | nvlink | nvswitch"). */
std::string intra_names(const char* separator);
std::string inter_names(const char* separator);
std::string topology_names(const char* separator);

/** @brief The link catalogue entry of a NIC class. */
const LinkClass& nic_link(Inter inter);

/** @brief What `ddlsim platform` and `ddlsim run --cluster` generate (plain data; validate() before use). */
struct ClusterSpec {
  int nodes = 0;                      ///< servers
  int gpus_per_node = 0;              ///< GPU hosts per server; 0: CPU-only nodes (ranks on the CPU hosts)
  std::string gpu;                    ///< GPU catalogue name (K80 = one GK210); empty with 0 GPUs per node
  Intra intra = Intra::Pcie;          ///< pcie | nvlink (DGX-1 hybrid cube-mesh) | nvswitch
  Inter inter = Inter::Ib56;          ///< 10gbe | 25gbe | ib56 | ib100 | ib200
  int nics_per_node = 1;              ///< NICs per server; GPU i uses NIC i / (gpus_per_node / nics_per_node)
  Topology topology = Topology::Star; ///< star (one non-blocking switch) | fat-tree (leaf switches + spine)
  int nodes_per_leaf = 0;             ///< fat-tree: servers per leaf switch (required for fat-tree)
  double oversubscription = 1;        ///< fat-tree: leaf down bandwidth / leaf up bandwidth (>= 1)
  /** Link overrides (unset: the link catalogue's value). inter: the network's NIC-to-NIC latency (each NIC link
   *  carries half) and each NIC's bandwidth per direction; intra: the latency of one GPU-to-GPU hop inside a node
   *  (PCIe: two GPU links of half each; DGX-1 NVLink: the pair's link; NVSwitch: two ports of half each) and the
   *  bandwidth of one link of the intra class (a GPU's PCIe x16 link, or one NVLink link). */
  std::optional<double> inter_latency_s, inter_bandwidth_bytes_per_s, intra_latency_s, intra_bandwidth_bytes_per_s;
};

/** @brief How errors name the fields: as fields the command line shows as its options ("--nodes must be >= 1
 *  (got 0)") or as keys of the inline form ("--cluster: nodes must be >= 1 (got 0)"). */
enum class SpecNaming { Options, ClusterKeys };

/** @brief Size bounds of a generated cluster (docs/limits.md): beyond them the node layout (routes grow as the
 *  square of gpus-per-node) or the simulation's memory stops being reasonable on one machine. */
inline constexpr int kMaxNodes = 16384;
inline constexpr int kMaxGpusPerNode = 64;
inline constexpr long long kMaxGpus = 131072;

/** @brief The NIC class of a spec with its inter-latency / inter-bandwidth overrides applied (latency_source and
 *  bandwidth_source then say "given: ..."). */
LinkClass effective_nic_link(const ClusterSpec& spec);

/** @brief `base` (the spec's PCIe x16 class with --intra pcie, or its NVLink class) with the intra overrides. */
LinkClass effective_intra_link(const ClusterSpec& spec, const LinkClass& base);

/** @brief "1.25GBps", "10Gbps", "500MBps", "1GiBps" -> bytes per second, > 0 and finite; a unit is required
 *  (B/s: Bps, kBps, MBps, GBps, KiBps, MiBps, GiBps; bits: bps, kbps, Mbps, Gbps). Throws ConfigError naming
 *  `what`. */
double parse_bandwidth(const std::string& text, const std::string& what);

/** @brief Checks every field and combination; throws ConfigError with a one-line message naming the field. */
void validate(const ClusterSpec& spec, SpecNaming naming);

/** @brief The kinds of a cluster as text, before parsing (what the command line and the inline form give). */
struct ClusterKindNames {
  std::string intra;             ///< pcie | nvlink | nvswitch
  std::string inter;             ///< 10gbe | 25gbe | ib56 | ib100 | ib200
  std::string topology = "star"; ///< star | fat-tree
};

/** @brief The link overrides as text ("25us", "1.25GBps"); empty: the catalogue's value. */
struct LinkOverrideNames {
  std::string inter_latency, inter_bandwidth, intra_latency, intra_bandwidth;
};

/** @brief Parses the kinds into `spec` and validates the result: the same checks as validate(), the first bad
 *  field reported in option order (nodes, gpus-per-node, gpu, intra, inter, nics-per-node, topology, then the
 *  combinations). An unknown kind throws ConfigError "--intra must be one of: pcie, nvlink, nvswitch (got 'pci')". */
ClusterSpec resolve_cluster_spec(ClusterSpec spec, const ClusterKindNames& kinds, SpecNaming naming,
                                 const LinkOverrideNames& links = {});

/** @brief Parses "nodes=4,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100" (keys as the options of
 *  `ddlsim platform` without "--"); every key is checked, unknown, repeated or missing required keys are
 *  errors (ConfigError starting "--cluster: "). The result is validated. */
ClusterSpec parse_cluster_string(const std::string& text);

/** @brief The canonical inline form of a spec (every key, fixed order): parse_cluster_string reads it back. */
std::string to_cluster_string(const ClusterSpec& spec);

/** @brief A split-duplex link of a node (its name without the "nodeN-" prefix). */
struct LayoutLink {
  std::string name;
  std::string link_class; ///< link catalogue name, or "qpi" / "switch-uplink" for the extra PCIe pieces
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

/** @brief One link crossed by a route, in its direction (up = from the first endpoint's side). */
struct LayoutHop {
  int link = 0; ///< index into NodeLayout::links
  bool up = true;
};

/** @brief The inside of one server, identical for every node: endpoints 0..G-1 are the GPUs, G the CPU host,
 *  G+1 the gateway router towards the network. routes[a][b] (a < b) lists the links from a to b; the reverse
 *  route uses the same links in reverse order and opposite directions. */
struct NodeLayout {
  int gpus = 0;
  std::vector<LayoutLink> links;
  std::vector<std::vector<std::vector<LayoutHop>>> routes;
  std::string description; ///< one paragraph: what is modelled and how (goes into the XML comment)
  std::string diagram;     ///< text drawing of the PCIe tree and the NVLink/NVSwitch links, one item per line

  int cpu() const { return gpus; }
  int gateway() const { return gpus + 1; }
  int endpoints() const { return gpus + 2; }
};

/** @brief Builds the node layout of a validated spec (pure C++; also used by the XML writer and the in-memory
 *  builder, so both produce the same links and routes). */
NodeLayout build_node_layout(const ClusterSpec& spec);

/** @brief Fat-tree: the split-duplex uplink of one leaf switch (spine level aggregated into one pipe):
 *  bandwidth = nodes_per_leaf x nics_per_node x NIC bandwidth / oversubscription, latency 0. */
double leaf_uplink_bandwidth(const ClusterSpec& spec);

/** @brief Host and router names, shared by every writer: node3-gpu5, node3-cpu, node3-gw. */
std::string node_name(int node);
std::string gpu_host_name(int node, int gpu);
std::string cpu_host_name(int node);
std::string gateway_name(int node);

} // namespace ddlsim::platform
