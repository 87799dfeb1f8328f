// `ddlsim plot`: check the options, then hand over to scripts/plot.py (Debian's python3-matplotlib).
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <ostream>
#include <unistd.h>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kPlotUsage =
    R"(Usage: ddlsim plot scaling|collective|breakdown --csv FILE -o OUT.svg|OUT.png [--series COL,...] [--title T]
       ddlsim plot layers --report FILE.json -o OUT.svg|OUT.png [--title T]

Draws a chart from a CSV or a report that ddlsim wrote, with scripts/plot.py and matplotlib (Debian:
python3-matplotlib):
  scaling     from a 'ddlsim sweep' CSV: scaling efficiency and throughput versus GPUs, one line per series
  collective  from 'ddlsim collective --csv' (or 'ddlsim sweep --collective'): bus bandwidth and time versus
              message size; a CSV made with --compare adds the measured curve
  breakdown   from a 'ddlsim sweep' CSV: where one iteration's time goes, one stacked bar per row
  layers      from a run's JSON report ('ddlsim run --report'): per aggregation (per layer under wfbp), its
              communication hidden behind backward and exposed, above the computation of its layers
A series is one combination of the key columns (the columns before the results) other than those that set
the GPU count (ranks, cluster.nodes, cluster.gpus-per-node); --series names them instead. SVG or PNG by
the extension of -o.)";

struct PlotOptions {
  std::string kind;   ///< scaling | collective | breakdown | layers
  std::string csv;    ///< input CSV (scaling, collective, breakdown)
  std::string report; ///< input JSON report (layers)
  std::string output; ///< .svg or .png
  std::string series; ///< comma-separated key columns (empty: chosen from the CSV)
  std::string title;  ///< chart title (empty: from the CSV's name)
};

bool ends_with(const std::string& s, const std::string& suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/** The environment variable `name`, or `fallback` when unset or empty. */
std::string env_or(const char* name, const char* fallback)
{
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

} // namespace

void plot_command(const std::vector<std::string>& args, std::ostream& out)
{
  PlotOptions o;
  po::options_description desc("Options", kHelpColumns, kHelpDescriptionColumns);
  auto add = desc.add_options();
  add("kind", po::value(&o.kind)->value_name("KIND"), "scaling | collective | breakdown | layers (or the first word)");
  add("csv", po::value(&o.csv)->value_name("FILE"), "the CSV to draw (scaling, collective, breakdown)");
  add("report", po::value(&o.report)->value_name("FILE"), "the JSON report to draw (layers)");
  add("output,o", po::value(&o.output)->required()->value_name("FILE"), "the chart, .svg or .png");
  add("series", po::value(&o.series)->value_name("COL,..."), "key columns that make a series");
  add("title", po::value(&o.title)->value_name("TEXT"), "chart title");
  add("help,h", "show this help");
  add("version", "show the version");
  std::vector<std::string> rest = args;
  if (!rest.empty() && rest[0].rfind("-", 0) != 0) { // "ddlsim plot scaling ..."
    rest.insert(rest.begin(), "--kind");
  }
  if (!parse_options(rest, desc, kPlotUsage, out, "plot"))
    return;
  if (o.kind != "scaling" && o.kind != "collective" && o.kind != "breakdown" && o.kind != "layers")
    throw ConfigError("plot: the kind must be scaling, collective, breakdown or layers (got '" + o.kind + "')");
  const bool from_report = o.kind == "layers";
  if (from_report && (o.report.empty() || !o.csv.empty()))
    throw ConfigError("plot layers: draws from a run's JSON report: give --report FILE.json (not --csv)");
  if (!from_report && (o.csv.empty() || !o.report.empty()))
    throw ConfigError("plot " + o.kind + ": draws from a CSV: give --csv FILE (--report is for 'plot layers')");
  if (from_report && !o.series.empty())
    throw ConfigError("plot layers: --series has no effect on a layers chart");
  if (!ends_with(o.output, ".svg") && !ends_with(o.output, ".png"))
    throw ConfigError("plot: -o " + o.output + ": the chart is written as SVG or PNG, by its extension (.svg, .png)");
  const NamedPath input = from_report ? NamedPath{"--report", o.report} : NamedPath{"--csv", o.csv};
  if (!readable_file(input.path))
    throw InputError(input.option + " " + input.path + ": cannot be read (" + std::strerror(errno) + ")");
  check_outputs({{"-o", o.output}}, {input});
  // /usr/bin/python3 by default: Debian's python3-matplotlib belongs to it, whatever `python3` is first on PATH
  const std::string python = env_or("DDLSIM_PYTHON", "/usr/bin/python3");
  const std::string script = env_or("DDLSIM_PLOT_SCRIPT", DDLSIM_PLOT_SCRIPT);
  if (::access(python.c_str(), X_OK) != 0)
    throw ConfigError("plot needs " + python + " with matplotlib (Debian: apt-get install python3-matplotlib)");
  if (!readable_file(script))
    throw ConfigError("plot: " + script + " is missing (set DDLSIM_PLOT_SCRIPT to scripts/plot.py)");
  std::vector<std::string> argv = {python, script, o.kind, input.path, o.output, o.series, o.title};
  std::vector<char*> c_argv;
  for (auto& a : argv)
    c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  out.flush();
  std::cout.flush();
  ::execv(c_argv[0], c_argv.data()); // its exit code and its one-line errors are ddlsim plot's
  throw ConfigError("plot: cannot run " + python + " (" + std::strerror(errno) + ")");
}

} // namespace ddlsim::cli
