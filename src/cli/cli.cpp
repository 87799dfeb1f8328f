// Command-line front end: top-level help and version, option parsing shared by subcommands.
#include "cli/cli.hpp"

#include "cli/flags.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "engine/version.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kUsage = R"(ddlsim: simulate data-parallel deep-learning training on a SimGrid cluster.

Usage: ddlsim <command> [options]
       ddlsim --help | --version

Commands:
  run        simulate S-SGD iterations of a workload on a platform and report time, throughput, scaling
  collective time one allreduce algorithm over a range of message sizes (like nccl-tests / OSU)
  workload   generate a layer-wise workload file from the model zoo and a calibration point
  platform   generate a cluster platform file (nodes x GPUs over PCIe/NVLink, Ethernet/InfiniBand)
  sweep      run a grid of runs (lists of option values) into a CSV, locally (--jobs) or as a Slurm job array
  plot       draw scaling, collective or breakdown charts (SVG, PNG) from a sweep or collective CSV, or
             per-layer communication hidden versus exposed from a run's JSON report
  report     write a run's JSON report as one self-contained HTML page (summary, charts, link table)

Run 'ddlsim <command> --help' for a command's options.
)";

} // namespace

std::string version_string()
{
  return std::string("ddlsim ") + DDLSIM_VERSION + " (SimGrid " + engine::simgrid_version() + ")";
}

bool parse_options(const std::vector<std::string>& args, const po::options_description& desc, const std::string& usage,
                   std::ostream& out, const std::string& command, po::variables_map* parsed)
{
  po::variables_map vm;
  try {
    const po::parsed_options parsed_args = po::command_line_parser(args).options(desc).run();
    for (const auto& option : parsed_args.options) // Boost keeps words no option takes, and store() drops them
      if (option.position_key >= 0 || option.string_key.empty())
        throw ConfigError(command + ": unexpected word '" + join(option.original_tokens, " ") +
                          "' (every value belongs to an option; see 'ddlsim " + command + " --help')");
    po::store(parsed_args, vm);
    if (vm.count("help")) {
      out << usage << "\n" << desc << "\n";
      return false;
    }
    if (vm.count("version")) {
      out << version_string() << "\n";
      return false;
    }
    po::notify(vm);
    if (parsed)
      *parsed = vm;
  } catch (const po::error& e) {
    throw ConfigError(command + ": " + e.what() + " (see 'ddlsim " + command + " --help')");
  }
  return true;
}

std::vector<std::string> parse_host_list(const std::string& text, const std::string& option)
{
  std::vector<std::string> hosts;
  if (text.empty())
    return hosts;
  for (const auto& h : split(text, ',')) {
    if (h.empty())
      throw ConfigError(option + ": empty host name in '" + text + "'");
    hosts.push_back(h);
  }
  return hosts;
}

void check_output_path(const std::string& path, const std::string& option)
{
  if (path.empty())
    return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(option + " " + path + ": is a directory, expected a file name");
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw ConfigError(option + " " + path + ": directory '" + parent.string() + "' does not exist");
}

namespace {

/** Whether `a` and `b` name the same file: the same normalised path, or (both existing) the same device and inode
 *  (hard links, symbolic links, "./x" and "x"). */
bool same_file(const std::string& a, const std::string& b)
{
  std::error_code ec;
  const auto na = std::filesystem::absolute(a, ec).lexically_normal();
  const auto nb = std::filesystem::absolute(b, ec).lexically_normal();
  if (na == nb)
    return true;
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/** Creates and removes a temporary file beside `path`, as write_output_file() will: WriteError when it cannot. */
void probe_writable(const NamedPath& out)
{
  const auto parent = std::filesystem::path(out.path).parent_path();
  const std::string probe =
      (parent.empty() ? std::string() : parent.string() + "/") + ".ddlsim-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw WriteError(out.option + " " + out.path + ": cannot be written (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

} // namespace

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs)
{
  const NamedPath* to_stdout = nullptr; // "-": standard output, for one output at most
  for (const auto& out : outputs)
    if (out.path == kStandardOutput) {
      if (to_stdout != nullptr)
        throw ConfigError(out.option + " - and " + to_stdout->option + " -: only one output can go to standard output");
      to_stdout = &out;
    }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty() || out.path == kStandardOutput)
      continue;
    check_output_path(out.path, out.option);
    for (const auto& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw ConfigError(out.option + " " + out.path + ": is the same file as " + in.option + " " + in.path +
                          " (refusing to overwrite an input)");
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw ConfigError(out.option + " " + out.path + ": is the same file as " + outputs[j].option + " " +
                          outputs[j].path);
  }
  for (const auto& out : outputs)
    if (!out.path.empty() && out.path != kStandardOutput)
      probe_writable(out);
}

namespace {

void run_subcommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  if (args.empty())
    throw ConfigError("no command given (try 'ddlsim --help')");
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--help" || command == "-h" || command == "help") {
    out << kUsage;
  } else if (command == "--version" || command == "-V") {
    out << version_string() << "\n";
  } else if (command == "run") {
    run_command(rest, out, err);
  } else if (command == "collective") {
    collective_command(rest, out, err);
  } else if (command == "workload") {
    workload_command(rest, out);
  } else if (command == "platform") {
    platform_command(rest, out);
  } else if (command == "sweep") {
    sweep_command(rest, out, err);
  } else if (command == "plot") {
    plot_command(rest, out);
  } else if (command == "report") {
    report_command(rest, out);
  } else {
    throw ConfigError("unknown command '" + command +
                      "' (commands: run, collective, workload, platform, sweep, plot, report; try 'ddlsim --help')");
  }
}

} // namespace

void dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  try {
    run_subcommand(args, out, err);
  } catch (const ConfigError& e) { // the library names its fields; a user of the command line typed flags
    throw ConfigError(with_flags(e.message_template()));
  }
}

} // namespace ddlsim::cli
