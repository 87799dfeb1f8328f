// `--framework NAME`: the choices a framework makes, as options applied before the user's own (docs/frameworks.md).
#include "cli/framework_presets.hpp"

#include "collectives/algorithm_spec.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

#include <algorithm>
#include <exception>
#include <typeinfo>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {
/** A --ps-hosts value of the table: one server on the CPU host of each node 0..S-1, S the run's --servers. */
const char* const kServerPerNodeCpu = "node{i}-cpu";
} // namespace

const std::vector<FrameworkPreset>& framework_presets()
{
  // Every value and its source: docs/frameworks.md, "Framework presets". Never fitted to a measured efficiency.
  static const std::vector<FrameworkPreset> table = {
      {"caffe-mpi",
       "Caffe-MPI 2.0 (2017, on NVIDIA Caffe): NCCL 2 ring allreduce of 6 buckets during backward (reduce_buckets), "
       "1 batch prefetched, interference on",
       {{"algorithm", "nccl-ring"},
        {"stack", "nccl"},
        {"schedule", "buckets"},
        {"bucket-bytes", "model/6"},
        {"first-bucket-bytes", "model/6"},
        {"update", "global"},
        {"io-prefetch", "1"},
        {"gpu-interference", "auto"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
      {"cntk",
       "CNTK 2.x (2017): MPI allreduce of all gradients after backward (sequential), 1 minibatch prefetched",
       {{"stack", "mpi-verbs"},
        {"schedule", "sequential"},
        {"update", "global"},
        {"io-prefetch", "1"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
      {"mxnet",
       "MXNet 0.11-1.x (2017-18), kvstore dist_device_sync: sum in the node, push/pull to ps-lite servers on CPUs "
       "over ZeroMQ, servers update (momentum), per-layer, 4 batches prefetched",
       {{"algorithm", "hier"},
        {"inter-algorithm", "ps"},
        {"stack", "pslite-zmq"},
        {"servers", "1"},
        {"ps-hosts", kServerPerNodeCpu},
        {"ps-sharding", "split"},
        {"ps-update", "server"},
        {"optimizer", "momentum"},
        {"schedule", "wfbp"},
        {"update", "per-layer"},
        {"io-prefetch", "4"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
      {"tensorflow",
       "TensorFlow 1.x tf_cnn_benchmarks (2017-18), variable_update=parameter_server: variables round-robin on a "
       "CPU parameter server over gRPC, server-side sgd, 1 batch staged",
       {{"algorithm", "ps"},
        {"stack", "grpc-tcp"},
        {"servers", "1"},
        {"ps-hosts", kServerPerNodeCpu},
        {"ps-sharding", "round-robin"},
        {"ps-update", "server"},
        {"optimizer", "sgd"},
        {"schedule", "wfbp"},
        {"update", "global"},
        {"io-prefetch", "1"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
      {"horovod",
       "Horovod (v0.21 and later defaults): NCCL allreduce with tensor fusion, 128 MiB / 1 ms",
       {{"algorithm", "nccl"},
        {"stack", "nccl"},
        {"schedule", "fusion"},
        {"fusion-bytes", "128MiB"},
        {"fusion-cycle", "1ms"},
        {"update", "global"},
        {"io-prefetch", "1"},
        {"gpu-interference", "auto"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
      {"pytorch-ddp",
       "PyTorch DistributedDataParallel: NCCL allreduce of 25 MiB buckets (first 1 MiB), 2 batches "
       "prefetched",
       {{"algorithm", "nccl"},
        {"stack", "nccl"},
        {"schedule", "buckets"},
        {"bucket-bytes", "25MiB"},
        {"first-bucket-bytes", "1MiB"},
        {"update", "global"},
        {"io-prefetch", "2"},
        {"gpu-interference", "auto"},
        {"pcie-contention", "on"},
        {"cpu-contention", "on"}}},
  };
  return table;
}

std::string framework_names()
{
  std::vector<std::string> names;
  for (const auto& p : framework_presets())
    names.emplace_back(p.name);
  return join(names);
}

const FrameworkPreset& framework_preset(const std::string& name)
{
  for (const auto& p : framework_presets())
    if (name == p.name)
      return p;
  throw ConfigError("--framework must be one of " + framework_names() + " (got '" + name + "')");
}

namespace {

/** "node0-cpu,node1-cpu" for "2" (a bad count: the first host only, and resolve() refuses the count). */
std::string cpu_hosts(const std::string& servers)
{
  int n = 1;
  try {
    n = std::max(1, std::stoi(servers));
  } catch (const std::exception&) {
  }
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i)
    hosts.push_back("node" + std::to_string(i) + "-cpu");
  return join(hosts, ",");
}

bool explicit_option(const po::variables_map& given, const std::string& name)
{
  const auto it = given.find(name);
  return it != given.end() && !it->second.defaulted();
}

/** The value the run will use: the user's explicit one, else the preset's, else empty. */
std::string final_value(const FrameworkPreset& preset, const po::variables_map& given, const std::string& name)
{
  if (explicit_option(given, name)) {
    const boost::any& v = given[name].value();
    return v.type() == typeid(int) ? std::to_string(boost::any_cast<int>(v)) : boost::any_cast<std::string>(v);
  }
  for (const auto& [option, value] : preset.options)
    if (option == name)
      return value;
  return "";
}

/** Whether the algorithm `text` with inter-node algorithm `inter` aggregates through parameter servers, and whether
 *  it is hier. An unparsable text reads as neither: resolve() then refuses it with its own message. */
std::pair<bool, bool> servers_and_hier(const std::string& text, const std::string& inter)
{
  if (text.empty())
    return {false, false}; // the stack's own selection: stacks name flat algorithms and NCCL's only
  try {
    const collectives::AlgorithmSpec spec = collectives::parse_algorithm(text);
    collectives::CollectiveOptions o;
    if (const auto* e = collectives::find_algorithm(inter.empty() ? "ring" : inter))
      o.inter_algorithm = e->id;
    return {collectives::uses_servers(spec, o), spec.uses(collectives::AlgorithmId::Hier)};
  } catch (const ConfigError&) {
    return {false, false};
  }
}

} // namespace

std::vector<std::string> preset_words(const FrameworkPreset& preset, const po::variables_map& given)
{
  // Plain variables, not a structured binding: C++17 lambdas may not capture bindings (GCC allows it, Clang not).
  const auto servers_hier =
      servers_and_hier(final_value(preset, given, "algorithm"), final_value(preset, given, "inter-algorithm"));
  const bool servers = servers_hier.first;
  const bool hier = servers_hier.second;
  const std::string schedule = final_value(preset, given, "schedule");
  const std::string ps_update = final_value(preset, given, "ps-update");
  auto read = [&](const std::string& option) {
    static const char* const server_options[] = {"servers", "ps-hosts", "ps-sharding", "ps-update"};
    if (std::find(std::begin(server_options), std::end(server_options), option) != std::end(server_options))
      return servers;
    if (option == "optimizer")
      return servers && ps_update == "server";
    if (option == "inter-algorithm")
      return hier;
    if (option == "fusion-bytes" || option == "fusion-cycle")
      return schedule == "fusion";
    if (option == "bucket-bytes" || option == "first-bucket-bytes")
      return schedule == "buckets";
    return true;
  };
  std::vector<std::string> words;
  for (const auto& [option, value] : preset.options)
    if (!explicit_option(given, option) && read(option)) {
      words.push_back("--" + option);
      words.push_back(value == std::string(kServerPerNodeCpu) ? cpu_hosts(final_value(preset, given, "servers"))
                                                              : value);
    }
  return words;
}

} // namespace ddlsim::cli
