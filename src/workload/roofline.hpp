// Workload generator: per-layer roofline times on a catalogued GPU, calibrated against measured throughput.
#pragma once

#include "hardware/link_catalog.hpp"
#include "proto/workload.pb.h"
#include "workload/model_zoo.hpp"

#include <string>
#include <vector>

namespace ddlsim::platform {
struct GpuSpec;
}

namespace ddlsim::workload {

/** @brief Arithmetic precision of the generated workload: fp32, or fp16 mixed precision (fp16 compute, tensors and
 *  gradients; fp32 master weights in the update). */
enum class Precision { Fp32, Fp16 };

/** @brief "fp32" / "fp16". */
const char* precision_name(Precision p);

/** @brief Parses "fp32" / "fp16"; throws ConfigError naming `what` otherwise. */
Precision parse_precision(const std::string& text, const std::string& what);

/** @brief Achieved fraction of the datasheet peak FLOP/s per layer kind ("effective": above 1 where fast
 *  algorithms such as Winograd do fewer arithmetic operations than the direct convolution counted here). */
struct Efficiencies {
  double conv1x1 = 0;   ///< 1x1 convolutions
  double conv = 0;      ///< convolutions with a kernel larger than 1x1
  double fc = 0;        ///< fully connected layers
  double batchnorm = 0; ///< batch normalisation (memory-bound in practice)
};

/** @brief The efficiencies used for a family of GPUs at one precision, with how they were obtained. */
struct EfficiencyProfile {
  std::string family;            ///< "Kepler", "Pascal", "Volta"
  std::vector<std::string> gpus; ///< catalogue names that use this profile
  Precision precision = Precision::Fp32;
  Efficiencies efficiencies;
  std::string derivation; ///< which calibration points fixed the numbers, and how
};

/** @brief Every efficiency profile (see workloads/README.md for the calibration). */
const std::vector<EfficiencyProfile>& efficiency_profiles();

/** @brief The profile for a GPU and precision. Throws ConfigError for fp16 on a GPU whose catalogue peak_fp16_flops
 *  is 0, and for a GPU or precision with no calibrated profile. */
const EfficiencyProfile& profile_for(const platform::GpuSpec& gpu, Precision precision);

/** @brief Memory passes over a batch-normalisation layer's activation (4-byte or 2-byte values), a modelling
 *  assumption: forward BN reads x and writes y, the ReLU after it reads and writes y (4); backward BN reads x and dy
 *  twice (statistics, then the input gradient) and writes dx, the ReLU backward reads y and dy and writes dx (8). */
inline constexpr double kBatchNormForwardPasses = 4;
inline constexpr double kBatchNormBackwardPasses = 8;

/** @brief Bytes per parameter moved by the update: fp32 SGD reads weights and gradients and writes weights (12);
 *  fp16 reads fp32 master weights and the fp16 gradient, writes the master and an fp16 copy (4 + 2 + 4 + 2 = 12). */
inline constexpr double kUpdateBytesPerParameter = 12;

/** @brief Roofline inputs for one GPU at one precision. */
struct RooflineDevice {
  double peak_flops = 0;         ///< FLOP/s, datasheet peak at this precision
  double memory_bytes_per_s = 0; ///< bytes/s, datasheet memory bandwidth
  unsigned bytes_per_value = 4;  ///< 4 (fp32) or 2 (fp16)
  Efficiencies efficiencies;
};

/** @brief The device for a catalogued GPU at a precision (uses profile_for). */
RooflineDevice roofline_device(const platform::GpuSpec& gpu, Precision precision);

/** @brief Forward and backward time of one layer for `batch` samples:
 *  t = max(FLOPs / (peak x efficiency_kind), bytes moved / memory bandwidth), forward and backward separately.
 *  Bytes (convolution, FC): forward reads input and weights, writes output; backward reads input, output gradient
 *  and weights, writes the weight gradient and, except for the first layer, the input gradient. Batch norm:
 *  kBatchNorm*Passes over its activation. */
struct LayerTime {
  double forward_s = 0;
  double backward_s = 0;
};
LayerTime layer_time(const LayerSpec& layer, unsigned batch, const RooflineDevice& device);

/** @brief Parameter update time: kUpdateBytesPerParameter x parameters / memory bandwidth. */
double update_time(std::uint64_t parameters, const RooflineDevice& device);

/** @brief A measured single-GPU training throughput (synthetic or real data as noted in `source`). */
struct MeasuredPoint {
  std::string model; ///< model_zoo name of the network that was measured
  std::string gpu;   ///< catalogue name
  Precision precision = Precision::Fp32;
  unsigned batch = 0;       ///< samples per GPU per iteration
  double samples_per_s = 0; ///< measured
  std::string source;       ///< file and row in data/single-gpu-throughput/
};

/** @brief Points the efficiencies were fitted to: the generator reproduces each within 5 %. */
const std::vector<MeasuredPoint>& calibration_points();

/** @brief Measurements NOT used in the fit, reported with their error as a check of the method. */
const std::vector<MeasuredPoint>& validation_points();

/** @brief Throughput the model predicts for a point: batch / (sum of layer forward + backward + update); no I/O or
 *  host-to-device copy (the measurements used synthetic data or an input pipeline running ahead). */
double predicted_samples_per_s(const MeasuredPoint& point);

/** @brief What to generate. */
struct GenerateRequest {
  std::string model = "resnet50"; ///< model_zoo name
  std::string gpu = "P40";        ///< target GPU (catalogue name)
  unsigned batch = 32;            ///< samples per GPU
  Precision precision = Precision::Fp32;
  double h2d_bytes_per_s = platform::kPcie3x16Bandwidth_bytes_per_s; ///< PCIe 3.0 x16 theoretical (link catalogue)
  double sample_bytes = 3.0 * 224 * 224 * 4; ///< one 224x224 RGB image as an fp32 tensor (what is copied)
  double decode_samples_per_s = 0;           ///< input pipeline throughput; 0: it keeps up (io_s = 0)
};

/** @brief Builds the workload: per-layer roofline times on the target GPU (workloads/README.md), gradient bytes
 *  4 or 2 per parameter, update from update_time, h2d = batch x sample_bytes / h2d bandwidth, io = batch /
 *  decode throughput (0 when it is 0). Throws ConfigError for unknown names or out-of-range values. */
proto::Workload generate_workload(const GenerateRequest& request);

} // namespace ddlsim::workload
