// Unit tests: input guards of issue 13 that act before protobuf's parser (duplicate JSON keys, the layer bound),
// the field named in invalid UTF-8 messages, negative zero in CSV times, the run-size estimate.
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"
#include "engine/run_size.hpp"
#include "workload/importers.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace ddlsim;
using Catch::Matchers::Equals;
using workload::parse_workload;

namespace {

const std::string kHead = "schema_version: 1\nmodel: \"toy\"\nbatch_size_per_gpu: 8\nreference_gpu: \"P40\"\n";
const std::string kJsonHead = R"({"schema_version": 1, "model": "toy", "batch_size_per_gpu": 8, "reference_gpu": "P40",
)";

std::string error_of(const std::string& text, const std::string& path)
{
  try {
    parse_workload(text, path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

workload::ImportMetadata meta()
{
  workload::ImportMetadata m;
  m.model = "toy";
  m.reference_gpu = "P40";
  m.batch = 16;
  return m;
}

} // namespace

TEST_CASE("a repeated JSON key is refused with file, line and key, and the line of the first")
{
  const std::string two_arrays = kJsonHead + R"("layers": [{"name": "a", "forward_s": 0.001}],
"layers": [{"name": "b", "forward_s": 0.001}]})";
  CHECK_THAT(error_of(two_arrays, "w.json"), Equals("w.json: line 3: duplicate key 'layers' (first on line 2)"));
  // snake_case and lowerCamelCase name one field for protobuf's parser; \u escapes are decoded
  CHECK_THAT(error_of(kJsonHead + R"("batchSizePerGpu": 4, "layers": [{"name": "a"}]})", "w.json"),
             Equals("w.json: line 2: duplicate key 'batchSizePerGpu' (first on line 1)"));
  CHECK_THAT(error_of(kJsonHead + R"("layers": [{"name": "a"}], "\u006cayers": []})", "w.json"),
             Equals("w.json: line 2: duplicate key 'layers' (first on line 2)"));
  // inside a layer, too
  CHECK_THAT(error_of(kJsonHead + R"("layers": [{"name": "a", "forward_s": 1, "forward_s": 2}]})", "w.json"),
             Equals("w.json: line 2: duplicate key 'forward_s' (first on line 2)"));
  // the same key in two objects is not a repetition, nor is a key-like string value
  const auto w =
      parse_workload(kJsonHead + R"("layers": [{"name": "a"}, {"name": "layers"}], "source": "model"})", "w.json");
  CHECK(w.layers_size() == 2);
}

TEST_CASE("the JSON scan counts the top-level array and leaves malformed text to protobuf")
{
  CHECK(check_json_keys(R"({"layers": [1, [2, 3], {"x": [4]}, "5,6"], "other": [7, 8]})", "x", "layers") == 4);
  CHECK(check_json_keys(R"({"layers": []})", "x", "layers") == 0);
  CHECK(check_json_keys(R"({"a": {"layers": [1, 2]}})", "x", "layers") == 0); // not top level
  CHECK(check_json_keys("", "x", "layers") == 0);
  CHECK(check_json_keys(R"({"a" "a": 1, 2: 3})", "x", "layers") == 0);
  CHECK(check_json_keys(std::string(100000, '['), "x", "layers") == 0); // deep nesting: the scan stops
  CHECK_THAT(error_of(kJsonHead + R"("layers": [}, "layers")", "w.json"),
             Equals("w.json: line 2: duplicate key 'layers' (first on line 2)"));
  CHECK_THAT(error_of(kJsonHead + R"("layers": [{"name": "a"}]}})", "w.json"),
             Catch::Matchers::StartsWith("w.json: malformed JSON workload"));
}

TEST_CASE("more than kMaxLayers layers are refused before protobuf parses them")
{
  // A syntax error after the layers: had the parser run first, its error would be the message.
  std::string text = kHead;
  for (int i = 0; i <= workload::kMaxLayers; ++i)
    text += "layers {}\n";
  text += "oops oops\n";
  CHECK_THAT(error_of(text, "big.textproto"), Equals("big.textproto: layers: at most 1048576 layers (got " +
                                                     std::to_string(workload::kMaxLayers + 1) + ")"));
  std::string json = kJsonHead + "\"layers\": [";
  for (int i = 0; i <= workload::kMaxLayers; ++i)
    json += "{},";
  json += "oops]}";
  CHECK_THAT(error_of(json, "big.json"),
             Equals("big.json: layers: at most 1048576 layers (got " + std::to_string(workload::kMaxLayers + 2) + ")"));
  // list syntax, angle brackets, braces in strings and comments: only top-level messages count
  const std::string mixed = kHead + "layers: [{name: \"{{\"}, {name: \"b\"}] # {{{\nlayers < name: 'c<' >\n";
  CHECK(parse_workload(mixed, "m.textproto").layers_size() == 3);
}

TEST_CASE("invalid UTF-8 is refused naming file, line, column and field")
{
  CHECK_THAT(error_of(kHead + "layers { name: \"c\xff\" }\n", "w.textproto"),
             Equals("w.textproto: line 5, column 18: name: invalid UTF-8 (byte 0xFF)"));
  CHECK_THAT(error_of(kHead + "source: \"a: b \\\" \xc3(\"\n", "w.textproto"),
             Equals("w.textproto: line 5, column 18: source: invalid UTF-8 (byte 0xC3)"));
  CHECK_THAT(error_of(kHead + "# caf\xe9\n", "w.textproto"),
             Equals("w.textproto: line 5, column 6: comment: invalid UTF-8 (byte 0xE9)"));
  CHECK_THAT(error_of(kJsonHead + "\"layers\": [{\"forward_s\": 1, \"name\": \"\xed\xa0\x80\"}]}", "w.json"),
             Equals("w.json: line 2, column 38: name: invalid UTF-8 (byte 0xED)")); // a surrogate
  const auto csv_error = [](const std::string& text) {
    try {
      workload::import_csv(text, "t.csv", workload::CsvHeader::Auto, meta());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(csv_error("conv,1,2\xff,4\n"), Equals("t.csv: line 1, column 9: backward_ms: invalid UTF-8 (byte 0xFF)"));
  CHECK_THAT(csv_error("a,1,2,3\n  # \xff\n"), Equals("t.csv: line 2, column 5: comment: invalid UTF-8 (byte 0xFF)"));
  CHECK_THAT(csv_error("a,1,2,3,\xff\n"), Equals("t.csv: line 1, column 9: field 5: invalid UTF-8 (byte 0xFF)"));
  CHECK(key_at_column("name: \"x\"", 7) == "name");
  CHECK(key_at_column("no key here", 5).empty());
}

TEST_CASE("a CSV time of -.0 is stored as +0: text -> JSON -> text is the same workload")
{
  const auto w = workload::import_csv("conv,-.0,-0.0e3,4\n", "t.csv", workload::CsvHeader::Auto, meta());
  CHECK_FALSE(std::signbit(w.layers(0).forward_s()));
  CHECK_FALSE(std::signbit(w.layers(0).backward_s()));
  const std::string json = workload::to_json(w);
  CHECK(json.find("-0") == std::string::npos);
  const auto back = parse_workload(json, "w.json");
  CHECK(workload::to_textproto(back) == workload::to_textproto(w));
  CHECK(workload::to_textproto(w).find("-0") == std::string::npos);
}

TEST_CASE("the run-size estimate grows with ranks x iterations x tasks and refuses what memory cannot hold")
{
  engine::RunSize s;
  s.ranks = 16;
  s.iterations = 3;
  s.tasks = 330;
  s.baseline_tasks = 220;
  s.platform_hosts = 16;
  const std::uint64_t records = 16 * 3 * 330 + 3 * 220;
  CHECK(engine::estimate_run_bytes(s) ==
        records * engine::kBytesPerRecord + (16 * 330 + 220) * engine::kBytesPerRankTask + 16 * engine::kBytesPerHost);
  s.trace = true;
  CHECK(engine::estimate_run_bytes(s) > records * (engine::kBytesPerRecord + engine::kBytesPerTraceEvent));
  CHECK_NOTHROW(engine::check_run_size(s, std::uint64_t(1) << 30));
  CHECK_NOTHROW(engine::check_run_size(s, 0)); // unknown memory: nothing checked
  s.iterations = 1000000000;
  s.ranks = std::size_t(1) << 40;
  CHECK(engine::estimate_run_bytes(s) == std::numeric_limits<std::uint64_t>::max()); // saturates
  s.ranks = 16;
  CHECK_THROWS_WITH(engine::check_run_size(s, std::uint64_t(16) << 30),
                    Catch::Matchers::StartsWith("this run needs about ") &&
                        Catch::Matchers::Contains("more than this machine's 16.00 GiB (16 ranks x 1000000000 "
                                                  "iterations x 330 tasks = 5500000000000 task records with trace "
                                                  "events, 16 hosts; lower iterations or ranks"));
  CHECK(engine::physical_memory_bytes() > (std::uint64_t(64) << 20));
}

TEST_CASE("every error is one line: line breaks and control characters of quoted values are escaped")
{
  CHECK_THAT(InputError("f: bad word 'a\nb\r\x01\x7f' here").what(), Equals("f: bad word 'a\\nb\\r\\x01\\x7F' here"));
  const ConfigError e(field("hosts") + " unknown host 'x\ny'\ttab");
  CHECK_THAT(e.what(), Equals("hosts unknown host 'x\\ny'\ttab"));
  CHECK_THAT(e.message_template(), Equals(field("hosts") + " unknown host 'x\\ny'\ttab")); // marks kept
  // what the fuzzers found: a --cluster key, a size and a JSON key quoted with a line break
  CHECK_THROWS_WITH(parse_bytes("\n844747378<", "size"), "size: expected a size such as 4B, 8KiB, 1MiB or 1GiB (got "
                                                         "'\\n844747378<')");
  CHECK_THAT(error_of(kJsonHead + "\"a\": 1, \"a\n\": 2}", "w.json"),
             Catch::Matchers::StartsWith("w.json: malformed JSON"));
}
