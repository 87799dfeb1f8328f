// `ddlsim collective`: time one allreduce algorithm over message sizes, beside its closed form.
#include "cli/aggregation_options.hpp"
#include "cli/cli.hpp"
#include "cli/common_options.hpp"
#include "cli/measured_log.hpp"
#include "cli/options.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "engine/sweep.hpp"
#include "platform/cluster_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kCollectiveUsage =
    R"(Usage: ddlsim collective --platform FILE.xml | --cluster KEY=VALUE,... [--algorithm NAME] [--ranks N]
                         [--sizes MIN:MAX | -b MIN -e MAX] [--factor F | -f F] [options]

Times one allreduce of each message size on the chosen ranks (all ranks start together), the way
nccl-tests and the OSU micro-benchmarks do on real clusters, and prints beside it the closed-form
alpha-beta prediction from the platform's worst route. Bus bandwidth follows nccl-tests:
busbw = algbw x 2(n-1)/n. With --compare, sizes come from a measured log (OSU's plain or -f output, nccl-tests'
out-of-place time, or CSV) and the table adds the measurement and the relative error.)";

struct CollectiveOptionsCli {
  std::string platform;
  std::string cluster;
  std::string minbytes, maxbytes; ///< nccl-tests' -b / -e
  double stepfactor = 0;          ///< nccl-tests' -f (0: not given)
  int ranks = 0;
  std::string hosts;
  AggregationCli aggregation;
  std::string sizes = "4B:128MiB";
  double factor = 2;
  std::string compare;
  std::string compare_format = "auto";
  double fail_above = -1;
  std::string csv;
  std::string format = "table";
  bool quiet = false;
  std::vector<std::string> simgrid_cfg;
};

/** At most this many sizes in one sweep, from --sizes or from a --compare log (docs/limits.md). */
constexpr std::size_t kMaxSizes = 1000;

/** A size with ddlsim's units (parse_bytes) or nccl-tests' one-letter suffixes K, M, G (binary: 128M = 128 MiB, as
 *  nccl-tests' parsesize in src/common.cu reads them, also lower case). A unit is required except for 0. */
std::uint64_t parse_size(const std::string& text, const std::string& what)
{
  static const std::map<char, const char*> nccl_tests = {{'K', "KiB"}, {'k', "KiB"}, {'M', "MiB"},
                                                         {'m', "MiB"}, {'G', "GiB"}, {'g', "GiB"}};
  if (text.size() >= 2 && nccl_tests.count(text.back()) && std::isdigit(static_cast<unsigned char>(text.end()[-2])))
    return parse_bytes(text.substr(0, text.size() - 1) + nccl_tests.at(text.back()), what);
  return parse_bytes(text, what);
}

/** Sizes MIN, MIN*factor, ... up to MAX (MAX included even if the factor skips it). */
std::vector<std::uint64_t> size_range(const std::string& spec, double factor)
{
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw ConfigError("--sizes must be MIN:MAX, e.g. 4B:1GiB (got '" + spec + "')");
  const auto lo = parse_size(spec.substr(0, colon), "--sizes");
  const auto hi = parse_size(spec.substr(colon + 1), "--sizes");
  if (lo == 0 || lo > hi)
    throw ConfigError("--sizes: need 0 < MIN <= MAX (got '" + spec + "')");
  if (!(factor > 1) || !std::isfinite(factor))
    throw ConfigError("--factor must be > 1 (got " + format_double(factor) + ")");
  // Bounded up front (each size is one simulation): refuse a range that asks for more than kMaxSizes.
  if (std::log(double(hi) / double(lo)) / std::log(factor) + 1 > double(kMaxSizes) + 0.5)
    throw ConfigError("--sizes " + spec + " with --factor " + format_double(factor) + " gives more than " +
                      std::to_string(kMaxSizes) + " sizes (raise --factor or narrow --sizes)");
  std::vector<std::uint64_t> sizes;
  for (double s = double(lo); s <= double(hi) && sizes.size() < kMaxSizes; s *= factor) {
    const auto b = static_cast<std::uint64_t>(std::llround(s));
    if (sizes.empty() || b != sizes.back())
      sizes.push_back(b);
  }
  if (sizes.back() != hi)
    sizes.push_back(hi);
  return sizes;
}

po::options_description collective_options(CollectiveOptionsCli& o)
{
  po::options_description input("Input", kHelpColumns, kHelpDescriptionColumns);
  auto add_input = input.add_options();
  add_input("platform", po::value(&o.platform)->value_name("FILE"), "SimGrid platform XML");
  add_input("cluster", po::value(&o.cluster)->value_name("KEY=VALUE,..."),
            "instead of --platform: a generated cluster built in memory, keys as 'ddlsim run --cluster'");
  add_rank_options(input, o.ranks, o.hosts);
  po::options_description sizes("Sizes", kHelpColumns, kHelpDescriptionColumns);
  auto add_sizes = sizes.add_options();
  add_sizes("sizes", po::value(&o.sizes)->default_value(o.sizes)->value_name("MIN:MAX"),
            "message sizes, each with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; 0 needs none)");
  add_sizes("factor", po::value(&o.factor)->default_value(o.factor)->value_name("F"),
            "multiply the size by F between rows");
  add_sizes("minbytes,b", po::value(&o.minbytes)->value_name("SIZE"),
            "nccl-tests' -b: the smallest size (with -e, instead of --sizes); K, M, G are KiB, MiB, GiB");
  add_sizes("maxbytes,e", po::value(&o.maxbytes)->value_name("SIZE"), "nccl-tests' -e: the largest size");
  add_sizes("stepfactor,f", po::value(&o.stepfactor)->value_name("F"), "nccl-tests' -f: the same as --factor");
  add_sizes("compare", po::value(&o.compare)->value_name("FILE"),
            "take the sizes from a measured log and compare: OSU's plain or -f output, nccl-tests' or CSV");
  add_sizes("compare-format", po::value(&o.compare_format)->default_value(o.compare_format)->value_name("NAME"),
            "the --compare log's format: auto (by its header lines), osu, nccl-tests, csv");
  add_sizes("fail-above", po::value(&o.fail_above)->value_name("FRACTION"),
            "with --compare: fail if the median relative error exceeds FRACTION");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
  add_output("format", po::value(&o.format)->default_value(o.format)->value_name("NAME"),
             "table (ddlsim's columns) | nccl-tests (all_reduce_perf's out-of-place columns, and the algorithm)");
  add_output("csv", po::value(&o.csv)->value_name("FILE"), "also write the table as CSV");
  add_output("quiet,q", po::bool_switch(&o.quiet), "no progress lines on stderr");
  add_output("help,h", "show this help");
  add_output("version", "show the version");
  po::options_description all("", kHelpColumns, kHelpDescriptionColumns);
  all.add(input).add(aggregation_options(o.aggregation)).add(sizes).add(output).add(simgrid_options(o.simgrid_cfg));
  return all;
}

/** The sweep to run, checked before anything is simulated; `measured` receives the --compare log. */
engine::SweepInput sweep_input(const CollectiveOptionsCli& o, std::vector<Measurement>& measured)
{
  engine::SweepInput in;
  if (o.platform.empty() == o.cluster.empty())
    throw ConfigError("collective: give exactly one of --platform and --cluster");
  in.platform_file = o.platform;
  if (!o.cluster.empty()) {
    in.cluster = platform::parse_cluster_string(o.cluster);
    in.platform_file = "cluster:" + platform::to_cluster_string(*in.cluster);
  }
  const Aggregation aggregation = resolve(o.aggregation);
  in.algorithm = aggregation.algorithm;
  in.collective = aggregation.options;
  in.ranks = checked_ranks(o.ranks);
  in.hosts = parse_host_list(o.hosts, "--hosts");
  in.simgrid_cfg = o.simgrid_cfg;
  if (!std::isfinite(o.fail_above) || (o.fail_above < 0 && o.fail_above != -1))
    throw ConfigError("--fail-above must be a finite number >= 0 (got " + format_double(o.fail_above) + ")");
  if (o.fail_above >= 0 && o.compare.empty())
    throw ConfigError("--fail-above needs --compare");
  if (std::find(compare_formats().begin(), compare_formats().end(), o.compare_format) == compare_formats().end())
    throw ConfigError("--compare-format must be one of " + join(compare_formats()) + " (got '" + o.compare_format +
                      "')");
  if (o.format != "table" && o.format != "nccl-tests")
    throw ConfigError("--format must be table or nccl-tests (got '" + o.format + "')");
  if (o.format == "nccl-tests" && !o.compare.empty())
    throw ConfigError("--format nccl-tests has no measured column: give --compare with the table format");
  if (o.compare_format != CollectiveOptionsCli().compare_format && o.compare.empty())
    throw ConfigError("--compare-format needs --compare");
  const bool nccl_range = !o.minbytes.empty() || !o.maxbytes.empty();
  if (nccl_range && (o.minbytes.empty() || o.maxbytes.empty()))
    throw ConfigError(
        std::string(o.minbytes.empty() ? "-e/--maxbytes needs -b/--minbytes" : "-b/--minbytes needs -e/--maxbytes"));
  if (nccl_range && o.sizes != CollectiveOptionsCli().sizes)
    throw ConfigError("give either --sizes or -b/-e, not both");
  if (o.stepfactor != 0 && o.factor != CollectiveOptionsCli().factor)
    throw ConfigError("give either --factor or -f/--stepfactor, not both");
  if ((nccl_range || o.stepfactor != 0) && !o.compare.empty())
    throw ConfigError("-b/-e/-f need no --compare: the sizes come from the log");
  if (nccl_range) { // each named by its own flag (the range below re-reads them)
    parse_size(o.minbytes, "-b/--minbytes");
    parse_size(o.maxbytes, "-e/--maxbytes");
  }
  const std::string sizes = nccl_range ? o.minbytes + ":" + o.maxbytes : o.sizes;
  const double factor = o.stepfactor != 0 ? o.stepfactor : o.factor;
  if (!o.compare.empty()) {
    measured = parse_measurements(read_file(o.compare), o.compare, o.compare_format, kMaxSizes);
    for (const auto& m : measured)
      in.sizes.push_back(m.bytes);
  } else {
    in.sizes = size_range(sizes, factor);
  }
  check_outputs({{"--csv", o.csv}}, {{"--platform", o.platform}, {"--compare", o.compare}}); // before simulating
  return in;
}

void check_process_counts(const std::vector<Measurement>& measured, const std::string& log, int ranks)
{
  for (const auto& m : measured)
    if (!m.processes.empty() && m.processes != std::to_string(ranks))
      throw InputError(log + ": line " + std::to_string(m.line) + ": measured on " + m.processes +
                       " processes, but the simulation has " + std::to_string(ranks) + " ranks (set --ranks " +
                       m.processes + ")");
}

void print_header(std::ostream& out, const engine::SweepInput& in, const engine::SweepOutput& sweep, bool compare)
{
  const auto& hop = sweep.closed_form.hops.flat;
  char buf[256];
  out << "ddlsim collective: " << in.algorithm.label() << " allreduce on " << sweep.hosts.size() << " ranks ("
      << in.platform_file << ")\n";
  std::snprintf(buf, sizeof buf,
                "  worst route: alpha = %s, B = %.4g GB/s; overhead o = %s per message, reduce gamma = %s per byte\n",
                format_seconds(hop.alpha_s).c_str(), hop.bandwidth_bytes_per_s / 1e9,
                format_seconds(in.collective.msg_overhead_s).c_str(),
                format_seconds(in.collective.reduce_s_per_byte).c_str());
  out << buf << "  closed form: " << collectives::formula(in.algorithm)
      << "\n  (assumes no two transfers share a link: sim/closed > 1 measures the contention the platform adds)\n\n";
  std::snprintf(buf, sizeof buf, "%14s %14s %13s %13s %17s %11s%s\n", "size (B)", "time (us)", "algbw (GB/s)",
                "busbw (GB/s)", "closed form (us)", "sim/closed", compare ? "  measured (us)  rel. error" : "");
  out << buf;
}

/** Prints the table, returns the CSV text; `errors` receives |relative error| per measured size. */
std::string print_rows(std::ostream& out, const engine::SweepInput& in, const engine::SweepOutput& sweep,
                       const std::vector<Measurement>& measured, std::vector<double>& errors)
{
  const int p = static_cast<int>(sweep.hosts.size());
  const bool cmp = !measured.empty();
  char buf[256];
  std::ostringstream csv;
  csv << "bytes,time_us,algbw_GBps,busbw_GBps,closed_form_us" << (cmp ? ",measured_us,relative_error" : "") << "\n";
  for (std::size_t k = 0; k < sweep.points.size(); ++k) {
    const auto& pt = sweep.points[k];
    const double algbw = pt.time_s > 0 ? double(pt.bytes) / pt.time_s / 1e9 : 0.0;
    const double busbw = algbw * 2.0 * (p - 1) / p;
    double closed = -1;
    try {
      closed = collectives::closed_form_s(in.algorithm, pt.bytes, sweep.closed_form);
    } catch (const ConfigError&) { // this setup has no closed form: the column shows '-'
    }
    std::snprintf(buf, sizeof buf, "%14llu %14.3f %13.4f %13.4f", static_cast<unsigned long long>(pt.bytes),
                  pt.time_s * 1e6, algbw, busbw);
    out << buf;
    if (closed > 0)
      std::snprintf(buf, sizeof buf, " %17.3f %11.6f", closed * 1e6, pt.time_s / closed);
    else
      std::snprintf(buf, sizeof buf, " %17s %11s", "-", "-");
    out << buf;
    csv << pt.bytes << "," << format_double(pt.time_s * 1e6) << "," << format_double(algbw) << ","
        << format_double(busbw) << "," << (closed > 0 ? format_double(closed * 1e6) : std::string());
    if (cmp) {
      const double m = measured[k].seconds;
      const double e = (pt.time_s - m) / m;
      errors.push_back(std::fabs(e));
      std::snprintf(buf, sizeof buf, "  %13.2f  %+9.1f %%", m * 1e6, 100 * e);
      out << buf;
      csv << "," << format_double(m * 1e6) << "," << format_double(e);
    }
    out << "\n";
    csv << "\n";
  }
  return csv.str();
}

/** Prints the median error; throws Error when it exceeds `fail_above` (>= 0). */
void check_median_error(std::ostream& out, std::vector<double> errors, double fail_above)
{
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  const double median = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  char buf[200];
  std::snprintf(buf, sizeof buf, "\n  median |simulated - measured| / measured: %.2f %% over %zu sizes (max %.1f %%)\n",
                100 * median, n, 100 * errors.back());
  out << buf;
  if (fail_above >= 0 && median > fail_above) {
    std::snprintf(buf, sizeof buf, "median relative error %.4f exceeds --fail-above %.4f", median, fail_above);
    throw Error(buf);
  }
}

/** The algorithm (and for `nccl` the protocol) that runs an allreduce of `bytes`: "tree/LL128", "ring", "hd". */
std::string algorithm_of(const engine::SweepInput& in, const engine::SweepOutput& sweep, std::uint64_t bytes)
{
  const int p = static_cast<int>(sweep.hosts.size());
  const collectives::AlgorithmId id = in.algorithm.for_size(bytes, p);
  if (id != collectives::AlgorithmId::Nccl)
    return collectives::entry(id).name;
  const collectives::NcclChoice c = collectives::nccl_choose(sweep.closed_form.nccl.topology, bytes);
  return std::string(collectives::to_string(c.algo)) + "/" + collectives::to_string(c.proto);
}

/** nccl-tests' time column: "%7.2f" us, fewer decimals as it grows (src/common.cu). */
std::string nccl_tests_time(double us)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 1e6 ? "%7.0f" : us >= 1e5 ? "%7.1f" : "%7.2f", us);
  return buf;
}

/** The out-of-place block of nccl-tests' all_reduce_perf (float, sum, root -1, #wrong N/A: nothing is validated),
 *  with the algorithm of each row after it; the header and summary as '#' lines, as nccl-tests prints them. */
void print_nccl_tests(std::ostream& out, const engine::SweepInput& in, const engine::SweepOutput& sweep)
{
  const int p = static_cast<int>(sweep.hosts.size());
  char buf[256];
  out << "# ddlsim collective: " << in.algorithm.label() << " allreduce on " << p << " ranks (" << in.platform_file
      << "), nccl-tests' all_reduce_perf columns\n#\n";
  std::snprintf(buf, sizeof buf, "#%62s\n", "out-of-place");
  out << buf;
  std::snprintf(buf, sizeof buf, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %s\n", "size", "count", "type",
                "redop", "root", "time", "algbw", "busbw", "#wrong", "algorithm");
  out << buf;
  std::snprintf(buf, sizeof buf, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)",
                "(GB/s)", "(GB/s)");
  out << buf;
  double busbw_sum = 0;
  for (const auto& pt : sweep.points) {
    const double algbw = pt.time_s > 0 ? double(pt.bytes) / pt.time_s / 1e9 : 0.0;
    const double busbw = algbw * 2.0 * (p - 1) / p;
    busbw_sum += busbw;
    std::snprintf(buf, sizeof buf, "%12llu  %12llu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6s  %s\n",
                  static_cast<unsigned long long>(pt.bytes), static_cast<unsigned long long>(pt.bytes / 4), "float",
                  "sum", -1, nccl_tests_time(pt.time_s * 1e6).c_str(), algbw, busbw, "N/A",
                  algorithm_of(in, sweep, pt.bytes).c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %g \n#\n",
                sweep.points.empty() ? 0.0 : busbw_sum / double(sweep.points.size()));
  out << buf;
}

} // namespace

void collective_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  CollectiveOptionsCli o;
  if (!parse_options(args, collective_options(o), kCollectiveUsage, out, "collective"))
    return;
  std::vector<Measurement> measured;
  engine::SweepInput in = sweep_input(o, measured);
  in.check_hosts = [&](const std::vector<std::string>& hosts) { // before simulating
    check_process_counts(measured, o.compare, static_cast<int>(hosts.size()));
  };
  const ProgressLines progress(err, o.quiet);
  if (!progress.quiet())
    in.progress = [&](std::size_t k, double time_s) {
      progress.print("size " + std::to_string(k + 1) + "/" + std::to_string(in.sizes.size()) + " (" +
                     format_bytes(double(in.sizes[k])) + ") done: " + format_seconds(time_s) + " simulated");
    };
  const engine::SweepOutput sweep = engine::run_collective_sweep(in);

  std::vector<double> errors;
  std::ostringstream table;     // with --format nccl-tests the table only gives the CSV
  std::ostringstream discarded; // with --csv -, standard output carries the CSV alone
  const bool csv_to_stdout = o.csv == kStandardOutput;
  std::ostream& text = csv_to_stdout ? discarded : out;
  std::ostream& rows = o.format == "table" ? text : table;
  if (o.format == "table")
    print_header(text, in, sweep, !measured.empty());
  const std::string csv = print_rows(rows, in, sweep, measured, errors);
  if (o.format == "nccl-tests")
    print_nccl_tests(text, in, sweep);
  if (csv_to_stdout)
    out << csv;
  else if (!o.csv.empty())
    write_output_file(o.csv, csv);
  if (!measured.empty())
    check_median_error(text, errors, o.fail_above);
}

} // namespace ddlsim::cli
