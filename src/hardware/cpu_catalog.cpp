// CPU catalogue: every number is a vendor product-specification figure, cited per entry.
#include "hardware/cpu_catalog.hpp"

namespace ddlsim::platform {

const std::vector<CpuSpec>& cpu_catalog()
{
  // Fields: name, sockets, cores per socket, base clock, FP32 FLOP/cycle per core, memory bandwidth, source.
  static const std::vector<CpuSpec> catalog = {
      // Broadwell-EP: two AVX2 FMA units x 8 FP32 lanes x 2 = 32 FLOP/cycle; 4 channels of DDR4-2400 per socket.
      {"2x-Xeon-E5-2698-v4", 2, 20, 2.2e9, 32, 2 * 76.8e9,
       "Intel ARK, Xeon E5-2698 v4 (20 cores, 2.20 GHz base, 4 memory channels DDR4-2400, max memory bandwidth "
       "76.8 GB/s per socket); NVIDIA DGX-1 datasheet (2 x Xeon E5-2698 v4); 32 FP32 FLOP/cycle: Intel 64 and IA-32 "
       "Architectures Optimization Reference Manual, Broadwell microarchitecture (two 256-bit FMA ports)"},
      // AWS p2.8xlarge (the TensorFlow 2017 K80 benchmarks): 32 vCPUs = 16 physical cores of a custom Broadwell.
      {"p2.8xlarge-Xeon-E5-2686-v4", 2, 8, 2.3e9, 32, 2 * 76.8e9,
       "AWS EC2 P2 instance page (p2.8xlarge: 32 vCPUs, Intel Xeon E5-2686 v4 at 2.3 GHz); the E5-2686 v4 is a custom "
       "part not on Intel ARK: its memory bandwidth is ASSUMED equal to the E5-2600 v4 family's 76.8 GB/s per "
       "socket (4 channels DDR4-2400) and the 16 cores ASSUMED split over 2 sockets"},
  };
  return catalog;
}

const CpuSpec& default_cpu()
{
  return cpu_catalog().front();
}

const CpuSpec* find_cpu(const std::string& name)
{
  for (const auto& c : cpu_catalog())
    if (c.name == name)
      return &c;
  return nullptr;
}

std::string known_cpus()
{
  std::string out;
  for (const auto& c : cpu_catalog())
    out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

} // namespace ddlsim::platform
