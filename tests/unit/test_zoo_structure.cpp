// Unit tests: exact structure of the model zoo (parameter totals, layer counts, FLOP totals vs published values).
#include "common/error.hpp"
#include "common/strings.hpp"
#include "workload/model_zoo.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace ddlsim;
using workload::LayerKind;

namespace {

int count(const workload::Model& m, LayerKind kind)
{
  int n = 0;
  for (const auto& l : m.layers)
    n += l.kind == kind;
  return n;
}

/** Forward multiply-accumulates of convolutions and FC layers (what the published "FLOPs" tables count). */
double macs(const workload::Model& m)
{
  return workload::total_forward_flops(m, {LayerKind::Conv, LayerKind::FullyConnected}) / 2;
}

void check_names_unique(const workload::Model& m)
{
  std::set<std::string> names;
  for (const auto& l : m.layers)
    names.insert(l.name);
  CHECK(names.size() == m.layers.size());
}

} // namespace

TEST_CASE("AlexNet (torchvision single tower): 61,100,840 parameters, 0.71 GMAC")
{
  const auto m = workload::alexnet();
  // torchvision model documentation (pytorch.org/vision/stable/models.html, AlexNet_Weights): 61,100,840
  // parameters, 0.71 "GFLOPS" (multiply-accumulates).
  CHECK(workload::total_parameters(m) == 61100840);
  CHECK(macs(m) == Approx(0.71e9).epsilon(0.01));
  CHECK(count(m, LayerKind::Conv) == 5);
  CHECK(count(m, LayerKind::FullyConnected) == 3);
  CHECK(m.layers[5].parameters == 9216ULL * 4096 + 4096); // fc6 after the 6x6x256 pool
  CHECK_FALSE(m.layers[0].needs_input_gradient);
  CHECK(m.layers[0].backward_flops_per_sample == m.layers[0].forward_flops_per_sample);
  CHECK(m.layers[1].backward_flops_per_sample == 2 * m.layers[1].forward_flops_per_sample);
  check_names_unique(m);
}

TEST_CASE("AlexNet as tf_cnn_benchmarks builds it: conv4 has 384 channels")
{
  // No published total found; counted from tf_cnn_benchmarks alexnet_model.py (64-192-384-384-256, FC 4096-4096)
  // plus the 1000-way classifier: conv4 and conv5 grow by 3x3x384x128 + 128 and 3x3x128x256 weights.
  const auto owt = workload::alexnet(true);
  const auto tv = workload::alexnet(false);
  CHECK(workload::total_parameters(owt) == 61838248);
  CHECK(workload::total_parameters(owt) - workload::total_parameters(tv) == 9ULL * 384 * 128 + 128 + 9ULL * 128 * 256);
  CHECK(owt.name == "alexnet-owt");
}

TEST_CASE("GoogLeNet (BVLC Caffe): 6,998,552 parameters without, 13,378,280 with the auxiliary classifiers")
{
  // Counted from the architecture (published rounded: 7.00 M params, 1.60 GMAC in the model table of
  // github.com/Captain1986/utils). Parameter counts of BVLC Caffe's bvlc_googlenet (weights + biases of the 57
  // convolutions and the classifier; the two auxiliary heads add a 1x1 convolution to 128 channels on 512 and 528
  // channels, FC 2048x1024 and FC 1024x1000 each: 6,379,728).
  const auto plain = workload::googlenet(false);
  const auto aux = workload::googlenet(true);
  CHECK(workload::total_parameters(plain) == 6998552);
  CHECK(workload::total_parameters(aux) == 13378280);
  CHECK(workload::total_parameters(aux) - workload::total_parameters(plain) ==
        (512ULL * 128 + 128) + (528ULL * 128 + 128) + 2 * ((2048ULL * 1024 + 1024) + (1024ULL * 1000 + 1000)));
  CHECK(count(plain, LayerKind::Conv) == 57);
  CHECK(count(plain, LayerKind::FullyConnected) == 1);
  CHECK(count(aux, LayerKind::Conv) == 59);
  CHECK(count(aux, LayerKind::FullyConnected) == 5);
  // Szegedy et al., "Going deeper with convolutions", CVPR 2015, Table 1, column "ops": 118M + 360M + 128M +
  // 304M + 73M + 88M + 100M + 119M + 170M + 54M + 71M + 1M = 1,586M multiply-adds (inference, no auxiliary heads).
  CHECK(macs(plain) == Approx(1586e6).epsilon(0.01));
  CHECK(plain.layers.back().name == "loss3/classifier");
  check_names_unique(plain);
  check_names_unique(aux);
}

TEST_CASE("VGG-16: 138,357,544 parameters, 15.47 GMAC")
{
  const auto m = workload::vgg16();
  // torchvision model documentation (VGG16_Weights): 138,357,544 parameters, 15.47 GFLOPS (multiply-accumulates).
  CHECK(workload::total_parameters(m) == 138357544);
  CHECK(macs(m) == Approx(15.47e9).epsilon(0.01));
  CHECK(count(m, LayerKind::Conv) == 13);
  CHECK(count(m, LayerKind::FullyConnected) == 3);
  check_names_unique(m);
}

TEST_CASE("ResNet-50 v1: 25,557,032 parameters in 53 convolutions, 53 batch norms and one FC layer")
{
  const auto m = workload::resnet50();
  CHECK(workload::total_parameters(m) == 25557032); // torchvision / Keras ResNet50 parameter count
  CHECK(m.layers.size() == 107);
  CHECK(count(m, LayerKind::Conv) == 53);
  CHECK(count(m, LayerKind::BatchNorm) == 53);
  CHECK(count(m, LayerKind::FullyConnected) == 1);
  CHECK(m.layers.front().name == "conv1");
  CHECK(m.layers.back().name == "fc1000");
  CHECK(m.layers.back().parameters == 2048 * 1000 + 1000);
  // He et al. 2016, Table 1: 3.8 x 10^9 FLOPs (multiply-adds), two significant figures; the osmr/imgclsmob
  // model table (github.com/osmr/imgclsmob, ResNet-50) gives 3,877.95 M MACs, counting BN and additions too.
  CHECK(macs(m) == Approx(3.8e9).epsilon(0.02)); // the paper's two-figure value: 1.5 % off
  CHECK(macs(m) == Approx(3877.95e6).epsilon(0.01));
  check_names_unique(m);
}

TEST_CASE("ResNet-50 v1.5 (torchvision): same parameters, 4.09 GMAC")
{
  const auto m = workload::resnet(50, true);
  CHECK(workload::total_parameters(m) == 25557032);
  CHECK(macs(m) == Approx(4.09e9).epsilon(0.01)); // torchvision documentation, ResNet50_Weights: 4.09 GFLOPS
  CHECK(m.name == "resnet50-v1.5");
}

TEST_CASE("ResNet-152: 60,192,808 parameters, 11.3 GMAC (v1), 11.51 GMAC (v1.5)")
{
  const auto v1 = workload::resnet(152, false);
  const auto v15 = workload::resnet(152, true);
  // torchvision documentation, ResNet152_Weights: 60,192,808 parameters, 11.51 GFLOPS (v1.5).
  CHECK(workload::total_parameters(v1) == 60192808);
  CHECK(workload::total_parameters(v15) == 60192808);
  CHECK(macs(v15) == Approx(11.51e9).epsilon(0.01));
  CHECK(macs(v1) == Approx(11.3e9).epsilon(0.01)); // He et al. 2016, Table 1: 11.3 x 10^9
  CHECK(count(v1, LayerKind::Conv) == 155);
  CHECK(count(v1, LayerKind::BatchNorm) == 155);
  check_names_unique(v1);
  CHECK(v1.layers[4].name == "res2a_branch2a");
}

TEST_CASE("gradient bytes are 4 per parameter in fp32 and 2 in fp16")
{
  const auto model = workload::alexnet(); // keep the model alive: a reference into a temporary would dangle
  const auto& fc = model.layers.back();
  CHECK(fc.gradient_bytes(4) == 4 * 4097000ULL);
  CHECK(fc.gradient_bytes(2) == 2 * 4097000ULL);
}

TEST_CASE("activation sizes follow the architecture")
{
  const auto r = workload::resnet50();
  CHECK(r.layers[0].input_elements_per_sample == 3 * 224 * 224);
  CHECK(r.layers[0].output_elements_per_sample == 64 * 112 * 112);
  const auto g = workload::googlenet(false);
  CHECK(g.layers[3].name == "inception_3a/1x1");
  CHECK(g.layers[3].input_elements_per_sample == 192 * 28 * 28);
  CHECK(g.layers.back().input_elements_per_sample == 1024);
}

TEST_CASE("model_by_name knows every model and rejects others")
{
  for (std::string name : split(workload::known_models(), ',')) {
    name.erase(0, name.find_first_not_of(' '));
    INFO(name);
    CHECK(workload::model_by_name(name).name == name);
  }
  CHECK_THROWS_AS(workload::model_by_name("lenet"), ConfigError);
  CHECK_THROWS_WITH(workload::resnet(34, false), "ResNet depth must be 50 or 152 (got 34)");
}
