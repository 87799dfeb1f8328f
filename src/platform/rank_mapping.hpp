// The mapping of worker ranks onto GPU hosts (pure logic, no SimGrid).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief Chooses the hosts of ranks 0..n-1 :
 *  - with `explicit_hosts`: exactly those, in that order (each must be a GPU host, no repeats; `ranks`, if
 *    not 0, must equal their number);
 *  - otherwise the first `ranks` GPU hosts in natural order (all of them when `ranks` is 0).
 *  Returns indices into `gpu_names`. Throws ConfigError with the reason. */
std::vector<std::size_t> select_rank_hosts(const std::vector<std::string>& gpu_names,
                                           const std::vector<std::string>& explicit_hosts, unsigned ranks,
                                           const std::string& platform_file);

} // namespace ddlsim::platform
