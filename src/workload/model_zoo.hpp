// Layer structure of known networks: per learnable layer its parameters and forward FLOPs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::workload {

/** @brief Kind of a learnable layer; decides the backward/forward FLOP ratio. */
enum class LayerKind { Conv, BatchNorm, FullyConnected };

/** @brief One learnable layer of a network, in forward order. */
struct LayerSpec {
  std::string name;
  LayerKind kind = LayerKind::Conv;
  std::uint64_t parameters = 0;           ///< learnable parameters (weights + biases)
  double forward_flops_per_sample = 0;    ///< floating-point operations of the forward pass, one sample
  double backward_flops_per_sample = 0;   ///< same for the backward pass
};

/** @brief ResNet-50 v1 (He et al. 2016, the Caffe/ImageNet model, 224x224 input): 53 convolutions,
 *  53 batch normalisations (scale and shift), one fully connected layer; 25,557,032 parameters. */
std::vector<LayerSpec> resnet50();

/** @brief Network structure by name ("resnet50"); throws ConfigError listing the known names. */
std::vector<LayerSpec> model_by_name(const std::string& name);

/** @brief Names accepted by model_by_name, comma separated. */
std::string known_models();

} // namespace ddlsim::workload
