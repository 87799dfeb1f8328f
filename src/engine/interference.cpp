// Interference between communication and the rest of an iteration: node CPU hosts, the input tasks on them, GPU
// shares (docs/frameworks.md, "Compute-communication interference").
#include "engine/interference.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/cpu_catalog.hpp"
#include "hardware/gpu_catalog.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>
#include <limits>
#include <map>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

const char* option_name(const collectives::CollectiveOptions& o)
{
  return o.pcie_contention ? "pcie_contention" : "cpu_contention";
}

/** The one host with property `cpu` in the netzone of `gpu`; nullptr when there is none. */
sg4::Host* cpu_beside(sg4::Host* gpu)
{
  sg4::Host* found = nullptr;
  for (auto* h : gpu->get_englobing_zone()->get_all_hosts())
    if (h->get_property("cpu") != nullptr) {
      if (found != nullptr)
        throw ConfigError(field("pcie_contention") + ": host '" + gpu->get_cname() +
                          "' has more than one CPU host in "
                          "its zone '" +
                          gpu->get_englobing_zone()->get_name() + "' ('" + found->get_cname() + "', '" +
                          h->get_cname() + "'): which one feeds it is ambiguous");
      found = h;
    }
  return found;
}

double core_flops(const sg4::Host* cpu)
{
  const char* name = cpu->get_property("cpu");
  const auto* spec = platform::find_cpu(name);
  if (spec == nullptr)
    throw ConfigError(field("cpu_contention") + ": host '" + cpu->get_cname() + "' names CPU '" + name +
                      "', which is not in the CPU catalogue (" + platform::known_cpus() +
                      "), so its cores are unknown");
  return cpu->get_speed() / (spec->sockets * spec->cores_per_socket);
}

/** Bottleneck bandwidth of the route `from` -> `to`. */
double route_bandwidth(sg4::Host* from, sg4::Host* to)
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto* l : links)
    bandwidth = std::min(bandwidth, l->get_bandwidth());
  return bandwidth;
}

} // namespace

void attach_node_cpus(collectives::CommWorld& world)
{
  const auto& o = world.options();
  if (!o.pcie_contention && !o.cpu_contention)
    return;
  std::vector<collectives::CommWorld::NodeCpu> cpus(world.endpoints());
  std::map<sg4::Host*, int> sharers;
  for (int e = 0; e < world.endpoints(); ++e) {
    sg4::Host* h = world.host(e);
    auto& c = cpus[e];
    if (h->get_property("cpu") != nullptr) {
      c.host = h;
      if (e < world.size() && o.pcie_contention)
        throw ConfigError(field("pcie_contention") + ": rank " + std::to_string(e) + "'s host '" + h->get_cname() +
                          "' is a CPU host: there is no PCIe copy between it and a GPU to model");
    } else {
      c.host = cpu_beside(h);
      c.device = c.host != nullptr;
      if (c.host == nullptr && e < world.size())
        throw ConfigError(field(option_name(o)) +
                          " needs a CPU host (a host with property cpu) in every GPU's node: "
                          "rank " +
                          std::to_string(e) + "'s host '" + h->get_cname() + "' has none in its zone '" +
                          h->get_englobing_zone()->get_name() + "'");
    }
    if (c.host != nullptr) {
      c.core_flops = core_flops(c.host);
      if (e < world.size())
        ++sharers[c.host];
    }
  }
  for (int e = 0; e < world.endpoints(); ++e) {
    if (cpus[e].host != nullptr && sharers.count(cpus[e].host))
      cpus[e].input_sharers = sharers[cpus[e].host];
    world.set_node_cpu(e, cpus[e]);
  }
}

void run_input_task(const collectives::CommWorld& world, int rank, bool io, double seconds)
{
  if (seconds <= 0)
    return;
  const auto& o = world.options();
  const auto cpu = world.node_cpu(rank);
  if (io && o.cpu_contention && cpu.host != nullptr) {
    // The workload records no CPU work of loading, only its time io_s: the node's input pipelines together are taken
    // to keep its whole CPU busy for io_s (each gets 1 / sharers of it), the case in which communication's overheads
    // slow loading the most (docs/frameworks.md).
    const double share = cpu.host->get_speed() / cpu.input_sharers;
    sg4::Exec::init()->set_flops_amount(seconds * share)->set_host(cpu.host)->set_bound(share)->start()->wait();
    return;
  }
  if (!io && o.pcie_contention && cpu.device) {
    // h2d_s was made from bytes at the PCIe bandwidth (workload generator): the bytes are h2d_s x the route's
    // bandwidth, so that alone the copy takes h2d_s plus the route's latency.
    sg4::Host* gpu = world.host(rank);
    const double bytes = std::round(seconds * route_bandwidth(cpu.host, gpu));
    sg4::Comm::sendto_async(cpu.host, gpu, static_cast<std::uint64_t>(bytes))->wait();
    return;
  }
  sg4::this_actor::sleep_for(seconds);
}

int nccl_rings(int compute_capability)
{
  // NCCL 2.3 src/misc/rings.cu, ncclGetRings: the network transport builds one ring per NIC ("a single net
  // interface, hence a single ring"), and at least defaultMinNrings = 2 on compute capability 3 (Kepler), else 1.
  return compute_capability / 10 == 3 ? 2 : 1;
}

std::vector<double> gpu_interference_shares(const collectives::CommWorld& world)
{
  const auto& o = world.options();
  std::vector<double> shares(world.size(), o.gpu_interference);
  if (!o.gpu_interference_auto)
    return shares;
  for (int r = 0; r < world.size(); ++r) {
    const char* gpu = world.host(r)->get_property("gpu");
    const auto* spec = gpu ? platform::find_gpu(gpu) : nullptr;
    if (spec == nullptr || spec->sm_count <= 0)
      throw ConfigError(field("gpu_interference") +
                        " auto needs every rank's GPU in the GPU catalogue (its SM count): "
                        "rank " +
                        std::to_string(r) + "'s host '" + world.host(r)->get_cname() + "' names " +
                        (gpu ? "'" + std::string(gpu) + "'" : std::string("no GPU")) + " (" + platform::known_gpus() +
                        ")");
    // NCCL launches one CUDA block per ring (NCCL 2.3 src/misc/enqueue.cu, setupLaunch: gridDim.x = nRings), and a
    // block runs on one SM: the aggregation holds rings / SMs of the GPU.
    shares[r] = double(nccl_rings(spec->compute_capability)) / spec->sm_count;
  }
  return shares;
}

} // namespace ddlsim::engine
