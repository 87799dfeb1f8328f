// GPU hosts of a loaded platform.
#include "platform/gpu_hosts.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ddlsim::platform {

std::vector<GpuHost> find_gpu_hosts(const std::vector<simgrid::s4u::Host*>& all_hosts, const std::string& platform_file)
{
  std::vector<GpuHost> gpus;
  for (auto* host : all_hosts) {
    const char* gpu = host->get_property(kGpuProperty);
    if (gpu == nullptr)
      continue;
    GpuHost g{host, host->get_name(), gpu, host->get_speed()};
    if (g.gpu.empty())
      throw InputError(platform_file + ": host '" + g.name + "': property 'gpu' is empty (name the GPU model)");
    if (const GpuSpec* spec = find_gpu(g.gpu)) {
      if (std::fabs(g.speed_flops - spec->peak_fp32_flops) > 1e-9 * spec->peak_fp32_flops) {
        std::ostringstream ss;
        ss << platform_file << ": host '" << g.name << "': speed " << g.speed_flops << " flop/s differs from the "
           << g.gpu << " catalogue speed " << spec->peak_fp32_flops
           << " flop/s (use the catalogue speed, or a GPU name that is not in the catalogue)";
        throw InputError(ss.str());
      }
    }
    gpus.push_back(std::move(g));
  }
  if (gpus.empty()) // CPU-only nodes (ddlsim platform --gpus-per-node 0): the ranks are the CPU hosts
    for (auto* host : all_hosts)
      if (host->get_property(kCpuProperty) != nullptr)
        gpus.push_back({host, host->get_name(), "cpu", host->get_speed()});
  std::sort(gpus.begin(), gpus.end(), [](const GpuHost& a, const GpuHost& b) { return natural_less(a.name, b.name); });
  return gpus;
}

} // namespace ddlsim::platform
