// Internal helper of the model zoo: appends learnable layers with their parameter and FLOP counts.
#pragma once

#include "workload/model_zoo.hpp"

#include <utility>

namespace ddlsim::workload::detail {

/** @brief Convolution output side for input side `in`, kernel k, stride s, padding p (floor mode). */
inline int conv_out(int in, int k, int s, int p)
{
  return (in + 2 * p - k) / s + 1;
}

/** @brief Pooling output side; `ceil_mode` as in Caffe (ceil) or torchvision (floor). */
inline int pool_out(int in, int k, int s, int p, bool ceil_mode)
{
  const int span = in + 2 * p - k;
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

/** @brief Appends layers to a model and keeps the counting conventions in one place:
 *  convolution and FC: forward 2 FLOPs per multiply-accumulate; backward twice forward (input gradient and
 *  weight gradient, each as many multiply-accumulates as the forward pass), or once forward when the layer
 *  needs no input gradient (the first layer). Batch normalisation: 4 FLOPs per output element forward
 *  (subtract mean, scale by inverse deviation, multiply by gamma, add beta; an assumption), backward 2 x. */
class LayerBuilder {
public:
  static constexpr double kBnFlopsPerElement = 4.0;

  /** Convolution of `cin` -> `cout` channels, k x k kernel, square input `in_hw`, output `out_hw`. */
  void conv(const std::string& name, int k, int stride, int cin, int cout, int in_hw, int out_hw, bool bias,
            bool first = false)
  {
    const double out_elems = double(cout) * out_hw * out_hw;
    const double fwd = 2.0 * double(k) * k * cin * out_elems;
    LayerSpec l;
    l.name = name;
    l.kind = LayerKind::Conv;
    l.parameters = std::uint64_t(k) * k * cin * cout + (bias ? std::uint64_t(cout) : 0);
    l.forward_flops_per_sample = fwd;
    l.backward_flops_per_sample = first ? fwd : 2.0 * fwd;
    l.input_elements_per_sample = double(cin) * in_hw * in_hw;
    l.output_elements_per_sample = out_elems;
    l.kernel = k;
    l.stride = stride;
    l.needs_input_gradient = !first;
    layers_.push_back(std::move(l));
  }
  /** Batch normalisation with scale and shift (2 parameters per channel). */
  void bn(const std::string& name, int channels, int hw)
  {
    const double elems = double(channels) * hw * hw;
    LayerSpec l;
    l.name = name;
    l.kind = LayerKind::BatchNorm;
    l.parameters = 2ULL * channels;
    l.forward_flops_per_sample = kBnFlopsPerElement * elems;
    l.backward_flops_per_sample = 2.0 * kBnFlopsPerElement * elems;
    l.input_elements_per_sample = elems;
    l.output_elements_per_sample = elems;
    layers_.push_back(std::move(l));
  }
  /** Fully connected layer with bias. */
  void fc(const std::string& name, int in, int out)
  {
    const double fwd = 2.0 * double(in) * out;
    LayerSpec l;
    l.name = name;
    l.kind = LayerKind::FullyConnected;
    l.parameters = std::uint64_t(in) * out + out;
    l.forward_flops_per_sample = fwd;
    l.backward_flops_per_sample = 2.0 * fwd;
    l.input_elements_per_sample = in;
    l.output_elements_per_sample = out;
    layers_.push_back(std::move(l));
  }
  std::vector<LayerSpec> take() { return std::move(layers_); }

private:
  std::vector<LayerSpec> layers_;
};

} // namespace ddlsim::workload::detail
