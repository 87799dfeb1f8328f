// GPU hosts of a loaded platform and the mapping of worker ranks onto them.
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief Host property that marks a host as a GPU and names its model (e.g. <prop id="gpu" value="P40"/>). */
inline constexpr const char* kGpuProperty = "gpu";

/** @brief A GPU host of the platform. */
struct GpuHost {
  simgrid::s4u::Host* host = nullptr;
  std::string name;
  std::string gpu;          ///< value of the `gpu` property
  double speed_flops = 0;   ///< host speed, FLOP/s
};

/** @brief Every host carrying the `gpu` property, in natural name order ("n1-gpu2" < "n1-gpu10").
 *  A host naming a catalogued GPU must have that GPU's catalogue speed (InputError otherwise). */
std::vector<GpuHost> find_gpu_hosts(const std::vector<simgrid::s4u::Host*>& all_hosts, const std::string& platform_file);

/** @brief Chooses the hosts of ranks 0..n-1 (pure logic, no SimGrid needed):
 *  - with `explicit_hosts`: exactly those, in that order (each must be a GPU host, no repeats; `ranks`, if
 *    not 0, must equal their number);
 *  - otherwise the first `ranks` GPU hosts in natural order (all of them when `ranks` is 0).
 *  Returns indices into `gpu_names`. Throws ConfigError with the reason. */
std::vector<std::size_t> select_rank_hosts(const std::vector<std::string>& gpu_names,
                                           const std::vector<std::string>& explicit_hosts, unsigned ranks,
                                           const std::string& platform_file);

} // namespace ddlsim::platform
