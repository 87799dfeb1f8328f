// `ddlsim workload`: write a layer-wise workload generated from the model zoo and a calibration point.
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "platform/gpu_catalog.hpp"
#include "workload/flop_model.hpp"
#include "workload/workload.hpp"

#include <fstream>
#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kWorkloadUsage = R"(Usage: ddlsim workload --model NAME --gpu NAME --batch N [-o FILE]

Generates a workload: the calibration point's measured single-GPU iteration time, scaled to the target
GPU by datasheet peak FP32 throughput, spread over layers in proportion to their FLOPs
(method and sources: workloads/README.md). Writes text format (.textproto) or JSON (.json) by the
output's extension, or text format on stdout.)";

} // namespace

void workload_command(const std::vector<std::string>& args, std::ostream& out)
{
  WorkloadOptions o;
  po::options_description desc("Options");
  desc.add_options()
      ("model", po::value(&o.model)->default_value(o.model)->value_name("NAME"), ("model: " + workload::known_models()).c_str())
      ("gpu", po::value(&o.gpu)->default_value(o.gpu)->value_name("NAME"), ("target GPU: " + platform::known_gpus()).c_str())
      ("batch", po::value(&o.batch)->default_value(o.batch)->value_name("N"), "samples per GPU per iteration (must have a calibration point)")
      ("output,o", po::value(&o.output)->value_name("FILE"), "output file, .textproto or .json (default: text format on stdout)")
      ("help,h", "show this help")
      ("version", "show the version");
  if (!parse_options(args, desc, kWorkloadUsage, out, "workload"))
    return;

  if (o.batch < 1)
    throw ConfigError("--batch must be >= 1 (got " + std::to_string(o.batch) + ")");
  workload::FlopModelRequest request;
  request.model = o.model;
  request.gpu = o.gpu;
  request.batch = static_cast<unsigned>(o.batch);
  const proto::Workload w = workload::generate_flop_model(request);

  if (o.output.empty()) {
    out << workload::to_textproto(w);
    return;
  }
  const bool json = o.output.size() >= 5 && o.output.compare(o.output.size() - 5, 5, ".json") == 0;
  std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
  if (!file)
    throw InputError(o.output + ": cannot open for writing");
  file << (json ? workload::to_json(w) : workload::to_textproto(w));
  file.close();
  if (!file)
    throw InputError(o.output + ": write failed");
  out << "wrote " << o.output << " (" << w.layers_size() << " layers, " << workload::total_gradient_bytes(w)
      << " gradient bytes)\n";
}

} // namespace ddlsim::cli
