// The SimGrid settings ddlsim starts from, and the syntax check of a --cfg value (no SimGrid header).
#pragma once

#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief SimGrid settings ddlsim starts from: exact alpha-beta with max-min sharing (docs/network-model.md). */
const std::vector<std::string>& default_simgrid_config();

/** @brief Throws ConfigError unless `cfg` is KEY:VALUE with both parts non-empty. */
void check_config_syntax(const std::string& cfg);

} // namespace ddlsim::engine
