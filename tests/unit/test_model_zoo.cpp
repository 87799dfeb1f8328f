// Unit tests: the FLOP-proportional workload generator and the GPU catalogue.
#include "common/error.hpp"
#include "platform/gpu_catalog.hpp"
#include "workload/flop_model.hpp"
#include "workload/model_zoo.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace ddlsim;

TEST_CASE("the FLOP model reproduces the calibration point scaled by peak throughput")
{
  workload::FlopModelRequest req; // resnet50, P40, batch 32
  const auto w = workload::generate_flop_model(req);
  double compute = w.update_s();
  for (const auto& l : w.layers())
    compute += l.forward_s() + l.backward_s();
  // 32 images at 195 images/s on a P100-SXM2 (10.6 TFLOP/s), scaled to a P40 (12 TFLOP/s).
  CHECK(compute == Approx(32.0 / 195.0 * 10.6 / 12.0).epsilon(1e-12));
  CHECK(w.update_s() == Approx(3.0 * 4 * 25557032 / 346e9).epsilon(1e-12));
  CHECK(w.h2d_s() == Approx(32.0 * 3 * 224 * 224 * 4 / 15.754e9).epsilon(1e-12));
  CHECK(w.io_s() == 0.0);
  CHECK(w.reference_gpu() == "P40");
  // The first convolution needs no input gradient: backward = forward; the others: backward = 2 x forward.
  CHECK(w.layers(0).backward_s() == Approx(w.layers(0).forward_s()));
  CHECK(w.layers(2).backward_s() == Approx(2 * w.layers(2).forward_s()));
}

TEST_CASE("the FLOP model refuses what it has no data for")
{
  workload::FlopModelRequest req;
  req.batch = 48;
  CHECK_THROWS_WITH(workload::generate_flop_model(req),
                    "no calibration point for model 'resnet50' at batch 48 (measured batches: 32, 64)");
  req.batch = 32;
  req.model = "lenet";
  CHECK_THROWS_WITH(workload::generate_flop_model(req), Catch::Matchers::StartsWith("unknown model 'lenet' (known: alexnet, googlenet, "));
  req.model = "resnet50";
  req.gpu = "GTX1080";
  CHECK_THROWS_AS(workload::generate_flop_model(req), ConfigError);
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
