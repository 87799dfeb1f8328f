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
                       [--topology star|fat-tree --nodes-per-leaf L --oversubscription R] -o FILE.xml

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
             fat-tree  leaf switches of L nodes; each leaf's uplink carries L x K x NIC bandwidth / R)";

} // namespace

void platform_command(const std::vector<std::string>& args, std::ostream& out)
{
  PlatformOptions o;
  po::options_description cluster("Cluster", kHelpColumns, kHelpDescriptionColumns);
  auto add_cluster = cluster.add_options();
  add_cluster("nodes", po::value(&o.spec.nodes)->required()->value_name("N"), "servers (>= 1)");
  add_cluster("gpus-per-node", po::value(&o.spec.gpus_per_node)->required()->value_name("G"),
              "GPU hosts per server (>= 1)");
  add_cluster("gpu", po::value(&o.spec.gpu)->required()->value_name("NAME"),
              ("GPU model: " + platform::known_gpus()).c_str());
  add_cluster("intra", po::value(&o.kinds.intra)->required()->value_name("KIND"),
              ("GPU-to-GPU links inside a node: " + platform::intra_names(" | ")).c_str());
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
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("output,o", po::value(&o.output)->required()->value_name("FILE.xml"), "platform file to write");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(cluster).add(output);
  if (!parse_options(args, all, kPlatformUsage, out, "platform"))
    return;

  o.spec = platform::resolve_cluster_spec(o.spec, o.kinds, platform::SpecNaming::Options);
  check_outputs({{"--output", o.output}}, {});
  write_output_file(o.output, platform::platform_xml(o.spec));
  out << "wrote " << o.output << " (" << o.spec.nodes << " nodes x " << o.spec.gpus_per_node << " " << o.spec.gpu
      << " = " << o.spec.nodes * o.spec.gpus_per_node << " GPU hosts, " << o.spec.nodes << " CPU hosts)\n";
}

} // namespace ddlsim::cli
