// Platforms and workloads built for tests: small, contention-free, with known alpha and beta.
#pragma once

#include "platform/cluster_spec.hpp"
#include "proto/workload.pb.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::test {

/** @brief Parameters of a star: every host has its own split-duplex link to a central switch, so a route
 *  host i -> host j crosses link i (up) and link j (down): latency 2 x link_latency, bandwidth link_bw. */
struct StarSpec {
  int hosts = 2;
  double link_bytes_per_s = 1e9;
  double link_latency_s = 1e-6;
  double speed_flops = 12e12;      ///< host speed
  std::string gpu = "P40";         ///< gpu property
  int extra_hosts = 0;             ///< hosts "srv0", "srv1", ... without the gpu property, on the same star
  std::string server_cpu;          ///< when set: the extra hosts carry this `cpu` property (CPU catalogue)
  double server_speed_flops = -1;  ///< extra hosts' speed; negative: speed_flops
  double backbone_bytes_per_s = 0; ///< > 0: every route also crosses one FATPIPE link "bb" of this bandwidth
  /** Host index pairs whose route (both ways) also crosses one SHARED link "x" of shared_bytes_per_s. */
  std::vector<std::pair<int, int>> shared_routes;
  double shared_bytes_per_s = 0;
  /** When set: every host link's latency over time, a SimGrid profile (one "date value" line per change, seconds),
   *  written to a file of its own that each link names as its latency_file. */
  std::string latency_profile;
  std::map<int, double> host_latency_s;   ///< host index -> its link's latency instead of link_latency_s
  std::map<int, double> host_bytes_per_s; ///< host index -> its link's bandwidth instead of link_bytes_per_s
  /** Host indices (GPU hosts from 0, then the extra hosts) whose link is a FATPIPE: it limits each flow, not their sum
   *  (no flows share it). */
  std::set<int> fatpipe_hosts;
};

/** @brief A generated cluster on a star: `nodes` nodes of `gpus_per_node` GPUs of model `gpu`, `intra` inside a node
 *  and `inter` between nodes (link catalogue names), resolved as `--cluster` resolves them. */
platform::ClusterSpec star_cluster(int nodes, int gpus_per_node, const std::string& gpu, const std::string& intra,
                                   const std::string& inter);

/** @brief Writes the star platform as SimGrid XML into a fresh temporary file and returns its path. */
std::string write_star_platform(const StarSpec& spec);

/** @brief Two nodes of four GPUs: inside a node every GPU pair has its own NVLink 2.0 pair link (47.9 GB/s,
 *  3.4 us); each GPU reaches its node's NIC over PCIe 3.0 x16 (15.754 GB/s, 2.85 us); each node has one
 *  100 Gb/s EDR NIC (12.2 GB/s, 1.95 us), so a route across nodes is 9.6 us and 12.2 GB/s.
 *  Figures: data/interconnects/README.md (NVLink pair, EDR bus bandwidth, NCCL per-hop latencies). */
std::string write_nvlink_ib_platform();

/** @brief Two nodes of one P40 each, with a CPU host `node<N>-cpu` (2x-Xeon-E5-2698-v4, 40 cores) beside it: the GPU
 *  reaches its CPU and its NIC over its own split-duplex PCIe link of `pcie_bytes_per_s` and no latency; the NICs are
 *  joined by links of 1e12 B/s and no latency, so the PCIe links are every route's bottleneck and a GPU-to-GPU
 *  transfer of S bytes alone takes S / pcie_bytes_per_s. */
std::string write_two_node_cpu_platform(double pcie_bytes_per_s);

/** @brief `hosts` hosts gpu0 .. gpu(hosts - 1), each with links "upI", "downI" and "aI" (shared, 1 GB/s, 1 us): the
 *  route from gpuI to gpuJ crosses upI, aI, then aJ where both are below `both_below`, and downJ. Among the hosts
 *  below `both_below`, or among those from it, mapping hosts onto each other by XOR of their offset maps every route
 *  onto another link for link, aI onto aJ: the a links are one class, which a route below `both_below` crosses twice.
 */
std::string write_two_sided_platform(int hosts, int both_below);

/** @brief A workload of one layer with no compute, only `bytes` of gradient: one allreduce per iteration. */
proto::Workload single_tensor_workload(std::uint64_t bytes);

} // namespace ddlsim::test
