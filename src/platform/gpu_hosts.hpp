// GPU hosts of a loaded platform (the mapping of ranks onto them: rank_mapping.hpp).
#pragma once

#include "platform/rank_mapping.hpp"

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief Host property that marks a host as a GPU and names its model (e.g. <prop id="gpu" value="P40"/>). */
inline constexpr const char* kGpuProperty = "gpu";
/** @brief The property of a generated node's CPU host (<prop id="cpu" .../>): the rank hosts of a platform with no
 *  GPU host (CPU-only nodes, `ddlsim platform --gpus-per-node 0`). */
inline constexpr const char* kCpuProperty = "cpu";

/** @brief A GPU host of the platform. */
struct GpuHost {
  simgrid::s4u::Host* host = nullptr;
  std::string name;
  std::string gpu;        ///< value of the `gpu` property
  double speed_flops = 0; ///< host speed, FLOP/s
};

/** @brief Every host carrying the `gpu` property, in natural name order ("n1-gpu2" < "n1-gpu10").
 *  A host naming a catalogued GPU must have that GPU's catalogue speed (InputError otherwise). A platform with no
 *  such host gives its hosts carrying the `cpu` property instead (gpu "cpu"): CPU-only nodes. */
std::vector<GpuHost> find_gpu_hosts(const std::vector<simgrid::s4u::Host*>& all_hosts,
                                    const std::string& platform_file);

} // namespace ddlsim::platform
