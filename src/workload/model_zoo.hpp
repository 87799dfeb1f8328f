// Layer structure of known networks: per learnable layer its parameters, activation sizes and FLOPs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::workload {

/** @brief Kind of a learnable layer; decides its efficiency class in the roofline model. */
enum class LayerKind { Conv, BatchNorm, FullyConnected };

/** @brief One learnable layer of a network, in forward order. Counts are per sample (one image).
 *  FLOPs: 2 per multiply-accumulate for convolutions and FC layers (bias additions not counted);
 *  batch normalisation 4 per output element forward (an assumption, see workloads/README.md). */
struct LayerSpec {
  std::string name;
  LayerKind kind = LayerKind::Conv;
  std::uint64_t parameters = 0;          ///< learnable parameters (weights + biases)
  double forward_flops_per_sample = 0;   ///< floating-point operations of the forward pass, one sample
  double backward_flops_per_sample = 0;  ///< same for the backward pass (input gradient + weight gradient)
  double input_elements_per_sample = 0;  ///< activation values this layer reads, one sample
  double output_elements_per_sample = 0; ///< activation values this layer writes, one sample
  int kernel = 1;                        ///< convolution kernel side (k x k); 1 for BN and FC
  int stride = 1;                        ///< convolution stride
  bool needs_input_gradient = true;      ///< false for the first layer: its input is the image

  /** @brief Bytes of this layer's gradient: 4 per parameter in fp32, 2 in fp16. */
  std::uint64_t gradient_bytes(unsigned bytes_per_value) const { return parameters * bytes_per_value; }
};

/** @brief A network: its name, a one-line description with the reference, and its learnable layers. */
struct Model {
  std::string name;
  std::string description;
  std::vector<LayerSpec> layers;
};

/** @brief AlexNet, single tower ("one weird trick", Krizhevsky 2014) as in torchvision: 5 convolutions
 *  (64, 192, 384, 256, 256 channels) and 3 FC layers on a 224 x 224 input; 61,100,840 parameters.
 *  With `owt`, the paper's single column as tf_cnn_benchmarks builds it (conv4 has 384 channels): the
 *  network behind the TensorFlow calibration measurements. */
Model alexnet(bool owt = false);

/** @brief GoogLeNet (Inception v1, Szegedy et al. 2015) as in BVLC Caffe's train_val.prototxt; with
 *  `auxiliary` the two auxiliary classifiers (on inception 4a and 4d, used in training only) are included. */
Model googlenet(bool auxiliary);

/** @brief VGG-16 (Simonyan & Zisserman 2015, configuration D): 13 convolutions, 3 FC layers. */
Model vgg16();

/** @brief ResNet-50 / ResNet-152. `v1_5` false: He et al. 2016 (stride 2 in the first 1x1 convolution of
 *  a down-sampling block, as in the authors' Caffe models); true: "v1.5" as in torchvision (stride in the 3x3). */
Model resnet(int depth, bool v1_5);

/** @brief ResNet-50 v1: 53 convolutions, 53 batch normalisations, fc1000; 25,557,032 parameters. */
inline Model resnet50()
{
  return resnet(50, false);
}

/** @brief Network by name (see known_models()); throws ConfigError listing the known names. */
Model model_by_name(const std::string& name);

/** @brief Names accepted by model_by_name, comma separated. */
std::string known_models();

/** @brief Sum of parameters over layers. */
std::uint64_t total_parameters(const Model& model);

/** @brief Sum of forward FLOPs (per sample) over layers of the given kinds (all kinds when `kinds` is empty). */
double total_forward_flops(const Model& model, const std::vector<LayerKind>& kinds = {});

} // namespace ddlsim::workload
