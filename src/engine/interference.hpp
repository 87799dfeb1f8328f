// Compute, PCIe and CPU interference between communication and the rest of an iteration (docs/frameworks.md,
// "Compute-communication interference"): what each rank shares, and the input tasks that share it.
#pragma once

#include "collectives/collective.hpp"

#include <vector>

namespace ddlsim::engine {

/** @brief With pcie_contention or cpu_contention: gives every endpoint of `world` its node's CPU host (the one host
 *  with property `cpu` in a GPU's netzone, or the endpoint itself when it is a CPU host) and one core's speed from the
 *  CPU catalogue. Throws ConfigError naming the option when a rank has no such host (or, for PCIe, is a CPU). Call
 *  after Collective::prepare (servers are endpoints by then); does nothing with both options off. */
void attach_node_cpus(collectives::CommWorld& world);

/** @brief Runs rank `rank`'s input task of `seconds` (loading when `io`, else the host-to-device copy): a sleep in
 *  the exact model; with cpu_contention loading is work on the node's CPU host, with pcie_contention the copy is a
 *  transfer from it over the GPU's PCIe link. */
void run_input_task(const collectives::CommWorld& world, int rank, bool io, double seconds);

/** @brief Each rank's share of its GPU taken by an aggregation: gpu_interference for every rank, or with
 *  gpu_interference_auto NCCL's ring count over the GPU's SM count (GPU catalogue). */
std::vector<double> gpu_interference_shares(const collectives::CommWorld& world);

/** @brief NCCL 2.3's rings on a GPU of compute capability `cc` x 10 with one NIC per node (docs/frameworks.md). */
int nccl_rings(int compute_capability);

} // namespace ddlsim::engine
