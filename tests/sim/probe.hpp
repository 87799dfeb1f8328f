// Point-to-point probes for platform tests: one SimGrid engine per process, ddlsim's default network config.
#pragma once

#include "platform/cluster_spec.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ddlsim::test {

/** @brief One transfer of a probe step. */
struct Transfer {
  std::string src;
  std::string dst;
  double bytes = 0;
};

/** @brief A SimGrid engine with ddlsim's default configuration (engine::default_simgrid_config()) and a
 *  platform, loaded from XML or built in memory. SimGrid allows one engine per process: one per TEST_CASE. */
class ProbeEngine {
public:
  explicit ProbeEngine(const std::string& platform_file);
  explicit ProbeEngine(const platform::ClusterSpec& spec);

  simgrid::s4u::Engine& engine() { return *engine_; }

  /** Names of every host carrying the `gpu` property, in natural order. */
  std::vector<std::string> gpu_hosts() const;

  /** Latency of the route src -> dst (s) and the names of its links; throws if there is none. */
  double route_latency_s(const std::string& src, const std::string& dst) const;
  std::vector<std::string> route_links(const std::string& src, const std::string& dst) const;

  /** Runs the steps one after the other; the transfers of a step start together. Returns each step's duration
   *  (from its start until its last transfer completes), s. Call once. */
  std::vector<double> run(const std::vector<std::vector<Transfer>>& steps);

private:
  void configure();
  std::unique_ptr<simgrid::s4u::Engine> engine_;
};

} // namespace ddlsim::test
