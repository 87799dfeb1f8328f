// Unit tests: CSV and ASTRA-sim 1.0 importers (every rejection rule with file and line) and format round trips.
#include "common/error.hpp"
#include "workload/importers.hpp"
#include "workload/roofline.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using workload::CsvHeader;

namespace {

workload::ImportMetadata meta()
{
  workload::ImportMetadata m;
  m.model = "toy";
  m.reference_gpu = "P40";
  m.batch = 16;
  m.update_s = 0.001;
  return m;
}

proto::Workload csv(const std::string& text, CsvHeader header = CsvHeader::Auto)
{
  return workload::import_csv(text, "t.csv", header, meta());
}

proto::Workload astra(const std::string& text, double hz = 1e9)
{
  return workload::import_astra(text, "a.txt", hz, meta());
}

const std::string kAstra = "DATA\n"
                           "2\n"
                           "conv1 -1 2000000 NONE 0 0 NONE 0 1500000 ALLREDUCE 37632 10000\n"
                           "fc -1 1000000 NONE 0 1000000 NONE 0 1000000 ALLREDUCE 8196000 20000\n";

} // namespace

TEST_CASE("CSV: layers in order, milliseconds to seconds, header auto-detected")
{
  const auto w = csv("layer,forward_ms,backward_ms,gradient_bytes\n"
                     "# a comment\n"
                     "conv1, 1.5, 3 ,37632\n"
                     "\n"
                     "pool,0.25,0.25,0\n"
                     "fc,2e-1,0.4,8196000\n");
  REQUIRE(w.layers_size() == 3);
  CHECK(w.layers(0).name() == "conv1");
  CHECK(w.layers(0).forward_s() == Approx(1.5e-3).epsilon(1e-15));
  CHECK(w.layers(0).backward_s() == Approx(3e-3).epsilon(1e-15));
  CHECK(w.layers(0).gradient_bytes() == 37632);
  CHECK(w.layers(2).forward_s() == Approx(2e-4).epsilon(1e-15));
  CHECK(w.model() == "toy");
  CHECK(w.reference_gpu() == "P40");
  CHECK(w.batch_size_per_gpu() == 16);
  CHECK(w.update_s() == 0.001);
  // Without a header, auto reads the first line as data; the header check is case-insensitive.
  CHECK(csv("a,1,2,3\n").layers_size() == 1);
  CHECK(csv("Layer, Forward_ms ,backward_ms,GRADIENT_BYTES\na,1,2,3\n", CsvHeader::Yes).layers_size() == 1);
}

TEST_CASE("CSV: header options are enforced")
{
  CHECK_THROWS_WITH(csv("a,1,2,3\n", CsvHeader::Yes),
                    "t.csv:1: expected the header 'layer,forward_ms,backward_ms,gradient_bytes' (got 'a,1,2,3'; use "
                    "--csv-header no for a file without one)");
  CHECK_THROWS_WITH(csv("layer,forward_ms,backward_ms,gradient_bytes\na,1,2,3\n", CsvHeader::No),
                    "t.csv:1: forward_ms: not a finite number ('forward_ms')");
  CHECK(workload::parse_csv_header("no", "--csv-header") == CsvHeader::No);
  CHECK_THROWS_WITH(workload::parse_csv_header("maybe", "--csv-header"),
                    "--csv-header must be one of: auto, yes, no (got 'maybe')");
}

TEST_CASE("CSV: every malformed line is rejected with file and line")
{
  CHECK_THROWS_WITH(csv("a,1,2\n"),
                    "t.csv:1: expected 4 comma-separated fields layer,forward_ms,backward_ms,gradient_bytes (got 3)");
  CHECK_THROWS_WITH(csv("a,1,2,3\nb,1,2,3,4\n"), Catch::Matchers::StartsWith("t.csv:2: expected 4 comma-separated"));
  CHECK_THROWS_WITH(csv("a,1,2,3\n,1,2,3\n"), "t.csv:2: layer: empty name");
  CHECK_THROWS_WITH(csv("a,x,2,3\n"), "t.csv:1: forward_ms: not a finite number ('x')");
  CHECK_THROWS_WITH(csv("a,1,2ms,3\n"), "t.csv:1: backward_ms: not a finite number ('2ms')");
  CHECK_THROWS_WITH(csv("a,nan,2,3\n"), "t.csv:1: forward_ms: not a finite number ('nan')");
  CHECK_THROWS_WITH(csv("a,inf,2,3\n"), "t.csv:1: forward_ms: not a finite number ('inf')");
  CHECK_THROWS_WITH(csv("a,-1,2,3\n"), "t.csv:1: forward_ms must be >= 0 (got -1)");
  CHECK_THROWS_WITH(csv("a,1,-2,3\n"), "t.csv:1: backward_ms must be >= 0 (got -2)");
  CHECK_THROWS_WITH(csv("a,1,2,-3\n"), "t.csv:1: gradient_bytes: not a non-negative integer ('-3')");
  CHECK_THROWS_WITH(csv("a,1,2,3.5\n"), "t.csv:1: gradient_bytes: not a non-negative integer ('3.5')");
  CHECK_THROWS_WITH(csv("a,1,2,99999999999999999999\n"),
                    "t.csv:1: gradient_bytes: not a non-negative integer ('99999999999999999999')");
  CHECK_THROWS_WITH(csv("a,1,2,3\n\nb,1,2,3\na,1,2,3\n"), "t.csv:4: duplicate layer name 'a' (first on line 1)");
  CHECK_THROWS_WITH(csv("layer,forward_ms,backward_ms,gradient_bytes\n# nothing\n"),
                    "t.csv: no layer lines (expected layer,forward_ms,backward_ms,gradient_bytes per line)");
}

TEST_CASE("ASTRA-sim: cycles to seconds, backward = input + weight gradient, ALLREDUCE size = gradient bytes")
{
  const auto w = astra(kAstra, 2e9); // 2 GHz: 1 cycle = 0.5 ns
  REQUIRE(w.layers_size() == 2);
  CHECK(w.layers(0).name() == "conv1");
  CHECK(w.layers(0).forward_s() == Approx(2e6 / 2e9).epsilon(1e-15));
  CHECK(w.layers(0).backward_s() == Approx(1.5e6 / 2e9).epsilon(1e-15));
  CHECK(w.layers(0).gradient_bytes() == 37632);
  CHECK(w.layers(1).backward_s() == Approx(2e6 / 2e9).epsilon(1e-15));
  CHECK(w.layers(1).gradient_bytes() == 8196000);
  CHECK(w.update_s() == Approx(0.001 + 30000 / 2e9).epsilon(1e-15)); // metadata + summed update delays
  // A layer without parameters: weight-gradient communication NONE.
  const auto p = astra("DATA\n1\npool -1 10 NONE 0 10 NONE 0 0 NONE 0 0\n");
  CHECK(p.layers(0).gradient_bytes() == 0);
}

TEST_CASE("ASTRA-sim: every malformed line is rejected with file and line")
{
  CHECK_THROWS_WITH(astra("HYBRID_TRANSFORMER\n1\n"),
                    "a.txt:1: only data-parallel ASTRA-sim workloads are supported: the first line must be DATA (got "
                    "'HYBRID_TRANSFORMER')");
  CHECK_THROWS_WITH(astra("DATA extra\n1\n"), "a.txt:1: unexpected text after DATA ('DATA extra')");
  CHECK_THROWS_WITH(astra("DATA\nfour\n"), "a.txt:2: expected the number of layers, an integer > 0 (got 'four')");
  CHECK_THROWS_WITH(astra("DATA\n0\n"), "a.txt:2: expected the number of layers, an integer > 0 (got '0')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8\n"),
                    Catch::Matchers::StartsWith("a.txt:3: expected 12 fields (name, reserved, ") &&
                        Catch::Matchers::EndsWith("got 11"));
  CHECK_THROWS_WITH(astra("DATA\n1\nconv x 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: reserved field: not an integer ('x')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5.5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: forward cycles: not a non-negative integer ('5.5')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 -5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: input-gradient cycles: not a non-negative integer ('-5')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 NONE 0 z ALLREDUCE 8 0\n"),
                    "a.txt:3: weight-gradient cycles: not a non-negative integer ('z')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 ALLGATHER 64 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: forward communication ALLGATHER is not data-parallel (allowed: NONE)");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 ALLTOALL 64 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: input-gradient communication ALLTOALL is not data-parallel (allowed: NONE)");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 NONE 0 5 ALLGATHER 8 0\n"),
                    "a.txt:3: weight-gradient communication ALLGATHER is not data-parallel (allowed: ALLREDUCE, NONE)");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 7 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:3: forward communication NONE with size 7 (must be 0)");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 NONE 0 5 ALLREDUCE -8 0\n"),
                    "a.txt:3: weight-gradient communication size: not a non-negative integer ('-8')");
  CHECK_THROWS_WITH(astra("DATA\n1\nconv -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 soon\n"),
                    "a.txt:3: update delay: not a non-negative integer ('soon')");
  const std::string conv = "conv -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\n";
  CHECK_THROWS_WITH(astra("DATA\n2\n" + conv + conv), "a.txt:4: duplicate layer name 'conv' (first on line 3)");
  CHECK_THROWS_WITH(astra("DATA\n1\na -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\nb -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt:4: more layer lines than the 1 declared on line 2");
  CHECK_THROWS_WITH(astra("DATA\n3\na -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 8 0\n"),
                    "a.txt: declares 3 layers on line 2 but has 1");
  CHECK_THROWS_WITH(astra(""), Catch::Matchers::StartsWith("a.txt: empty file"));
  CHECK_THROWS_WITH(astra("DATA\n"), "a.txt: missing the number of layers after DATA");
  CHECK_THROWS_WITH(astra(kAstra, 0), "frequency_hz must be a finite number > 0 (got 0)");
}

TEST_CASE("round trip: generated text format -> JSON -> text format is identical")
{
  for (const char* model : {"resnet50", "googlenet-aux", "alexnet"}) {
    workload::GenerateRequest req;
    req.model = model;
    req.gpu = "V100-SXM2";
    req.decode_samples_per_s = 1234.5;
    const auto w = workload::generate_workload(req);
    const std::string text = workload::to_textproto(w);
    const auto from_text = workload::parse_workload(text, "w.textproto");
    const auto from_json = workload::parse_workload(workload::to_json(from_text), "w.json");
    CHECK(workload::to_textproto(from_json) == text);
  }
}

TEST_CASE("round trip: an imported CSV exported to CSV-equivalent values keeps every number")
{
  const auto w = csv("a,0.125,0.25,4\nb,1e-3,2.5,0\n");
  const auto back = workload::parse_workload(workload::to_json(w), "w.json");
  CHECK(workload::to_textproto(back) == workload::to_textproto(w));
  CHECK(back.layers(1).forward_s() == 1e-6);
}
