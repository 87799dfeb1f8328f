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

// The message size rides in the payload pointer (SimGrid moves the pointer, never reads it; the simulated size is
// the transfer's own): size + 1, so that the pointer is never null.
void* payload_of(std::uint64_t bytes)
{
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(bytes + 1));
}

std::uint64_t bytes_of(const char* payload)
{
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(payload)) - 1;
}

/** One copy of `bytes` from `from` to `to` over their route (the GPU's PCIe link), waited for. */
sg4::CommPtr copy_async(sg4::Host* from, sg4::Host* to, std::uint64_t bytes)
{
  return sg4::Comm::sendto_async(from, to, bytes);
}

} // namespace

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

sg4::CommPtr CommWorld::post_send_contended(int self, int to, std::uint64_t bytes, bool overhead, int channel)
{
  const StackProfile& stack = options_.stack;
  cpu_work(self, overhead ? options_.msg_overhead_s + stack.send_overhead_s : 0.0);
  double before_s = stack.copy_s_per_byte * double(bytes);
  if (staged(self)) {
    before_s -= stack.pcie_copy_s_per_byte * double(bytes); // the copy below takes its place
    copy_async(hosts_[self], node_cpu(self).host, bytes)->wait();
  }
  if (stack.rendezvous_above_bytes > 0 && bytes > stack.rendezvous_above_bytes)
    before_s += handshake_s(self, to);
  if (before_s > 0)
    sg4::this_actor::sleep_for(before_s);
  sent_[self] += bytes;
  received_[to] += bytes;
  messages_[self] += 1;
  return mailbox(self, to, channel)->put_async(payload_of(bytes), bytes);
}

void CommWorld::received_contended(int self, const std::vector<char*>& payloads)
{
  cpu_work(self, options_.stack.recv_overhead_s * double(payloads.size()));
  if (!staged(self))
    return;
  std::vector<sg4::CommPtr> copies; // every message that arrived in host memory goes on to the GPU, concurrently
  for (const char* p : payloads)
    copies.push_back(copy_async(node_cpu(self).host, hosts_[self], bytes_of(p)));
  sg4::Comm::wait_all(copies);
}

} // namespace ddlsim::collectives
