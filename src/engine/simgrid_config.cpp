// The SimGrid settings ddlsim starts from, and the syntax check of a --cfg value.
#include "engine/simgrid_config.hpp"

#include "common/error.hpp"

namespace ddlsim::engine {

const std::vector<std::string>& default_simgrid_config()
{
  // CM02 with cross-traffic off and no TCP window cap: a transfer of S bytes over a route of latency L and
  // bottleneck bandwidth B takes exactly L + S/B; concurrent flows share links max-min fairly.
  // Actor stacks of 512 KiB instead of 8 MiB: ddlsim's actors recurse nowhere, and creating thousands of
  // 8 MiB stacks dominated the wall time of 1024-GPU runs (bench/collectives.sh). No effect on results.
  static const std::vector<std::string> cfg = {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0",
                                               "contexts/stack-size:512"};
  return cfg;
}

void check_config_syntax(const std::string& cfg)
{
  const auto colon = cfg.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == cfg.size())
    throw ConfigError(field("simgrid_cfg") + " must be KEY:VALUE (got '" + cfg + "')");
}

} // namespace ddlsim::engine
