// Unit tests: workload parsing (text format and JSON) and every validation rule.
#include "common/error.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using workload::parse_workload;

namespace {

const std::string kValid = R"(schema_version: 1
model: "toy"
batch_size_per_gpu: 16
reference_gpu: "P40"
io_s: 0.001
h2d_s: 0.0005
update_s: 0.0002
layers { name: "conv" forward_s: 0.001 backward_s: 0.002 gradient_bytes: 1024 }
layers { name: "pool" forward_s: 0.0001 backward_s: 0.0001 }
layers { name: "fc" forward_s: 0.003 backward_s: 0.006 gradient_bytes: 4096 }
)";

/** The valid toy workload with one textual replacement. */
std::string with(const std::string& from, const std::string& to)
{
  std::string s = kValid;
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

} // namespace

TEST_CASE("a valid text-format workload loads with every field")
{
  const auto w = parse_workload(kValid, "toy.textproto");
  CHECK(w.model() == "toy");
  CHECK(w.batch_size_per_gpu() == 16);
  REQUIRE(w.layers_size() == 3);
  CHECK(w.layers(2).name() == "fc");
  CHECK(w.layers(2).backward_s() == 0.006);
  CHECK(w.layers(1).gradient_bytes() == 0);
  CHECK(workload::total_gradient_bytes(w) == 5120);
}

TEST_CASE("text format -> JSON -> text format is identical")
{
  const auto w = parse_workload(kValid, "toy.textproto");
  const auto back = parse_workload(workload::to_json(w), "toy.json");
  CHECK(workload::to_textproto(back) == workload::to_textproto(w));
}

TEST_CASE("validation errors name the source, the field and the value")
{
  const std::string f = "w.textproto";
  CHECK_THROWS_WITH(parse_workload(with("backward_s: 0.006", "backward_s: -0.5"), f),
                    "w.textproto: layer 'fc': backward_s must be >= 0 (got -0.5)");
  CHECK_THROWS_WITH(parse_workload(with("forward_s: 0.001 backward_s: 0.002", "forward_s: nan backward_s: 0.002"), f),
                    "w.textproto: layer 'conv': forward_s must be a finite number of seconds (got nan)");
  CHECK_THROWS_WITH(parse_workload(with("io_s: 0.001", "io_s: inf"), f),
                    "w.textproto: io_s must be a finite number of seconds (got inf)");
  CHECK_THROWS_WITH(parse_workload(with("update_s: 0.0002", "update_s: -1"), f),
                    "w.textproto: update_s must be >= 0 (got -1)");
  CHECK_THROWS_WITH(parse_workload(with("h2d_s: 0.0005", "h2d_s: -0.0005"), f),
                    "w.textproto: h2d_s must be >= 0 (got -0.0005)");
  CHECK_THROWS_WITH(parse_workload(with("gradient_bytes: 4096", "gradient_bytes: -4"), f),
                    "w.textproto: layer 'fc': gradient_bytes must be >= 0 (got -4)");
  CHECK_THROWS_WITH(parse_workload(with("name: \"pool\"", "name: \"conv\""), f),
                    "w.textproto: layer 'conv': duplicate layer name (layer 1)");
  CHECK_THROWS_WITH(parse_workload(with("name: \"pool\" ", ""), f), "w.textproto: layer 1: missing name");
  CHECK_THROWS_WITH(parse_workload(with("schema_version: 1", "schema_version: 2"), f),
                    "w.textproto: schema_version must be 1 (got 2)");
  CHECK_THROWS_WITH(parse_workload(with("schema_version: 1\n", ""), f),
                    "w.textproto: schema_version must be 1 (got 0)");
  CHECK_THROWS_WITH(parse_workload(with("model: \"toy\"", ""), f), "w.textproto: model: missing model name");
  CHECK_THROWS_WITH(parse_workload(with("batch_size_per_gpu: 16", ""), f),
                    "w.textproto: batch_size_per_gpu must be > 0 (got 0)");
  CHECK_THROWS_WITH(parse_workload(with("reference_gpu: \"P40\"", ""), f),
                    "w.textproto: reference_gpu: missing name of the GPU the times were taken on");
}

TEST_CASE("a workload without layers is rejected")
{
  const std::string none = "schema_version: 1 model: \"x\" batch_size_per_gpu: 1 reference_gpu: \"P40\"";
  CHECK_THROWS_WITH(parse_workload(none, "w.textproto"),
                    "w.textproto: layers: a workload needs at least one layer (got 0)");
}

TEST_CASE("unknown fields are errors, in text format with their line")
{
  CHECK_THROWS_WITH(parse_workload(with("io_s: 0.001", "io_seconds: 0.001"), "w.textproto"),
                    Catch::Matchers::StartsWith("w.textproto: line 5, column ") &&
                        Catch::Matchers::Contains("io_seconds"));
  CHECK_THROWS_WITH(parse_workload(R"({"schema_version": 1, "modle": "x"})", "w.json"),
                    Catch::Matchers::StartsWith("w.json: malformed JSON workload: ") &&
                        Catch::Matchers::Contains("modle"));
}

TEST_CASE("malformed files and unknown formats are rejected with InputError")
{
  CHECK_THROWS_AS(parse_workload("layers { name: ", "w.textproto"), InputError);
  CHECK_THROWS_AS(parse_workload("{ \"layers\": [", "w.json"), InputError);
  CHECK_THROWS_WITH(parse_workload(kValid, "w.yaml"),
                    "w.yaml: unknown workload format (expected a .textproto, .pbtxt, .txtpb or .json file)");
  CHECK_THROWS_WITH(workload::load_workload("/nonexistent/w.textproto"), "/nonexistent/w.textproto: no such file");
  CHECK_THROWS_WITH(workload::load_workload(DDLSIM_SOURCE_DIR "/workloads/"),
                    Catch::Matchers::Contains("unknown workload format"));
}

TEST_CASE("JSON accepts the same workload and rejects a negative time")
{
  const std::string json = R"({"schema_version": 1, "model": "toy", "batch_size_per_gpu": 2, "reference_gpu": "P40",
    "layers": [{"name": "a", "forward_s": 0.5, "backward_s": 1.0, "gradient_bytes": "8"}]})";
  const auto w = parse_workload(json, "w.json");
  CHECK(w.layers(0).gradient_bytes() == 8);
  std::string bad = json;
  bad.replace(bad.find("0.5"), 3, "-2");
  CHECK_THROWS_WITH(parse_workload(bad, "w.json"), "w.json: layer 'a': forward_s must be >= 0 (got -2)");
}

TEST_CASE("the shipped ResNet-50 workload loads and carries 25,557,032 fp32 parameters")
{
  const auto w = workload::load_workload(DDLSIM_SOURCE_DIR "/workloads/resnet50-p40-b32.textproto");
  CHECK(w.layers_size() == 107);
  CHECK(workload::total_gradient_bytes(w) == 25557032ULL * 4);
}

TEST_CASE("every shipped model x GPU workload loads and carries its model's fp32 gradient bytes")
{
  const std::pair<const char*, std::uint64_t> models[] = {
      {"alexnet", 61100840ULL}, {"googlenet", 6998552ULL}, {"resnet50", 25557032ULL}};
  const char* const gpus[] = {"k80", "p40", "v100"};
  const char* const batches[] = {"b1024", "b64", "b32"};
  for (int m = 0; m < 3; ++m)
    for (const char* gpu : gpus) {
      const std::string file =
          std::string(DDLSIM_SOURCE_DIR "/workloads/") + models[m].first + "-" + gpu + "-" + batches[m] + ".textproto";
      INFO(file);
      const auto w = workload::load_workload(file);
      CHECK(w.model() == models[m].first);
      CHECK(workload::total_gradient_bytes(w) == 4 * models[m].second);
    }
}

TEST_CASE("times and gradients beyond what the simulation can represent are rejected")
{
  CHECK_THROWS_WITH(parse_workload(with("forward_s: 0.003", "forward_s: 1e300"), "w.textproto"),
                    "w.textproto: layer 'fc': forward_s must be <= 1e6 s (got 1e+300)");
  CHECK_THROWS_WITH(parse_workload(with("gradient_bytes: 4096", "gradient_bytes: 9223372036854775807"), "w.textproto"),
                    "w.textproto: layer 'fc': gradient_bytes must be <= 2^50 (1 PiB) (got 9223372036854775807)");
}
