// Unit tests: the roofline workload generator (closed forms, calibration residuals, errors) and the GPU catalogue.
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "workload/model_zoo.hpp"
#include "workload/roofline.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

using namespace ddlsim;
using workload::LayerKind;
using workload::Precision;

namespace {

workload::LayerSpec conv(double flops, double in, double out, std::uint64_t params, int k, bool first = false)
{
  workload::LayerSpec l;
  l.name = "c";
  l.kind = LayerKind::Conv;
  l.parameters = params;
  l.forward_flops_per_sample = flops;
  l.backward_flops_per_sample = first ? flops : 2 * flops;
  l.input_elements_per_sample = in;
  l.output_elements_per_sample = out;
  l.kernel = k;
  l.needs_input_gradient = !first;
  return l;
}

workload::RooflineDevice device()
{
  workload::RooflineDevice d;
  d.peak_flops = 10e12;
  d.memory_bytes_per_s = 500e9;
  d.bytes_per_value = 4;
  d.efficiencies = {0.25, 0.8, 0.5, 1.0};
  return d;
}

} // namespace

TEST_CASE("roofline: a compute-bound 3x3 convolution takes FLOPs / (peak x efficiency)")
{
  // 1 GFLOP per sample, 1e5 input and output values: 8e5 bytes per sample, far below the ridge.
  const auto t = workload::layer_time(conv(1e9, 1e5, 1e5, 1000, 3), 32, device());
  CHECK(t.forward_s == Approx(32 * 1e9 / (10e12 * 0.8)).epsilon(1e-12));
  CHECK(t.backward_s == Approx(32 * 2e9 / (10e12 * 0.8)).epsilon(1e-12));
  // The same layer as a 1x1 convolution uses the conv1x1 efficiency.
  const auto t1 = workload::layer_time(conv(1e9, 1e5, 1e5, 1000, 1), 32, device());
  CHECK(t1.forward_s == Approx(32 * 1e9 / (10e12 * 0.25)).epsilon(1e-12));
}

TEST_CASE("roofline: a memory-bound layer takes bytes / bandwidth, the first layer writes no input gradient")
{
  // 1 MFLOP but 1e6 input and 2e6 output values per sample: memory-bound.
  const auto mid = workload::layer_time(conv(1e6, 1e6, 2e6, 100, 3), 8, device());
  CHECK(mid.forward_s == Approx(4.0 * (8 * 3e6 + 100) / 500e9).epsilon(1e-12));
  CHECK(mid.backward_s == Approx(4.0 * (8 * 4e6 + 200) / 500e9).epsilon(1e-12));
  const auto first = workload::layer_time(conv(1e6, 1e6, 2e6, 100, 3, true), 8, device());
  CHECK(first.backward_s == Approx(4.0 * (8 * 3e6 + 200) / 500e9).epsilon(1e-12));
  // fp16 halves the bytes.
  auto half = device();
  half.bytes_per_value = 2;
  CHECK(workload::layer_time(conv(1e6, 1e6, 2e6, 100, 3), 8, half).forward_s ==
        Approx(2.0 * (8 * 3e6 + 100) / 500e9).epsilon(1e-12));
}

TEST_CASE("roofline: batch norm makes 4 forward and 8 backward passes over its activation")
{
  const auto resnet = workload::resnet50();
  const auto& bn = resnet.layers[1];
  REQUIRE(bn.kind == LayerKind::BatchNorm);
  const auto t = workload::layer_time(bn, 32, device());
  CHECK(t.forward_s == Approx(4 * 4.0 * 32 * 64 * 112 * 112 / 500e9).epsilon(1e-12));
  CHECK(t.backward_s == Approx(8 * 4.0 * 32 * 64 * 112 * 112 / 500e9).epsilon(1e-12));
}

TEST_CASE("every calibration point is reproduced within 5 %")
{
  REQUIRE(workload::calibration_points().size() >= 8);
  for (const auto& p : workload::calibration_points()) {
    const double predicted = workload::predicted_samples_per_s(p);
    const double residual = predicted / p.samples_per_s - 1;
    INFO(p.model << " on " << p.gpu << " " << workload::precision_name(p.precision) << " batch " << p.batch
                 << ": measured " << p.samples_per_s << ", predicted " << predicted);
    CHECK(std::abs(residual) <= 0.05);
    CHECK(p.source.find("data/single-gpu-throughput/") == 0);
    const std::string file = p.source.substr(0, p.source.find(':'));
    CHECK(readable_file(DDLSIM_SOURCE_DIR "/" + file));
  }
}

TEST_CASE("validation points are not calibration points and are predicted")
{
  for (const auto& v : workload::validation_points()) {
    for (const auto& c : workload::calibration_points())
      CHECK_FALSE((v.model == c.model && v.gpu == c.gpu && v.batch == c.batch && v.precision == c.precision));
    const double predicted = workload::predicted_samples_per_s(v);
    CHECK(std::isfinite(predicted));
    CHECK(predicted > 0);
  }
}

TEST_CASE("the generated workload has the closed-form update, H2D, I/O and gradient bytes")
{
  workload::GenerateRequest req; // resnet50, P40, batch 32, fp32
  req.decode_samples_per_s = 1000;
  const auto w = workload::generate_workload(req);
  CHECK(w.reference_gpu() == "P40");
  CHECK(w.model() == "resnet50");
  CHECK(w.layers_size() == 107);
  CHECK(workload::total_gradient_bytes(w) == 4ULL * 25557032);
  CHECK(w.update_s() == Approx(12.0 * 25557032 / 346e9).epsilon(1e-12));
  CHECK(w.h2d_s() == Approx(32.0 * 3 * 224 * 224 * 4 / 15.754e9).epsilon(1e-12));
  CHECK(w.io_s() == Approx(32.0 / 1000).epsilon(1e-12));
  // The P40 has no measurement: it uses the Pascal efficiencies with its own datasheet peak and bandwidth.
  const auto& p40 = platform::gpu_by_name("P40");
  const auto dev = workload::roofline_device(p40, Precision::Fp32);
  CHECK(dev.peak_flops == 12e12);
  CHECK(dev.memory_bytes_per_s == 346e9);
  CHECK(workload::profile_for(p40, Precision::Fp32).family == "Pascal");
  const auto model = workload::resnet50();
  for (int i = 0; i < w.layers_size(); ++i) {
    const auto t = workload::layer_time(model.layers[i], 32, dev);
    CHECK(w.layers(i).forward_s() == t.forward_s);
    CHECK(w.layers(i).backward_s() == t.backward_s);
  }
  req.decode_samples_per_s = 0;
  CHECK(workload::generate_workload(req).io_s() == 0.0);
}

TEST_CASE("fp16 halves gradient bytes and is faster on a V100")
{
  workload::GenerateRequest req;
  req.gpu = "V100-SXM2";
  const auto fp32 = workload::generate_workload(req);
  req.precision = Precision::Fp16;
  const auto fp16 = workload::generate_workload(req);
  CHECK(workload::total_gradient_bytes(fp16) * 2 == workload::total_gradient_bytes(fp32));
  double t32 = 0, t16 = 0;
  for (int i = 0; i < fp32.layers_size(); ++i) {
    t32 += fp32.layers(i).forward_s() + fp32.layers(i).backward_s();
    t16 += fp16.layers(i).forward_s() + fp16.layers(i).backward_s();
  }
  CHECK(t16 < t32);
}

TEST_CASE("the generator refuses what it has no data for, naming the value")
{
  workload::GenerateRequest req;
  req.precision = Precision::Fp16;
  CHECK_THROWS_WITH(workload::generate_workload(req),
                    "precision fp16: GPU P40 has no fp16 peak in the GPU catalogue (peak_fp16_flops is 0); use fp32");
  req.gpu = "P100-SXM2";
  CHECK_THROWS_WITH(workload::generate_workload(req),
                    Catch::Matchers::StartsWith("no calibrated fp16 efficiencies for GPU P100-SXM2 (calibrated: "));
  req.precision = Precision::Fp32;
  req.gpu = "A100-SXM4-40GB";
  CHECK_THROWS_WITH(workload::generate_workload(req),
                    Catch::Matchers::StartsWith("no calibrated fp32 efficiencies for GPU A100-SXM4-40GB"));
  req.gpu = "GTX1080";
  CHECK_THROWS_WITH(workload::generate_workload(req), Catch::Matchers::StartsWith("unknown GPU 'GTX1080' (known: "));
  req.gpu = "P40";
  req.model = "lenet";
  CHECK_THROWS_WITH(workload::generate_workload(req),
                    Catch::Matchers::StartsWith("unknown model 'lenet' (known: alexnet, alexnet-owt, googlenet, "));
  req.model = "resnet50";
  req.batch = 0;
  CHECK_THROWS_WITH(workload::generate_workload(req), "batch must be >= 1 (got 0)");
  req.batch = 32;
  req.h2d_bytes_per_s = -1;
  CHECK_THROWS_WITH(workload::generate_workload(req), "host-to-device bandwidth must be a finite number > 0 (got -1)");
  req.h2d_bytes_per_s = 1e9;
  req.decode_samples_per_s = NAN;
  CHECK_THROWS_AS(workload::generate_workload(req), ConfigError);
  CHECK_THROWS_WITH(workload::parse_precision("bf16", "--precision"),
                    "--precision must be one of: fp32, fp16 (got 'bf16')");
}

TEST_CASE("every catalogued GPU cites its source and has positive figures")
{
  for (const auto& g : platform::gpu_catalog()) {
    INFO(g.name);
    CHECK(g.peak_fp32_flops > 1e12);
    CHECK(g.memory_bytes_per_s > 1e11);
    CHECK(g.source.find("datasheet") != std::string::npos);
  }
  CHECK(platform::gpu_by_name("P40").peak_fp32_flops == 12e12);
  CHECK(platform::find_gpu("p40") == nullptr); // names are exact
}
