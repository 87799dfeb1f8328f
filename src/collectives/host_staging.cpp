// The stack's costs as contended resources (--pcie-contention, --cpu-contention; docs/frameworks.md, interference):
// host-staging copies as transfers over the GPU's PCIe link, per-message overheads as work on the node's CPU host.
#include "collectives/collective.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <cstdint>
#include <set>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace ddlsim::collectives {
namespace {

/** GPU and CPU host pairs whose transfers are staging copies (both directions); one engine per process. */
std::set<std::pair<const sg4::Host*, const sg4::Host*>>& staging_pairs()
{
  static std::set<std::pair<const sg4::Host*, const sg4::Host*>> pairs;
  return pairs;
}

} // namespace

void* payload_of(std::uint64_t bytes)
{
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(bytes + 1));
}

std::uint64_t bytes_of(const char* payload)
{
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(payload)) - 1;
}

bool is_staging_copy(const sg4::Host* src, const sg4::Host* dst)
{
  const auto& pairs = staging_pairs();
  return !pairs.empty() && pairs.count({src, dst}) > 0;
}

void CommWorld::set_node_cpu(int endpoint, NodeCpu cpu)
{
  if (node_cpus_.size() < hosts_.size())
    node_cpus_.resize(hosts_.size());
  if (cpu.device && options_.pcie_contention) {
    bool endpoint_cpu = false; // a CPU host that is an endpoint (a server): its transfers are messages
    for (auto* h : hosts_)
      endpoint_cpu = endpoint_cpu || h == cpu.host;
    if (!endpoint_cpu) {
      staging_pairs().emplace(hosts_[endpoint], cpu.host);
      staging_pairs().emplace(cpu.host, hosts_[endpoint]);
    }
  }
  node_cpus_[endpoint] = cpu;
}

CommWorld::NodeCpu CommWorld::node_cpu(int endpoint) const
{
  return std::size_t(endpoint) < node_cpus_.size() ? node_cpus_[endpoint] : NodeCpu{};
}

void CommWorld::cpu_work(int endpoint, double seconds) const
{
  if (seconds <= 0)
    return;
  const NodeCpu cpu = node_cpu(endpoint);
  if (!options_.cpu_contention || cpu.host == nullptr) {
    sg4::this_actor::sleep_for(seconds);
    return;
  }
  // One core's worth: `seconds` of one core's work, bounded to one core's speed, so that alone it takes `seconds`
  // and beside the input pipeline it takes a core from it (the host shares its speed max-min).
  sg4::Exec::init()
      ->set_flops_amount(seconds * cpu.core_flops)
      ->set_host(cpu.host)
      ->set_bound(cpu.core_flops)
      ->start()
      ->wait();
}

bool CommWorld::staged(int endpoint) const
{
  return options_.pcie_contention && options_.stack.host_staged && node_cpu(endpoint).device;
}

void CommWorld::stage_out(int self, std::uint64_t bytes)
{
  sg4::Comm::sendto_async(hosts_[self], node_cpu(self).host, bytes)->wait();
}

void CommWorld::stage_in(int self, char* const* payloads, std::size_t count)
{
  std::vector<sg4::CommPtr> copies; // every message that arrived in host memory goes on to the GPU, concurrently
  for (std::size_t i = 0; i < count; ++i)
    copies.push_back(sg4::Comm::sendto_async(node_cpu(self).host, hosts_[self], bytes_of(payloads[i])));
  sg4::Comm::wait_all(copies);
}

} // namespace ddlsim::collectives
