// `ddlsim workload`: generate a layer-wise workload (roofline model) or import one (CSV, ASTRA-sim 1.0, Chakra ET);
// write it as a workload file and/or as Chakra ET files.
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "workload/chakra.hpp"
#include "workload/importers.hpp"
#include "workload/roofline.hpp"
#include "workload/workload.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kWorkloadUsage =
    R"(Usage: ddlsim workload [--model NAME] [--gpu NAME] [--batch N] [--precision fp32|fp16] [-o FILE]
       ddlsim workload --import-csv FILE   --gpu NAME --batch N [--csv-header auto|yes|no] [-o FILE]
       ddlsim workload --import-astra FILE --gpu NAME --batch N --frequency-hz HZ [-o FILE]
       ddlsim workload --import-chakra FILE... --gpu NAME --batch N [-o FILE]
       ddlsim workload ... --export-chakra PREFIX [--chakra-ranks N]

Generates a workload from the model zoo: per-layer roofline times on the target GPU (datasheet peak and
memory bandwidth, per-layer-kind efficiencies calibrated against measured single-GPU throughput), or
imports one from a per-layer CSV (layer,forward_ms,backward_ms,gradient_bytes), an ASTRA-sim 1.0
data-parallel workload file (cycles converted with --frequency-hz) or Chakra execution traces of a
data-parallel run (one file per rank, NAME.<rank>.et). Method, calibration and formats:
workloads/README.md. Writes text format (.textproto, .pbtxt, .txtpb) or JSON (.json) by the output's
extension, or text format on stdout; --export-chakra writes Chakra ET files PREFIX.0.et ... instead
(or as well, with -o).)";

bool has_suffix(const std::string& s, const std::string& suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool given(const po::variables_map& vm, const char* name)
{
  return vm.count(name) && !vm[name].defaulted();
}

void check_finite(double value, bool allow_zero, const std::string& what)
{
  if (!std::isfinite(value) || value < 0 || (!allow_zero && value == 0))
    throw ConfigError(what + " must be a finite number " + (allow_zero ? ">= 0" : "> 0") + " (got " +
                      format_double(value) + ")");
}

/** File name without directories and extension: "data/rn50.csv" -> "rn50". */
std::string stem(const std::string& path)
{
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const auto dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

void print_points(std::ostream& out, const char* title, const std::vector<workload::MeasuredPoint>& points)
{
  out << title << "\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-14s %-10s %-5s %6s %12s %12s %9s\n", "model", "gpu", "prec", "batch",
                "measured/s", "predicted/s", "residual");
  out << line;
  for (const auto& p : points) {
    const double predicted = workload::predicted_samples_per_s(p);
    std::snprintf(line, sizeof line, "  %-14s %-10s %-5s %6u %12.2f %12.2f %+8.2f%%\n", p.model.c_str(), p.gpu.c_str(),
                  workload::precision_name(p.precision), p.batch, p.samples_per_s, predicted,
                  100 * (predicted / p.samples_per_s - 1));
    out << line;
  }
}

void print_calibration(std::ostream& out)
{
  print_points(out, "calibration points (fitted; each within 5 %):", workload::calibration_points());
  print_points(out, "validation points (not fitted):", workload::validation_points());
  out << "efficiencies (fraction of datasheet peak):\n";
  for (const auto& p : workload::efficiency_profiles()) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-7s %-5s conv1x1 %.3f  conv %.3f  fc %.3f  batchnorm %.3f  ", p.family.c_str(),
                  workload::precision_name(p.precision), p.efficiencies.conv1x1, p.efficiencies.conv, p.efficiencies.fc,
                  p.efficiencies.batchnorm);
    out << line;
    for (size_t i = 0; i < p.gpus.size(); ++i)
      out << (i ? ", " : "") << p.gpus[i];
    out << "\n";
  }
}

/** The options, grouped as --help shows them, bound to `o`. */
po::options_description workload_options(WorkloadOptions& o)
{
  po::options_description generate("Generate (model zoo + roofline)", kHelpColumns, kHelpDescriptionColumns);
  auto add_generate = generate.add_options();
  add_generate("model", po::value(&o.model)->default_value(o.model)->value_name("NAME"),
               ("network: " + workload::known_models()).c_str());
  add_generate("gpu", po::value(&o.gpu)->default_value(o.gpu)->value_name("NAME"),
               ("GPU (also the reference GPU of an import): " + platform::known_gpus()).c_str());
  add_generate("batch", po::value(&o.batch)->default_value(o.batch)->value_name("N"), "samples per GPU per iteration");
  add_generate("precision", po::value(&o.precision)->default_value(o.precision)->value_name("P"),
               "fp32 | fp16 (mixed precision; needs an fp16 peak and calibration)");
  add_generate("pcie-GBps",
               po::value(&o.pcie_gbps)->default_value(o.pcie_gbps, format_double(o.pcie_gbps))->value_name("X"),
               "host-to-device bandwidth in GB/s for h2d_s (default: PCIe 3.0 x16 theoretical)");
  add_generate("decode-samples-per-s",
               po::value(&o.decode_samples_per_s)->default_value(o.decode_samples_per_s)->value_name("X"),
               "input pipeline throughput for io_s; 0: it keeps up, io_s = 0");
  po::options_description import("Import", kHelpColumns, kHelpDescriptionColumns);
  auto add_import = import.add_options();
  add_import("import-csv", po::value(&o.import_csv)->value_name("FILE"),
             "per-layer CSV: layer,forward_ms,backward_ms,gradient_bytes");
  add_import("csv-header", po::value(&o.csv_header)->default_value(o.csv_header)->value_name("H"),
             "auto | yes | no: whether the CSV's first line is the header");
  add_import("import-astra", po::value(&o.import_astra)->value_name("FILE"),
             "ASTRA-sim 1.0 data-parallel workload text");
  add_import("frequency-hz", po::value(&o.frequency_hz)->value_name("HZ"),
             "cycles per second of the ASTRA-sim file (required with --import-astra)");
  add_import("import-chakra", po::value(&o.import_chakra)->multitoken()->value_name("FILE..."),
             "Chakra execution traces of a data-parallel run (NAME.<rank>.et; COMP_NODE_<layer>_FWD/_BWD_WG/_BWD_IG "
             "and all-reduce nodes)");
  add_import("io-ms", po::value(&o.io_ms)->default_value(o.io_ms)->value_name("X"),
             "io_s of the imported workload, in ms");
  add_import("h2d-ms", po::value(&o.h2d_ms)->default_value(o.h2d_ms)->value_name("X"),
             "h2d_s of the imported workload, in ms");
  add_import("update-ms", po::value(&o.update_ms)->default_value(o.update_ms)->value_name("X"),
             "update_s of the imported workload, in ms (ASTRA-sim update delays are added)");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("output,o", po::value(&o.output)->value_name("FILE"),
             "output file, .textproto/.pbtxt/.txtpb or .json (default: text format on stdout)");
  add_output("export-chakra", po::value(&o.export_chakra)->value_name("PREFIX"),
             "also write the workload as Chakra execution traces PREFIX.<rank>.et (durations in whole microseconds)");
  add_output("chakra-ranks", po::value(&o.chakra_ranks)->default_value(o.chakra_ranks)->value_name("N"),
             "how many rank files --export-chakra writes (data parallel: all the same)");
  add_output("calibration", "print the calibration and validation points with the model's residuals, then stop");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description desc;
  desc.add(generate).add(import).add(output);
  return desc;
}

/** Whether --output asks for JSON; ConfigError for an extension that is neither JSON nor text format. */
bool output_is_json(const std::string& output)
{
  if (output.empty() || output == kStandardOutput)
    return false;
  const bool json = has_suffix(output, ".json");
  if (!json && !has_suffix(output, ".textproto") && !has_suffix(output, ".pbtxt") && !has_suffix(output, ".txtpb"))
    throw ConfigError("--output " + output +
                      ": unknown workload format (expected a .textproto, .pbtxt, .txtpb "
                      "or .json file)");
  return json;
}

/** "dir/resnet.0.et" -> "resnet": the file name without its extension and rank. */
std::string chakra_stem(const std::string& path)
{
  std::string name = stem(path);
  const auto dot = name.find_last_of('.');
  if (dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
      name.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    name.resize(dot);
  return name;
}

/** --import-csv, --import-astra or --import-chakra: check that only import options were given, then read the files.
 *  Facts the import found that a user should know go to `notes`. */
proto::Workload import_workload(const WorkloadOptions& o, const po::variables_map& vm, std::vector<std::string>& notes)
{
  const bool csv = !o.import_csv.empty(), astra = !o.import_astra.empty(), chakra = !o.import_chakra.empty();
  if (int(csv) + int(astra) + int(chakra) > 1)
    throw ConfigError("--import-csv, --import-astra and --import-chakra cannot be combined");
  const char* const mode = csv ? "--import-csv" : astra ? "--import-astra" : "--import-chakra";
  for (const char* generator_only : {"precision", "pcie-GBps", "decode-samples-per-s"})
    if (given(vm, generator_only))
      throw ConfigError(std::string("--") + generator_only + " applies to generated workloads, not to " + mode);
  if (!given(vm, "gpu"))
    throw ConfigError(std::string(mode) + " needs --gpu: the GPU the imported times were taken on");
  if (!given(vm, "batch"))
    throw ConfigError(std::string(mode) + " needs --batch: the samples per GPU the imported times are for");
  platform::gpu_by_name(o.gpu); // the reference GPU must be catalogued
  check_finite(o.io_ms, true, "--io-ms");
  check_finite(o.h2d_ms, true, "--h2d-ms");
  check_finite(o.update_ms, true, "--update-ms");
  if (!csv && given(vm, "csv-header"))
    throw ConfigError(std::string("--csv-header applies to --import-csv, not to ") + mode);
  if (!astra && vm.count("frequency-hz"))
    throw ConfigError(std::string("--frequency-hz applies to --import-astra, not to ") + mode);
  const std::string& file = csv ? o.import_csv : astra ? o.import_astra : o.import_chakra.front();
  workload::ImportMetadata meta;
  meta.model = given(vm, "model") ? o.model : chakra ? chakra_stem(file) : stem(file);
  meta.reference_gpu = o.gpu;
  meta.batch = static_cast<unsigned>(o.batch);
  meta.io_s = o.io_ms / 1e3;
  meta.h2d_s = o.h2d_ms / 1e3;
  meta.update_s = o.update_ms / 1e3;
  if (csv)
    return workload::import_csv(read_file(file), file, workload::parse_csv_header(o.csv_header, "--csv-header"), meta);
  if (chakra) {
    std::vector<workload::ChakraFile> files;
    for (const auto& f : o.import_chakra)
      files.push_back({f, read_file(f)});
    workload::ChakraImport imported = workload::import_chakra(files, meta);
    notes = std::move(imported.notes);
    return std::move(imported.workload);
  }
  if (!vm.count("frequency-hz"))
    throw ConfigError("--import-astra needs --frequency-hz: ASTRA-sim 1.0 files give compute in cycles");
  check_finite(o.frequency_hz, false, "--frequency-hz");
  return workload::import_astra(read_file(file), file, o.frequency_hz, meta);
}

/** The files --export-chakra writes: PREFIX.0.et ... PREFIX.<N-1>.et. */
std::vector<std::string> chakra_paths(const WorkloadOptions& o)
{
  std::vector<std::string> paths;
  if (!o.export_chakra.empty())
    for (int r = 0; r < o.chakra_ranks; ++r)
      paths.push_back(o.export_chakra + "." + std::to_string(r) + ".et");
  return paths;
}

/** --export-chakra: the same trace for every rank, and a line saying what was written and rounded. */
void write_chakra(const proto::Workload& w, const std::vector<std::string>& paths, std::ostream& out)
{
  const workload::ChakraExport e = workload::export_chakra(w);
  for (const auto& p : paths)
    write_output_file(p, e.bytes);
  out << "wrote " << paths.front() << (paths.size() > 1 ? " ... " + paths.back() : "") << " (Chakra ET, "
      << paths.size() << (paths.size() > 1 ? " ranks, " : " rank, ") << w.layers_size() << " layers, "
      << workload::total_gradient_bytes(w) << " gradient bytes)\n";
  if (e.rounded > 0)
    out << "  " << e.rounded << " durations rounded to whole microseconds (Chakra's duration_micros), largest change "
        << format_double(e.max_change_s) << " s\n";
  out << "  io_s, h2d_s and update_s have no Chakra node: give them again with --io-ms, --h2d-ms, --update-ms when "
         "importing\n";
}

/** The model zoo and the roofline: check that no import option was given, then generate. */
proto::Workload generate_from_zoo(const WorkloadOptions& o, const po::variables_map& vm)
{
  for (const char* import_only : {"csv-header", "frequency-hz", "io-ms", "h2d-ms", "update-ms"})
    if (given(vm, import_only))
      throw ConfigError(std::string("--") + import_only +
                        " applies to --import-csv / --import-astra / --import-chakra only");
  check_finite(o.pcie_gbps, false, "--pcie-GBps");
  check_finite(o.decode_samples_per_s, true, "--decode-samples-per-s");
  workload::GenerateRequest request;
  request.model = o.model;
  request.gpu = o.gpu;
  request.batch = static_cast<unsigned>(o.batch);
  request.precision = workload::parse_precision(o.precision, "--precision");
  request.h2d_bytes_per_s = o.pcie_gbps * 1e9;
  request.decode_samples_per_s = o.decode_samples_per_s;
  return workload::generate_workload(request);
}

/** Text format on `out` without --output, else the file (JSON or text format) and a one-line summary. */
void write_workload(const proto::Workload& w, const std::string& output, bool json, std::ostream& out)
{
  if (output.empty() || output == kStandardOutput) {
    out << workload::to_textproto(w);
    return;
  }
  write_output_file(output, json ? workload::to_json(w) : workload::to_textproto(w));
  out << "wrote " << output << " (" << w.layers_size() << " layers, " << workload::total_gradient_bytes(w)
      << " gradient bytes)\n";
}

} // namespace

void workload_command(const std::vector<std::string>& args, std::ostream& out)
{
  WorkloadOptions o;
  po::options_description desc = workload_options(o);
  po::variables_map vm;
  if (!parse_options(args, desc, kWorkloadUsage, out, "workload", &vm))
    return;
  if (vm.count("calibration")) {
    print_calibration(out);
    return;
  }
  const bool json = output_is_json(o.output);
  if (given(vm, "chakra-ranks") && o.export_chakra.empty())
    throw ConfigError("--chakra-ranks applies to --export-chakra");
  if (o.chakra_ranks < 1 || o.chakra_ranks > 65536)
    throw ConfigError("--chakra-ranks must be in 1..65536 (got " + std::to_string(o.chakra_ranks) + ")");
  if (o.export_chakra == kStandardOutput)
    throw ConfigError("--export-chakra takes a file name prefix, not - (it writes one binary file per rank)");
  const std::vector<std::string> exports = chakra_paths(o);
  std::vector<NamedPath> outputs{{"--output", o.output}};
  for (const auto& p : exports)
    outputs.push_back({"--export-chakra", p});
  std::vector<NamedPath> inputs{{"--import-csv", o.import_csv}, {"--import-astra", o.import_astra}};
  for (const auto& f : o.import_chakra)
    inputs.push_back({"--import-chakra", f});
  check_outputs(outputs, inputs);
  if (o.batch < 1)
    throw ConfigError("--batch must be >= 1 (got " + std::to_string(o.batch) + ")");
  const bool import = !o.import_csv.empty() || !o.import_astra.empty() || !o.import_chakra.empty();
  std::vector<std::string> notes;
  const proto::Workload w = import ? import_workload(o, vm, notes) : generate_from_zoo(o, vm);
  // notes go with the summary lines, or to stderr when stdout carries the workload itself
  const bool workload_on_stdout = exports.empty() && (o.output.empty() || o.output == kStandardOutput);
  for (const auto& n : notes)
    (workload_on_stdout ? std::cerr : out) << "note: " << n << "\n";
  if (!exports.empty())
    write_chakra(w, exports, out);
  if (exports.empty() || !o.output.empty())
    write_workload(w, o.output, json, out);
}

} // namespace ddlsim::cli
