// GPU catalogue: every number is a vendor datasheet figure, cited per entry.
#include "hardware/gpu_catalog.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

namespace ddlsim::platform {

const std::vector<GpuSpec>& gpu_catalog()
{
  // Fields: name, peak FP32, peak FP16, memory bandwidth, source; PCIe generation, NVLink generation, NVLink links,
  // GPUs per board, chip, interconnect source; SMs, compute capability x 10, their source.
  static const std::vector<GpuSpec> catalog = {
      // One GK210 GPU of a K80 board: the board is 8.73 TFLOP/s FP32 (GPU Boost) and 480 GB/s for two GPUs.
      {"K80", 4.365e12, 0, 240e9,
       "NVIDIA Tesla K80 datasheet (board: 8.73 TFLOPS FP32 with GPU Boost, 480 GB/s; halved per GK210; no FP16 "
       "figure)",
       3, 0, 0, 2, "GK210",
       "NVIDIA Tesla K80 board specification: two GK210 GPUs behind the board's own PCIe switch, one PCIe 3.0 x16 "
       "edge connector; no NVLink",
       13, 37,
       "K80 datasheet: 4992 CUDA cores per board, 2496 per GK210; Kepler GK110/GK210 whitepaper: 192 cores per SMX; "
       "CUDA C Programming Guide: GK210 is compute capability 3.7 (not re-read)"},
      {"P40", 12e12, 0, 346e9, "NVIDIA Tesla P40 datasheet (12 TFLOPS FP32, 346 GB/s; INT8 but no FP16 figure)", 3, 0,
       0, 1, "", "NVIDIA Tesla P40 datasheet: PCIe 3.0 x16 system interface; no NVLink", 30, 61,
       "P40 datasheet: 3840 CUDA cores; GP102 has 128 cores per SM (Pascal GP104 whitepaper, the same SM); compute "
       "capability 6.1 (CUDA C Programming Guide; not re-read)"},
      {"P100-SXM2", 10.6e12, 21.2e12, 732e9,
       "NVIDIA Tesla P100 datasheet, NVLink (SXM2) version (10.6 TFLOPS FP32, 21.2 TFLOPS FP16, 732 GB/s)", 3, 1, 4, 1,
       "", "NVIDIA Tesla P100 datasheet: NVLink 160 GB/s (4 NVLink 1.0 links); host over PCIe 3.0 x16", 56, 60,
       "NVIDIA Pascal GP100 whitepaper: Tesla P100 has 56 SMs of 64 cores (3584); compute capability 6.0 (not "
       "re-read)"},
      {"P100-PCIe", 9.3e12, 18.7e12, 732e9,
       "NVIDIA Tesla P100 datasheet, PCIe 16 GB version (9.3 TFLOPS FP32, 18.7 TFLOPS FP16, 732 GB/s)", 3, 0, 0, 1, "",
       "NVIDIA Tesla P100 datasheet: PCIe 3.0 x16 (32 GB/s both directions); no NVLink", 56, 60,
       "NVIDIA Pascal GP100 whitepaper: Tesla P100 has 56 SMs of 64 cores (3584); compute capability 6.0 (not "
       "re-read)"},
      {"V100-SXM2", 15.7e12, 125e12, 900e9,
       "NVIDIA Tesla V100 datasheet, SXM2 version (15.7 TFLOPS FP32, 125 TFLOPS tensor, 900 GB/s)", 3, 2, 6, 1, "",
       "NVIDIA Tesla V100 datasheet: NVLink 300 GB/s (6 NVLink 2.0 links); host over PCIe 3.0 x16", 80, 70,
       "NVIDIA Volta V100 whitepaper: Tesla V100 has 80 SMs of 64 FP32 cores (5120); compute capability 7.0 (not "
       "re-read)"},
      {"V100-PCIe", 14e12, 112e12, 900e9,
       "NVIDIA Tesla V100 datasheet, PCIe version (14 TFLOPS FP32, 112 TFLOPS tensor, 900 GB/s)", 3, 0, 0, 1, "",
       "NVIDIA Tesla V100 datasheet: PCIe 3.0 x16 (32 GB/s both directions); no NVLink", 80, 70,
       "NVIDIA Volta V100 whitepaper: Tesla V100 has 80 SMs of 64 FP32 cores (5120); compute capability 7.0 (not "
       "re-read)"},
      {"A100-SXM4-40GB", 19.5e12, 312e12, 1555e9,
       "NVIDIA A100 datasheet, 40 GB SXM (19.5 TFLOPS FP32, 312 TFLOPS FP16 tensor dense, 1,555 GB/s)", 4, 3, 12, 1, "",
       "NVIDIA A100 datasheet: NVLink 600 GB/s (12 NVLink 3.0 links); PCIe 4.0 x16 (64 GB/s both directions)", 108, 80,
       "NVIDIA A100 Tensor Core GPU Architecture whitepaper: A100 has 108 SMs (6912 FP32 cores); compute capability "
       "8.0 (not re-read)"},
  };
  return catalog;
}

const GpuSpec* find_gpu(const std::string& name)
{
  for (const auto& gpu : gpu_catalog())
    if (gpu.name == name)
      return &gpu;
  return nullptr;
}

const GpuSpec& gpu_by_name(const std::string& name)
{
  if (const GpuSpec* gpu = find_gpu(name))
    return *gpu;
  throw ConfigError("unknown GPU '" + name + "' (known: " + known_gpus() + ")");
}

std::string known_gpus()
{
  std::vector<std::string> names;
  for (const auto& gpu : gpu_catalog())
    names.push_back(gpu.name);
  return join(names);
}

} // namespace ddlsim::platform
