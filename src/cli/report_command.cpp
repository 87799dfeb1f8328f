// `ddlsim report`: a run's JSON report as one self-contained HTML page.
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "report/html.hpp"
#include "report/report_json.hpp"

#include <ostream>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

const char* const kReportUsage = R"(Usage: ddlsim report FILE.json --html OUT.html

Writes a run's JSON report (from 'ddlsim run --report FILE.json') as one self-contained HTML page, with no
external resources: the summary (iteration time, throughput, scaling efficiency), where one iteration's time
goes as a stacked bar, per aggregation the computation of its layers beside its communication hidden behind
computation and exposed, and the links (bytes carried, busy time, utilisation, the busiest first).
'--html -' writes the page to standard output.)";

} // namespace

void report_command(const std::vector<std::string>& args, std::ostream& out)
{
  std::string input, html;
  po::options_description desc("Options", kHelpColumns, kHelpDescriptionColumns);
  auto add = desc.add_options();
  add("report", po::value(&input)->required()->value_name("FILE"), "the JSON report (or the first word)");
  add("html", po::value(&html)->required()->value_name("FILE"), "the page to write (-: standard output)");
  add("help,h", "show this help");
  add("version", "show the version");
  std::vector<std::string> rest = args;
  if (!rest.empty() && rest[0].rfind("-", 0) != 0) // "ddlsim report r.json --html r.html"
    rest.insert(rest.begin(), "--report");
  if (!parse_options(rest, desc, kReportUsage, out, "report"))
    return;
  check_outputs({{"--html", html}}, {{"the report", input}});
  const proto::Report report = report::load_report_json(input); // every check before anything is written
  const std::string page = report::html_page(report, input);
  if (html == kStandardOutput)
    out << page;
  else
    write_output_file(html, page);
}

} // namespace ddlsim::cli
