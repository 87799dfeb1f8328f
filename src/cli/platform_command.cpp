// `ddlsim platform`: write the SimGrid platform XML of a generated cluster (nodes x GPUs, PCIe/NVLink, network).
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "hardware/gpu_catalog.hpp"
#include "platform/cluster_spec.hpp"
#include "platform/platform_xml.hpp"

#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kPlatformUsage =
    R"(Usage: ddlsim platform --nodes N --gpus-per-node G --gpu NAME --intra pcie|nvlink|nvswitch
                       --inter 10gbe|25gbe|ib56|ib100|ib200 [--nics-per-node K]
                       [--topology star|fat-tree --nodes-per-leaf L --oversubscription R]
                       [--inter-latency T --inter-bandwidth B --intra-latency T --intra-bandwidth B] -o FILE.xml
       ddlsim platform --nodes N --gpus-per-node 0 --inter KIND [...] -o FILE.xml   (CPU-only nodes)

Writes a SimGrid platform for `ddlsim run --platform`: N nodes of G GPU hosts (node<N>-gpu<I>) and one CPU
host (node<N>-cpu) each. Link bandwidths and latencies come from the link catalogue (sources:
platforms/README.md). The file holds one route per node pair, so it grows as N^2: for thousands of GPUs give
the same description to `ddlsim run --cluster "nodes=N,gpus-per-node=G,gpu=NAME,intra=...,inter=..."`,
which builds the cluster in memory.

Intra-node:  pcie      every GPU on its own PCIe x16 link, 3.0 (4.0 for A100) (K80: two GK210 per board share a link,
                       boards behind one PCIe switch per CPU socket)
             nvlink    the DGX-1 hybrid cube-mesh (8 x P100-SXM2 or V100-SXM2)
             nvswitch  every GPU's NVLinks to one non-blocking switch (V100-SXM2: 6 links, A100: 12)
Topology:    star      one non-blocking switch
             fat-tree  leaf switches of L nodes; each leaf's uplink carries L x K x NIC bandwidth / R

--gpus-per-node 0 makes CPU-only nodes (no --gpu, no --intra): the ranks are the CPU hosts, as in an MPI
benchmark. Times take a unit (25us, 1.5ms; a bare 0 is allowed), bandwidths too (1.25GBps, 10Gbps).)";

} // namespace

void platform_command(const std::vector<std::string>& args, std::ostream& out)
{
  PlatformOptions o;
  platform::LinkOverrideNames links_text;
  po::options_description cluster("Cluster", kHelpColumns, kHelpDescriptionColumns);
  auto add_cluster = cluster.add_options();
  add_cluster("nodes", po::value(&o.spec.nodes)->required()->value_name("N"), "servers (>= 1)");
  add_cluster("gpus-per-node", po::value(&o.spec.gpus_per_node)->required()->value_name("G"),
              "GPU hosts per server (>= 1; 0: CPU-only nodes)");
  add_cluster("gpu", po::value(&o.spec.gpu)->value_name("NAME"),
              ("GPU model (required with GPUs): " + platform::known_gpus()).c_str());
  add_cluster("intra", po::value(&o.kinds.intra)->value_name("KIND"),
              ("GPU-to-GPU links inside a node (required with GPUs): " + platform::intra_names(" | ")).c_str());
  add_cluster("inter", po::value(&o.kinds.inter)->required()->value_name("KIND"),
              ("NIC class: " + platform::inter_names(" | ")).c_str());
  add_cluster("nics-per-node", po::value(&o.spec.nics_per_node)->default_value(o.spec.nics_per_node)->value_name("K"),
              "NICs per server; must divide --gpus-per-node");
  add_cluster("topology", po::value(&o.kinds.topology)->default_value(o.kinds.topology)->value_name("KIND"),
              platform::topology_names(" | ").c_str());
  add_cluster("nodes-per-leaf", po::value(&o.spec.nodes_per_leaf)->value_name("L"),
              "fat-tree: servers per leaf switch (required with fat-tree; must divide --nodes)");
  add_cluster("oversubscription", po::value(&o.spec.oversubscription)->value_name("R"),
              "fat-tree: leaf down / up bandwidth ratio, >= 1 (default 1)");
  po::options_description links("Links (default: the link catalogue, platforms/README.md)", kHelpColumns,
                                kHelpDescriptionColumns);
  auto add_links = links.add_options();
  add_links("inter-latency", po::value(&links_text.inter_latency)->value_name("TIME"),
            "the network's latency, NIC to NIC one way (each NIC link carries half), e.g. 25us");
  add_links("inter-bandwidth", po::value(&links_text.inter_bandwidth)->value_name("BW"),
            "each NIC's bandwidth per direction, e.g. 1.25GBps or 10Gbps");
  add_links("intra-latency", po::value(&links_text.intra_latency)->value_name("TIME"),
            "latency of one GPU-to-GPU hop inside a node (PCIe: two GPU links of half each)");
  add_links("intra-bandwidth", po::value(&links_text.intra_bandwidth)->value_name("BW"),
            "bandwidth of one intra-node link: a GPU's PCIe x16 link, or one NVLink link");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("output,o", po::value(&o.output)->required()->value_name("FILE.xml"), "platform file to write");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(cluster).add(links).add(output);
  if (!parse_options(args, all, kPlatformUsage, out, "platform"))
    return;

  o.spec = platform::resolve_cluster_spec(o.spec, o.kinds, platform::SpecNaming::Options, links_text);
  check_outputs({{"--output", o.output}}, {});
  write_output_file(o.output, platform::platform_xml(o.spec));
  if (o.spec.gpus_per_node == 0)
    out << "wrote " << o.output << " (" << o.spec.nodes << " CPU-only nodes: " << o.spec.nodes << " CPU hosts)\n";
  else
    out << "wrote " << o.output << " (" << o.spec.nodes << " nodes x " << o.spec.gpus_per_node << " " << o.spec.gpu
        << " = " << o.spec.nodes * o.spec.gpus_per_node << " GPU hosts, " << o.spec.nodes << " CPU hosts)\n";
}

} // namespace ddlsim::cli
