// `ddlsim collective`'s engine: one allreduce per message size, all ranks starting each size together.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/algorithm_table.hpp"
#include "collectives/options.hpp"
#include "platform/cluster_spec.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::engine {

/** @brief What `ddlsim collective` needs: one algorithm, a list of message sizes. */
struct SweepInput {
  std::string platform_file;
  std::optional<platform::ClusterSpec> cluster; ///< set: build this cluster in memory (platform_file names it)
  collectives::AlgorithmSpec algorithm;
  collectives::CollectiveOptions collective;
  unsigned ranks = 0;
  std::vector<std::string> hosts;
  std::vector<std::string> simgrid_cfg;
  std::vector<std::uint64_t> sizes; ///< bytes, in order
  /** Called after each size: its index, and its time in seconds. May be empty. */
  std::function<void(std::size_t, double)> progress;
  /** Called with the ranks' hosts once the platform is open, before anything is simulated. May be empty. */
  std::function<void(const std::vector<std::string>&)> check_hosts;
};

/** @brief One size of a sweep. */
struct SweepPoint {
  std::uint64_t bytes = 0;
  double time_s = 0;                 ///< from the common start to the last rank holding the result
  std::uint64_t rank_bytes_sent = 0; ///< all ranks together (servers not included)
  std::uint64_t rank_messages = 0;   ///< messages sent by all ranks together (servers not included)
};

/** @brief Sweep results and what the closed forms know about the platform. */
struct SweepOutput {
  std::vector<std::string> hosts;
  std::vector<std::string> simgrid_cfg;
  std::vector<SweepPoint> points;
  std::vector<int> node_of_rank;
  collectives::ClosedFormInput closed_form; ///< ranks, nodes, knobs and worst routes by role
};

/** @brief Runs one allreduce of each size, one after the other. One engine per process, like simulate(). */
SweepOutput run_collective_sweep(const SweepInput& input);

} // namespace ddlsim::engine
