// Catalogue of GPU models: datasheet peak FP32 throughput and memory bandwidth, with sources.
#pragma once

#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief One GPU model as its vendor datasheet describes it (also the trace-replay speed: a host of this GPU
 *  has speed = peak_fp32_flops, so a time measured on GPU A replays on GPU B scaled by their FP32 peak ratio). */
struct GpuSpec {
  std::string name;              ///< catalogue key, also the `gpu` property of platform hosts
  double peak_fp32_flops = 0;    ///< FLOP/s, datasheet peak single precision (boost clock)
  double peak_fp16_flops = 0;    ///< FLOP/s, datasheet peak half precision (tensor cores where the GPU has them);
                                 ///< 0 where the datasheet gives no FP16 figure (no fast FP16 on that GPU)
  double memory_bytes_per_s = 0; ///< bytes/s, datasheet memory bandwidth
  std::string source;            ///< where the two numbers were read
};

/** @brief Every catalogued GPU. */
const std::vector<GpuSpec>& gpu_catalog();

/** @brief Entry by name (case-sensitive); nullptr if the GPU is not catalogued. */
const GpuSpec* find_gpu(const std::string& name);

/** @brief Entry by name; throws ConfigError listing the known names. */
const GpuSpec& gpu_by_name(const std::string& name);

/** @brief Catalogued names, comma separated. */
std::string known_gpus();

} // namespace ddlsim::platform
