// Engine setup shared by the training simulation and the collective sweep: SimGrid configuration, the
// platform (loaded or built), its checks, and the ranks chosen on it.
#pragma once

#include "collectives/algorithm_table.hpp"
#include "collectives/collective.hpp"
#include "platform/cluster_spec.hpp"
#include "platform/gpu_hosts.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief The engine with its platform loaded and the ranks chosen. */
struct Setup {
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::vector<platform::GpuHost> ranks;
  std::vector<int> node_of_rank; ///< ranks in the same netzone share a node id (0, 1, ... by first rank)
  std::vector<std::string> simgrid_cfg;
  std::vector<std::string> host_names;
  /// No link or host of the platform changes over time: a generated cluster, or a file without profiles
  /// (platform::has_profiles, read from the document the platform check reads)
  bool static_links = false;
  /// Some link's latency may change over time (platform::has_latency_profiles): stalled_message() says what that
  /// does in SimGrid 3.32
  bool latency_profiles = false;
};

/** @brief What to open: a platform file or a cluster built in memory, which ranks, which settings. */
struct PlatformRequest {
  std::string platform_file;                    ///< XML, or a label of `cluster` in messages
  std::optional<platform::ClusterSpec> cluster; ///< when set: built in memory instead of loading XML
  unsigned ranks = 0;                           ///< 0: every GPU host
  std::vector<std::string> hosts;               ///< explicit rank -> host list
  std::vector<std::string> simgrid_cfg;         ///< "key:value" pairs applied after the defaults
};

/** @brief Creates the (one per process) engine, applies the configuration, loads and checks the platform and
 *  maps the ranks. Throws InputError for a bad platform, ConfigError for bad settings or ranks, Error when
 *  called a second time in one process. */
Setup open_platform(const PlatformRequest& request);

/** @brief The message of a run that stopped with work left (`what`: how far it got) because SimGrid found every actor
 *  waiting: a deadlock. On a platform whose link latencies change (Setup::latency_profiles), it names the likely
 *  cause: SimGrid 3.32 never ends a transfer that waits its latency when the latency of a link it crosses changes
 *  (docs/safety.md, "Latency profiles"). */
std::string stalled_message(const Setup& setup, const std::string& what);

/** @brief Ranks, nodes, the knobs and the worst route of each role of `world`, as the closed forms need them. */
collectives::ClosedFormInput closed_form_input(const collectives::CommWorld& world,
                                               const std::vector<int>& node_of_rank,
                                               const collectives::CollectiveOptions& options);

/** @brief The SimGrid hosts of `ranks`, in order. */
std::vector<simgrid::s4u::Host*> hosts_of(const std::vector<platform::GpuHost>& ranks);

} // namespace ddlsim::engine
