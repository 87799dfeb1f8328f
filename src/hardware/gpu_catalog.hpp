// Catalogue of GPU models: datasheet peak throughput, memory bandwidth and interconnects, with sources.
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
  std::string source;            ///< where the three numbers were read
  // How the GPU connects (read by the cluster generator, src/platform/cluster_spec.cpp):
  int pcie_generation = 3;         ///< host interface: PCIe x16 of this generation (3: PCIe 3.0, 4: PCIe 4.0)
  int nvlink_generation = 0;       ///< 0: no NVLink; 1, 2, 3: NVLink 1.0, 2.0, 3.0
  int nvlink_links = 0;            ///< NVLink links per GPU (0 without NVLink)
  int gpus_per_board = 1;          ///< GPUs on one board behind the board's PCIe switch and its one x16 link
  std::string chip;                ///< the GPU chip when an entry is one GPU of a multi-GPU board ("GK210")
  std::string interconnect_source; ///< where the interconnect facts were read
  // What --gpu-interference auto reads (docs/frameworks.md, interference):
  int sm_count = 0;           ///< streaming multiprocessors of one GPU (of the chip, for a multi-GPU board)
  int compute_capability = 0; ///< CUDA compute capability x 10 (37: 3.7)
  std::string sm_source;      ///< where the two were read
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
