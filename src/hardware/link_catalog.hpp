// Catalogue of link classes (PCIe, NVLink, Ethernet, InfiniBand): bandwidth, latency and where each came from.
#pragma once

#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief One kind of link as ddlsim models it: a split-duplex link (each direction carries bandwidth_bytes_per_s).
 *
 *  Latency method (the one of platforms/p40-4x4-ib56.xml, applied to every class): a route between two GPUs
 *  costs NCCL's per-hop latency for its medium (data/interconnects/README.md, row "NCCL's own latency model":
 *  PCIe 5.7 us, NVLink 3.4 us, network 9.6 us). A GPU reaches its peer through two links of the class
 *  (its own and the peer's), so latency_s = route_latency_s / 2; a network route also crosses both GPUs' PCIe
 *  links, so a NIC link carries (9.6 - 5.7) / 2 = 1.95 us. Ethernet classes (10gbe, 25gbe) have a measured
 *  NIC-to-NIC latency of their own (kEthernetNetworkLatency_s): each NIC link carries half of it, and their
 *  GPU-to-GPU route_latency_s is it plus the two PCIe links (5.7 us). Where a pair of GPUs is joined by one direct link
 *  (NVLink in a DGX-1) that link carries the whole route_latency_s. */
struct LinkClass {
  std::string name;                 ///< catalogue key: pcie3-x16, nvlink1, ..., ib200
  std::string medium;               ///< "pcie", "nvlink" or "network": which NCCL per-hop latency applies
  double bandwidth_bytes_per_s = 0; ///< one direction
  double latency_s = 0;             ///< per link, for the two-links-per-route layout (see above)
  double route_latency_s = 0;       ///< NCCL's per-hop latency of the medium: what a GPU-to-GPU route costs
  std::string bandwidth_source;     ///< measured (with the row cited) or "theoretical" (with the derivation)
  std::string latency_source;       ///< where the latency came from (measured, model, or "no source" and why)
};

/** @brief Every catalogued link class. */
const std::vector<LinkClass>& link_catalog();

/** @brief Entry by name; throws ConfigError listing the known names. */
const LinkClass& link_by_name(const std::string& name);

/** @brief Catalogued names, comma separated. */
std::string known_links();

/** @brief The x16 PCIe link of a GPU's host interface: pcie3-x16 for generation 3, pcie4-x16 for 4 (ConfigError
 *  for a generation the catalogue lacks). */
const LinkClass& pcie_x16_link(int generation);

/** @brief One NVLink link of a generation: nvlink1, nvlink2 or nvlink3 (ConfigError for another). */
const LinkClass& nvlink_link(int generation);

/** @brief PCIe x16 bandwidth per direction, theoretical: GT/s x 16 lanes x 128/130 encoding / 8 bits. PCIe 3.0 is
 *  8 GT/s (15.754 GB/s), PCIe 4.0 16 GT/s. Also the default host-to-device rate of generated workloads. */
inline constexpr double kPcie3x16Bandwidth_bytes_per_s = 15.754e9;
inline constexpr double kPcie4x16Bandwidth_bytes_per_s = 31.508e9;

/** @brief NCCL's per-hop ring latencies (data/interconnects/README.md, "NCCL's own latency model"). */
inline constexpr double kNcclPcieHopLatency_s = 5.7e-6;
inline constexpr double kNcclNvlinkHopLatency_s = 3.4e-6;
inline constexpr double kNcclNetworkHopLatency_s = 9.6e-6;

/** @brief Ethernet's network latency (NIC to NIC through the switch, one way), measured: the OSU MPI allreduce of
 *  4 B between 2 nodes over 10 Gb Ethernet, 31.92 us (data/osu-allreduce-10gbe/allreduce2.log, first line). On 2
 *  processes every allreduce algorithm is one exchange, so this is one small message's one-way time through MPI,
 *  the kernel TCP stack, both NICs and the switch: the same kind of figure as NCCL's 9.6 us for InfiniBand (a
 *  library's per-hop latency), not a wire-only latency. Read off the log, not fitted. */
inline constexpr double kEthernetNetworkLatency_s = 31.92e-6;

/** @brief The inter-socket link of a two-socket Xeon server (one QPI link at 9.6 GT/s x 2 bytes = 19.2 GB/s per
 *  direction: theoretical, Intel Xeon E5-2600 v3/v4 product specifications). Its latency is not modelled (0):
 *  NCCL's model charges one PCIe hop per GPU pair whatever lies between them. */
inline constexpr double kQpiBandwidth_bytes_per_s = 19.2e9;

/** @brief Speed given to CPU hosts (one per node): theoretical FP32 peak of two 20-core Xeon E5-2698 v4 at 2.2 GHz
 *  (the CPUs of the DGX-1 datasheet), 2 x 20 cores x 2.2e9 Hz x 32 FP32 FLOP/cycle (two AVX2 FMA units) =
 *  2.816 TFLOP/s. An ASSUMPTION for every other server: ddlsim places no compute on CPU hosts yet. */
inline constexpr double kCpuHostSpeed_flops = 2.816e12;

} // namespace ddlsim::platform
