// Link classes: every bandwidth is a cited measurement or marked theoretical; latencies follow NCCL's model.
#include "hardware/link_catalog.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

namespace ddlsim::platform {
namespace {

const char* const kInterconnects = "data/interconnects/README.md";

const char* const kNcclLatency = "NCCL's per-hop ring latency model (data/interconnects/README.md, row \"NCCL's own "
                                 "latency model\", NCCL src/graph/tuning.cc)";

LinkClass make(const std::string& name, const std::string& medium, double bandwidth, const std::string& source)
{
  LinkClass c;
  c.name = name;
  c.medium = medium;
  c.bandwidth_bytes_per_s = bandwidth;
  c.route_latency_s = medium == "pcie"     ? kNcclPcieHopLatency_s
                      : medium == "nvlink" ? kNcclNvlinkHopLatency_s
                                           : kNcclNetworkHopLatency_s;
  // Two links of the class per GPU-to-GPU route; a network route also crosses two PCIe links.
  c.latency_s = medium == "network" ? (kNcclNetworkHopLatency_s - kNcclPcieHopLatency_s) / 2 : c.route_latency_s / 2;
  c.bandwidth_source = source;
  c.latency_source = kNcclLatency;
  return c;
}

/** An Ethernet class: the measured NIC-to-NIC latency instead of NCCL's network hop (see link_catalog.hpp). */
LinkClass make_ethernet(const std::string& name, double bandwidth, const std::string& source,
                        const std::string& latency_source)
{
  LinkClass c = make(name, "network", bandwidth, source);
  c.latency_s = kEthernetNetworkLatency_s / 2;
  c.route_latency_s = kEthernetNetworkLatency_s + kNcclPcieHopLatency_s;
  c.latency_source = latency_source;
  return c;
}

const char* const kEthernetLatency =
    "measured: the OSU MPI allreduce of 4 B between 2 nodes over 10 Gb Ethernet, 31.92 us "
    "(data/osu-allreduce-10gbe/allreduce2.log; on 2 processes one exchange: MPI, kernel TCP, NICs and switch)";

} // namespace

const std::vector<LinkClass>& link_catalog()
{
  static const std::vector<LinkClass> catalog = {
      make("pcie3-x16", "pcie", kPcie3x16Bandwidth_bytes_per_s,
           "theoretical: 8 GT/s x 16 lanes x 128/130 encoding / 8 bits (no measured figure in data/)"),
      make("pcie4-x16", "pcie", kPcie4x16Bandwidth_bytes_per_s,
           "theoretical: 16 GT/s x 16 lanes x 128/130 encoding / 8 bits (A100 hosts; no measured figure in data/)"),
      make("nvlink1", "nvlink", 18.3e9,
           std::string("measured: P100-SXM2 pair joined by 1 NVLink 1.0 link, 18.3 GB/s one-way (") + kInterconnects +
               ", row 'P100-SXM2 pair, 2 NVLink 1.0 links / 1 link', Dell C4130 whitepaper, "
               "p2pBandwidthLatencyTest)"),
      make("nvlink2", "nvlink", 23.95e9,
           std::string("measured: half of 47.9 GB/s one-way over a V100-SXM2 pair joined by 2 NVLink 2.0 links (") +
               kInterconnects + ", row 'V100-SXM2 pair joined by 2 NVLink 2.0 links', p2pBandwidthLatencyTest)"),
      make("nvlink3", "nvlink", 25e9,
           "theoretical: A100 datasheet NVLink 600 GB/s per GPU over 12 links, both directions: 25 GB/s per link "
           "per direction"),
      make_ethernet("10gbe", 1.25e9, "theoretical: 10 Gb/s / 8 bits (no TCP/IP or Ethernet framing overhead)",
                    kEthernetLatency),
      make_ethernet("25gbe", 3.125e9,
                    std::string("theoretical: 25 Gb/s / 8 bits; NCCL over TCP sockets reached only 1.7 GB/s allreduce "
                                "bus bandwidth on 25 Gb/s VMs (") +
                        kInterconnects + ", row '25 Gb/s TCP (Azure VMs)')",
                    std::string("no 25 GbE latency measurement found; the 10gbe figure (") + kEthernetLatency +
                        "), because a small message's time is the software path and the NICs', not the line "
                        "rate: 4 B plus headers take under 0.1 us on the wire at either speed"),
      make("ib56", "network", 6.03e9,
           std::string("measured: 56 Gb/s FDR ConnectX-3, ib_write_bw 64 KiB messages, 6.03 GB/s (") + kInterconnects +
               ", row '56 Gb/s FDR InfiniBand'; that the fabric is FDR is marked uncertain there)"),
      make("ib100", "network", 12.2e9,
           std::string("measured: 12.2 GB/s allreduce bus bandwidth, one 100 Gb/s EDR NIC per node, 4 x 8 V100 (") +
               kInterconnects + ", row '100 Gb/s EDR InfiniBand', NVIDIA/nccl-tests issue 29)"),
      make("ib200", "network", 24e9,
           std::string("rule of thumb: about 24 GB/s allreduce bus bandwidth per 200 Gb/s HDR NIC (") + kInterconnects +
               ", row 'rule of thumb', NVIDIA/nccl-tests issue 119)"),
  };
  return catalog;
}

const LinkClass& link_by_name(const std::string& name)
{
  for (const auto& c : link_catalog())
    if (c.name == name)
      return c;
  throw ConfigError("unknown link class '" + name + "' (known: " + known_links() + ")");
}

const LinkClass& pcie_x16_link(int generation)
{
  return link_by_name("pcie" + std::to_string(generation) + "-x16");
}

const LinkClass& nvlink_link(int generation)
{
  return link_by_name("nvlink" + std::to_string(generation));
}

std::string known_links()
{
  std::vector<std::string> names;
  for (const auto& c : link_catalog())
    names.push_back(c.name);
  return join(names);
}

} // namespace ddlsim::platform
