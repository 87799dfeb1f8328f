// `ddlsim collective`: time one allreduce algorithm over message sizes, beside its closed form.
#include "cli/aggregation_options.hpp"
#include "cli/cli.hpp"
#include "cli/common_options.hpp"
#include "cli/options.hpp"
#include "cli/osu_log.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "engine/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kCollectiveUsage =
    R"(Usage: ddlsim collective --platform FILE.xml [--algorithm NAME] [--ranks N] [--sizes MIN:MAX] [options]

Times one allreduce of each message size on the chosen ranks (all ranks start together), the way
nccl-tests and the OSU micro-benchmarks do on real clusters, and prints beside it the closed-form
alpha-beta prediction from the platform's worst route. Bus bandwidth follows nccl-tests:
busbw = algbw x 2(n-1)/n. With --compare, sizes come from a measured OSU-style log and the table adds
the measurement and the relative error.)";

struct CollectiveOptionsCli {
  std::string platform;
  int ranks = 0;
  std::string hosts;
  AggregationCli aggregation;
  std::string sizes = "4B:128MiB";
  double factor = 2;
  std::string compare;
  double fail_above = -1;
  std::string csv;
  bool quiet = false;
  std::vector<std::string> simgrid_cfg;
};

/** At most this many sizes in one sweep, from --sizes or from a --compare log (docs/limits.md). */
constexpr std::size_t kMaxSizes = 1000;

/** Sizes MIN, MIN*factor, ... up to MAX (MAX included even if the factor skips it). */
std::vector<std::uint64_t> size_range(const std::string& spec, double factor)
{
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw ConfigError("--sizes must be MIN:MAX, e.g. 4B:1GiB (got '" + spec + "')");
  const auto lo = parse_bytes(spec.substr(0, colon), "--sizes");
  const auto hi = parse_bytes(spec.substr(colon + 1), "--sizes");
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
  add_input("platform", po::value(&o.platform)->required()->value_name("FILE"), "SimGrid platform XML");
  add_rank_options(input, o.ranks, o.hosts);
  po::options_description sizes("Sizes", kHelpColumns, kHelpDescriptionColumns);
  auto add_sizes = sizes.add_options();
  add_sizes("sizes", po::value(&o.sizes)->default_value(o.sizes)->value_name("MIN:MAX"),
            "message sizes, each with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; 0 needs none)");
  add_sizes("factor", po::value(&o.factor)->default_value(o.factor)->value_name("F"),
            "multiply the size by F between rows");
  add_sizes("compare", po::value(&o.compare)->value_name("FILE"),
            "take the sizes from a measured OSU-style log (SIZE LATENCY_US per line) and compare");
  add_sizes("fail-above", po::value(&o.fail_above)->value_name("FRACTION"),
            "with --compare: fail if the median relative error exceeds FRACTION");
  po::options_description output("Output", kHelpColumns, kHelpDescriptionColumns);
  auto add_output = output.add_options();
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
  in.platform_file = o.platform;
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
  if (!o.compare.empty()) {
    measured = parse_osu_log(read_file(o.compare), o.compare, kMaxSizes);
    for (const auto& m : measured)
      in.sizes.push_back(m.bytes);
  } else {
    in.sizes = size_range(o.sizes, o.factor);
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

void print_header(std::ostream& out, const CollectiveOptionsCli& o, const engine::SweepInput& in,
                  const engine::SweepOutput& sweep, bool compare)
{
  const auto& hop = sweep.closed_form.hops.flat;
  char buf[256];
  out << "ddlsim collective: " << in.algorithm.label() << " allreduce on " << sweep.hosts.size() << " ranks ("
      << o.platform << ")\n";
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

} // namespace

void collective_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  CollectiveOptionsCli o;
  if (!parse_options(args, collective_options(o), kCollectiveUsage, out, "collective"))
    return;
  std::vector<Measurement> measured;
  engine::SweepInput in = sweep_input(o, measured);
  const ProgressLines progress(err, o.quiet);
  if (!progress.quiet())
    in.progress = [&](std::size_t k, double time_s) {
      progress.print("size " + std::to_string(k + 1) + "/" + std::to_string(in.sizes.size()) + " (" +
                     format_bytes(double(in.sizes[k])) + ") done: " + format_seconds(time_s) + " simulated");
    };
  const engine::SweepOutput sweep = engine::run_collective_sweep(in);
  check_process_counts(measured, o.compare, static_cast<int>(sweep.hosts.size()));

  print_header(out, o, in, sweep, !measured.empty());
  std::vector<double> errors;
  const std::string csv = print_rows(out, in, sweep, measured, errors);
  if (!o.csv.empty())
    write_output_file(o.csv, csv);
  if (!measured.empty())
    check_median_error(out, errors, o.fail_above);
}

} // namespace ddlsim::cli
