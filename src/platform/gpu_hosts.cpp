// GPU hosts of a loaded platform and the mapping of worker ranks onto them.
#include "platform/gpu_hosts.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "platform/gpu_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

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
  std::sort(gpus.begin(), gpus.end(), [](const GpuHost& a, const GpuHost& b) { return natural_less(a.name, b.name); });
  return gpus;
}

std::vector<std::size_t> select_rank_hosts(const std::vector<std::string>& gpu_names,
                                           const std::vector<std::string>& explicit_hosts, unsigned ranks,
                                           const std::string& platform_file)
{
  if (gpu_names.empty())
    throw InputError(platform_file + ": no GPU host (a GPU host is a <host> with <prop id=\"gpu\" value=\"MODEL\"/>)");
  std::vector<std::size_t> chosen;
  if (!explicit_hosts.empty()) {
    if (ranks != 0 && ranks != explicit_hosts.size())
      throw ConfigError("--ranks " + std::to_string(ranks) + " disagrees with the " +
                        std::to_string(explicit_hosts.size()) + " hosts given in --hosts");
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < gpu_names.size(); ++i)
      index.emplace(gpu_names[i], i);
    std::vector<bool> used(gpu_names.size(), false);
    for (const auto& name : explicit_hosts) {
      auto it = index.find(name);
      if (it == index.end())
        throw ConfigError("--hosts: '" + name + "' is not a GPU host of " + platform_file);
      if (used[it->second])
        throw ConfigError("--hosts: '" + name + "' is listed twice");
      used[it->second] = true;
      chosen.push_back(it->second);
    }
    return chosen;
  }
  const std::size_t n = ranks == 0 ? gpu_names.size() : ranks;
  if (n > gpu_names.size())
    throw ConfigError("--ranks " + std::to_string(n) + " exceeds the " + std::to_string(gpu_names.size()) +
                      " GPU hosts of " + platform_file);
  for (std::size_t i = 0; i < n; ++i)
    chosen.push_back(i);
  return chosen;
}

} // namespace ddlsim::platform
