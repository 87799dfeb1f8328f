// Fuzz target: JSON reports read back for `ddlsim report` (report::parse_report_json: the UTF-8 and duplicate-key
// scans, the key check on a protobuf Value tree, then the Report parse and the value checks), and the HTML page of
// every report it accepts.
#include "common/json.hpp"
#include "fuzz_common.hpp"
#include "report/html.hpp"
#include "report/report_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& text) {
    const auto r = ddlsim::report::parse_report_json(text, "fuzz.json");
    ddlsim::report::html_page(r, "fuzz.json");
    ddlsim::report::parse_report_json(ddlsim::message_to_json(r), "again.json"); // what it accepts writes back
  });
}
