// The mapping of worker ranks onto GPU hosts (pure logic, no SimGrid).
#include "platform/rank_mapping.hpp"

#include "common/error.hpp"

#include <unordered_map>

namespace ddlsim::platform {

std::vector<std::size_t> select_rank_hosts(const std::vector<std::string>& gpu_names,
                                           const std::vector<std::string>& explicit_hosts, unsigned ranks,
                                           const std::string& platform_file)
{
  if (gpu_names.empty())
    throw InputError(platform_file + ": no GPU host (a GPU host is a <host> with <prop id=\"gpu\" value=\"MODEL\"/>)");
  std::vector<std::size_t> chosen;
  if (!explicit_hosts.empty()) {
    if (ranks != 0 && ranks != explicit_hosts.size())
      throw ConfigError(field("ranks") + " " + std::to_string(ranks) + " disagrees with the " +
                        std::to_string(explicit_hosts.size()) + " hosts given in " + field("hosts"));
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < gpu_names.size(); ++i)
      index.emplace(gpu_names[i], i);
    std::vector<bool> used(gpu_names.size(), false);
    for (const auto& name : explicit_hosts) {
      auto it = index.find(name);
      if (it == index.end())
        throw ConfigError(field("hosts") + ": '" + name + "' is not a GPU host of " + platform_file);
      if (used[it->second])
        throw ConfigError(field("hosts") + ": '" + name + "' is listed twice");
      used[it->second] = true;
      chosen.push_back(it->second);
    }
    return chosen;
  }
  const std::size_t n = ranks == 0 ? gpu_names.size() : ranks;
  if (n > gpu_names.size())
    throw ConfigError(field("ranks") + " " + std::to_string(n) + " exceeds the " + std::to_string(gpu_names.size()) +
                      " GPU hosts of " + platform_file);
  for (std::size_t i = 0; i < n; ++i)
    chosen.push_back(i);
  return chosen;
}

} // namespace ddlsim::platform
