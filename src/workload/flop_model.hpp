// First workload generator: spread a measured single-GPU iteration time over layers by FLOPs.
#pragma once

#include "proto/workload.pb.h"
#include "workload/model_zoo.hpp"

#include <string>
#include <vector>

namespace ddlsim::workload {

/** @brief A published single-GPU training throughput used to calibrate compute times. */
struct CalibrationPoint {
  std::string model;        ///< model_zoo name
  std::string gpu;          ///< catalogue name of the measured GPU
  unsigned batch = 0;       ///< samples per GPU per iteration
  double samples_per_s = 0; ///< measured training throughput
  std::string source;       ///< file and row it comes from
};

/** @brief Shipped calibration points (from ../shared/data/single-gpu-throughput/). */
const std::vector<CalibrationPoint>& calibration_points();

/** @brief What to generate. */
struct FlopModelRequest {
  std::string model = "resnet50";    ///< model_zoo name
  std::string gpu = "P40";           ///< target GPU (catalogue name)
  unsigned batch = 32;               ///< samples per GPU
  double h2d_bytes_per_s = 15.754e9; ///< host-to-device bandwidth; PCIe 3.0 x16 theoretical (8 GT/s x 16 x 128/130)
};

/** @brief Bytes of one 224x224 RGB ImageNet sample as an fp32 tensor (what is copied host to device). */
inline constexpr double kImagenetSampleBytes = 3.0 * 224 * 224 * 4;

/** @brief Builds the workload (see workloads/README.md for the method):
 *  t_fwd+bwd(target) = batch / samples_per_s(calibration) * peak(calibration GPU) / peak(target)
 *                      - update(target);
 *  layer share = its forward (or backward) FLOPs / total FLOPs;
 *  update = 3 passes over fp32 parameters at the target's memory bandwidth;
 *  h2d = batch * sample bytes / h2d bandwidth; io = 0 (input pipeline assumed to keep up, see README).
 *  Throws ConfigError for an unknown model or GPU, or a batch with no calibration point. */
proto::Workload generate_flop_model(const FlopModelRequest& request);

} // namespace ddlsim::workload
