// Unit tests: `ddlsim report --html`: the JSON report read back (every check names the file and the field), and the
// page: the report's numbers in it, chart geometry worked out by hand, every string escaped, nothing external.
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"
#include "report/html.hpp"
#include "report/report_json.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ddlsim;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

/** A hand-made report: 4 GPUs, iteration 0.2 s = 0.01 h2d + 0.05 forward + 0.1 backward + 0.01 update + 0.03
 *  exposed; two aggregations (0.04 s, 0.01 of it exposed; 0.02 s, 0.02 exposed); two links. */
proto::Report toy()
{
  proto::Report r;
  r.set_schema_version(1);
  auto* c = r.mutable_config();
  c->set_platform_file("toy.xml");
  c->set_workload_file("toy.textproto");
  c->set_algorithm("ring");
  c->set_schedule("wfbp");
  c->set_iterations(3);
  r.set_model("toy");
  r.set_gpu("P40");
  r.set_gpus(4);
  r.set_batch_size_per_gpu(16);
  r.set_iteration_time_s(0.2);
  r.set_throughput_samples_per_s(4 * 16 / 0.2); // 320 samples/s
  r.set_single_gpu_iteration_time_s(0.16);
  r.set_single_gpu_throughput_samples_per_s(16 / 0.16); // 100 samples/s
  r.set_speedup(3.2);
  r.set_scaling_efficiency(0.8);
  r.set_measured_iterations(2);
  auto* b = r.mutable_breakdown();
  b->set_h2d_s(0.01);
  b->set_forward_s(0.05);
  b->set_backward_s(0.1);
  b->set_update_s(0.01);
  b->set_communication_s(0.06);
  b->set_exposed_communication_s(0.03);
  r.set_gradient_bytes(3 << 20);
  r.set_bytes_sent_per_iteration(9 << 20);
  r.set_aggregations_per_iteration(2);
  for (const char* name : {"conv", "relu", "fc"}) {
    auto* l = r.add_layers();
    l->set_name(name);
    l->set_forward_s(std::string(name) == "relu" ? 0.01 : 0.02);
    l->set_backward_s(std::string(name) == "relu" ? 0.02 : 0.04);
    l->set_gradient_bytes(std::string(name) == "relu" ? 0 : 1 << 20);
  }
  auto* fc = r.add_aggregations(); // last layer first
  fc->add_layers("fc");
  fc->set_bytes(1 << 20);
  fc->set_start_s(0.1);
  fc->set_time_s(0.04);
  fc->set_exposed_s(0.01);
  auto* conv = r.add_aggregations();
  conv->add_layers("conv");
  conv->set_bytes(2 << 20);
  conv->set_start_s(0.17);
  conv->set_time_s(0.02);
  conv->set_exposed_s(0.02);
  for (int i = 0; i < 2; ++i) {
    auto* l = r.add_links();
    l->set_name(i == 0 ? "node0-nic0_UP" : "node0-gpu0-pcie_UP");
    l->set_link_class(i == 0 ? "nodeN-nicN_UP" : "nodeN-gpuN-pcie_UP");
    l->set_bandwidth_bytes_per_s(i == 0 ? 1.25e9 : 15.754e9);
    l->set_bytes_per_iteration(i == 0 ? 50000000 : 60000000);
    l->set_busy_s_per_iteration(i == 0 ? 0.05 : 0.01);
    l->set_utilisation(i == 0 ? 50000000 / (1.25e9 * 0.2) : 60000000 / (15.754e9 * 0.2));
  }
  r.set_ddlsim_version("0.1.0");
  r.set_simgrid_version("3.32.0");
  return r;
}

std::string error_of(const std::string& text)
{
  try {
    report::parse_report_json(text, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

/** The toy report's JSON with `from` replaced by `to` (once; it must be there). */
std::string edited(const std::string& from, const std::string& to)
{
  std::string text = message_to_json(toy());
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("html_escape: the five characters HTML gives a meaning", "[report][html]")
{
  CHECK_THAT(report::html_escape(R"(<a href="x">Tom & 'Jerry'</a>)"),
             Equals("&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"));
  CHECK_THAT(report::html_escape("res5c_branch2a \xc3\xa9"), Equals("res5c_branch2a \xc3\xa9")); // UTF-8 kept
}

TEST_CASE("report JSON: what ddlsim writes reads back unchanged", "[report][html]")
{
  const proto::Report r = toy();
  const proto::Report back = report::parse_report_json(message_to_json(r), "r.json");
  CHECK(message_to_json(back) == message_to_json(r));
  // and the shipped golden report, as `ddlsim run --report` wrote it
  const proto::Report golden = report::load_report_json(DDLSIM_SOURCE_DIR "/tests/golden/quickstart.json");
  CHECK(golden.layers_size() > 100);
  CHECK(golden.aggregations_size() == int(golden.aggregations_per_iteration()));
}

TEST_CASE("report JSON: not a report, a missing field, a bad value: one line naming the file and the field",
          "[report][html]")
{
  CHECK_THAT(error_of("{\"schema_version\": 1,"), Contains("r.json: malformed JSON"));
  CHECK_THAT(error_of("[1, 2]"), Equals("r.json: top level: expected an object (not a ddlsim report)"));
  // a workload is JSON too, but not a report
  CHECK_THAT(error_of(R"({"schema_version": 1, "model": "toy", "layers": []})"),
             Equals("r.json: config: missing (not a ddlsim run report, or one from an older ddlsim)"));
  // each required key, at each level, is named with its path
  CHECK_THAT(error_of(edited(",\n  \"exposed_input_s\": 0", "")),
             Equals("r.json: breakdown.exposed_input_s: missing (not a ddlsim run report, or one from an older "
                    "ddlsim)"));
  CHECK_THAT(error_of(edited("\"busy_s_per_iteration\": 0.05", "\"busy\": 0.05")),
             Equals("r.json: links[0].busy_s_per_iteration: missing (not a ddlsim run report, or one from an older "
                    "ddlsim)"));
  CHECK_THAT(error_of(edited("\"schema_version\": 1", "\"schema_version\": 2")),
             Equals("r.json: schema_version: expected 1 (got 2)"));
  CHECK_THAT(error_of(edited("\"gpus\": 4", "\"gpus\": \"four\"")), Contains("r.json: not a ddlsim report: "));
  CHECK_THAT(error_of(edited("\"iteration_time_s\": 0.2", "\"iteration_time_s\": -0.2")),
             Equals("r.json: iteration_time_s: expected a finite number >= 0 (got -0.2)"));
  CHECK_THAT(error_of(edited("\"iteration_time_s\": 0.2", "\"iteration_time_s\": \"NaN\"")),
             Equals("r.json: iteration_time_s: expected a finite number >= 0 (got nan)"));
  CHECK_THAT(error_of(edited("\"exposed_s\": 0.01", "\"exposed_s\": 0.05")),
             Equals("r.json: aggregations[0].exposed_s: 0.05 s is more than its time_s 0.04 s"));
  CHECK_THAT(error_of(edited("\"fc\"\n   ],\n   \"bytes\"", "\"fc2\"\n   ],\n   \"bytes\"")),
             Equals("r.json: aggregations[0].layers: 'fc2' is not a layer of the report"));
  CHECK_THAT(error_of(edited("\"model\": \"toy\",", "\"model\": \"toy\", \"model\": \"toy\",")),
             Contains("duplicate key 'model'"));
  CHECK_THAT(error_of(edited("\"model\": \"toy\",", "\"model\": \"toy\", \"colour\": 1,")),
             Contains("r.json: not a ddlsim report: "));
}

TEST_CASE("html page: the report's numbers, with their units", "[report][html]")
{
  const std::string page = report::html_page(toy(), "toy.json");
  CHECK_THAT(page, Contains("<title>ddlsim: toy on 4 x P40: 200.000 ms per iteration</title>"));
  CHECK_THAT(page, Contains(">200.000 ms<"));         // iteration time
  CHECK_THAT(page, Contains("title=\"0.2 s\""));      // and its exact value
  CHECK_THAT(page, Contains(">320.0 samples/s<"));    // 4 x 16 / 0.2
  CHECK_THAT(page, Contains(">80.0 %<"));             // scaling efficiency
  CHECK_THAT(page, Contains("speedup 3.200 x"));      // over one GPU
  CHECK_THAT(page, Contains(">50.0 %<"));             // communication hidden: (0.06 - 0.03) / 0.06
  CHECK_THAT(page, Contains(">3.00 MiB<"));           // gradient per iteration
  CHECK_THAT(page, Contains(">15.0 %</td>"));         // exposed communication 0.03 of 0.2
  CHECK_THAT(page, Contains(">1.250 GB/s<"));         // link bandwidth
  CHECK_THAT(page, Contains(">47.68 MiB<"));          // 50,000,000 B
  CHECK_THAT(page, Contains("title=\"50000000 B\"")); // exactly
  CHECK_THAT(page, Contains(">25.0 %</td>"));         // busy 0.05 of 0.2
  CHECK_THAT(page, Contains(">20.0 % <svg"));         // utilisation 5e7 / (1.25e9 x 0.2)
  // the busiest link first: the NIC (busy 0.05 s) before the PCIe link (0.01 s) in the table of the busiest
  const auto top = page.find("id=\"top-links\"");
  REQUIRE(top != std::string::npos);
  CHECK(page.find("node0-nic0_UP", top) < page.find("node0-gpu0-pcie_UP", top));
  // relu carries no gradient: named in the note with its computation (0.01 + 0.02 s)
  CHECK_THAT(page, Contains("1 layer without a gradient to aggregate (30.000 ms of forward and backward together)"));
  CHECK_THAT(page, Contains("2 aggregations, 30.000 ms hidden and 30.000 ms exposed in all"));
}

TEST_CASE("html page: bars are as long as their times (geometry by hand)", "[report][html]")
{
  const std::string page = report::html_page(toy(), "toy.json");
  // The breakdown spans 760 px for max(iteration 0.2 s, communication 0.06 s) = 0.2 s from x = 215:
  // h2d 0.01 s = 38 px, forward 0.05 s = 190 px starting at 215 + 38 = 253, backward 0.1 s = 380 px at 443.
  CHECK_THAT(page, Contains("<rect x=\"253.00\" y=\"12.00\" width=\"190.00\""));
  CHECK_THAT(page, Contains("<rect x=\"443.00\" y=\"12.00\" width=\"380.00\""));
  // hidden communication 0.03 s = 114 px, then exposed 0.03 s from 215 + 114 = 329
  CHECK_THAT(page, Contains("<rect x=\"215.00\" y=\"50.00\" width=\"114.00\""));
  CHECK_THAT(page, Contains("<rect x=\"329.00\" y=\"50.00\" width=\"114.00\""));
  // Per layer, one scale for both panels of 350 px: the longest row is fc's computation, 0.02 + 0.04 = 0.06 s.
  // Row 0 (fc, y = 58 + 2): forward 0.02 s = 116.67 px from 190, communication from 190 + 350 + 36 = 576:
  // hidden 0.03 s = 175 px, exposed 0.01 s = 58.33 px at 751.
  CHECK_THAT(page, Contains("<rect x=\"190.00\" y=\"60.00\" width=\"116.67\""));
  CHECK_THAT(page, Contains("<rect x=\"576.00\" y=\"60.00\" width=\"175.00\""));
  CHECK_THAT(page, Contains("<rect x=\"751.00\" y=\"60.00\" width=\"58.33\""));
  // Row 1 (conv, y = 58 + 15 + 2): all 0.02 s exposed = 116.67 px, after 0 px hidden
  CHECK_THAT(page, Contains("<rect x=\"576.00\" y=\"75.00\" width=\"0.00\""));
  CHECK_THAT(page, Contains("<rect x=\"576.00\" y=\"75.00\" width=\"116.67\""));
}

TEST_CASE("html page: every string of the report is escaped, nothing is loaded from elsewhere", "[report][html]")
{
  proto::Report r = toy();
  const std::string evil = "<script>alert('x')</script>&";
  r.set_model(evil);
  r.set_gpu("\"><img src=x onerror=alert(1)>");
  r.mutable_config()->set_platform_file("</p><script>1</script>");
  r.mutable_config()->set_schedule("<b>");
  r.mutable_layers(2)->set_name("fc<i>\"'&");
  r.mutable_aggregations(0)->set_layers(0, "fc<i>\"'&");
  r.mutable_links(0)->set_name("<svg onload=alert(2)>");
  r.mutable_links(0)->set_link_class("</td><script>");
  r.set_ddlsim_version("<!--");
  const std::string page = report::html_page(r, "<x>.json");
  CHECK_THAT(page, Contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"));
  CHECK_THAT(page, Contains("fc&lt;i&gt;&quot;&#39;&amp;"));
  CHECK_THAT(page, Contains("&lt;svg onload=alert(2)&gt;"));
  CHECK_THAT(page, Contains("&lt;x&gt;.json"));
  // the page's own elements only: one script, no img, no comment, no tag the strings held
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (auto at = page.find(s); at != std::string::npos; at = page.find(s, at + 1))
      ++n;
    return n;
  };
  CHECK(count("<script") == 1);
  CHECK(count("<img") == 0);
  CHECK(count("<!--") == 0);
  CHECK(count("fc<i>") == 0);
  CHECK(count("<b>&lt;b&gt;</b>") == 0);
  CHECK(count("&lt;b&gt;") == 1);
  CHECK(count("onload") == count("&lt;svg onload"));
}

TEST_CASE("html page: self-contained, nothing loaded from elsewhere", "[report][html]")
{
  const std::string page = report::html_page(
      report::load_report_json(DDLSIM_SOURCE_DIR "/tests/golden/quickstart.json"), "tests/golden/quickstart.json");
  for (const char* external : {"http:", "https:", "//", " src=", "<link", "@import", "url(", "<iframe", "<object"})
    CHECK_THAT(page, !Contains(external));
  CHECK_THAT(page, Contains("<style>"));
  CHECK_THAT(page, Contains("<svg class=\"chart\" id=\"breakdown-chart\""));
  CHECK_THAT(page, Contains("<svg class=\"chart\" id=\"layer-chart\""));
  CHECK_THAT(page, Contains(">174.438 ms<"));       // the golden iteration time, 0.17443848242297122 s
  CHECK_THAT(page, Contains(">2935.1 samples/s<")); // its throughput
  CHECK_THAT(page, Contains(">99.8 %<"));           // its scaling efficiency
  CHECK_THAT(page, Contains("title=\"0.17443848242297122 s\""));
}

TEST_CASE("html page: a one-GPU report (no aggregation, no link) and more rows than a page holds", "[report][html]")
{
  proto::Report r = toy();
  r.clear_aggregations();
  r.clear_links();
  const std::string page = report::html_page(r, "one.json");
  CHECK_THAT(page, Contains("No aggregations (one GPU, or no gradients): computation only."));
  CHECK_THAT(page, Contains("No link carried traffic"));
  proto::Report big = toy();
  big.clear_aggregations();
  for (int i = 0; i < 450; ++i) {
    auto* a = big.add_aggregations();
    a->add_layers("fc");
    a->set_time_s(0.001);
  }
  const std::string long_page = report::html_page(big, "big.json");
  CHECK_THAT(long_page, Contains("fc (part 400)"));
  CHECK_THAT(long_page, !Contains("fc (part 401)"));
  CHECK_THAT(long_page, Contains(">the other 50<"));
  CHECK_THAT(long_page, Contains("The last 50 rows are summed in one."));
}
