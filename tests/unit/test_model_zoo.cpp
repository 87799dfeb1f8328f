// Unit tests: the ResNet-50 structure and the FLOP-proportional workload generator.
#include "common/error.hpp"
#include "platform/gpu_catalog.hpp"
#include "workload/flop_model.hpp"
#include "workload/model_zoo.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace ddlsim;

TEST_CASE("ResNet-50 has 25,557,032 parameters in 53 convolutions, 53 batch norms and one FC layer")
{
  const auto layers = workload::resnet50();
  std::uint64_t params = 0;
  int conv = 0, bn = 0, fc = 0;
  std::set<std::string> names;
  for (const auto& l : layers) {
    params += l.parameters;
    conv += l.kind == workload::LayerKind::Conv;
    bn += l.kind == workload::LayerKind::BatchNorm;
    fc += l.kind == workload::LayerKind::FullyConnected;
    names.insert(l.name);
  }
  CHECK(params == 25557032); // torchvision / Keras ResNet50 parameter count
  CHECK(conv == 53);
  CHECK(bn == 53);
  CHECK(fc == 1);
  CHECK(names.size() == layers.size());
  CHECK(layers.front().name == "conv1");
  CHECK(layers.back().name == "fc1000");
  CHECK(layers.back().parameters == 2048 * 1000 + 1000);
}

TEST_CASE("ResNet-50 forward multiply-accumulates match the published 3.8 x 10^9 within 3 %")
{
  // He et al. 2016, Table 1: 3.8 x 10^9 FLOPs (counted as multiply-adds) for the 50-layer network.
  double macs = 0;
  for (const auto& l : workload::resnet50())
    if (l.kind != workload::LayerKind::BatchNorm)
      macs += l.forward_flops_per_sample / 2;
  CHECK(macs == Approx(3.8e9).epsilon(0.03));
}

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
  CHECK_THROWS_WITH(workload::generate_flop_model(req), "unknown model 'lenet' (known: resnet50)");
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
