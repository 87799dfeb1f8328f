// The memory a training run will need, estimated before it starts and refused when the machine cannot hold it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddlsim::engine {

/** @brief What a run's memory grows with. */
struct RunSize {
  std::size_t ranks = 0;           ///< ranks of the multi-GPU phase
  unsigned iterations = 0;         ///< iterations of each phase
  std::size_t tasks = 0;           ///< tasks of one iteration's DAG
  std::size_t baseline_tasks = 0;  ///< tasks of the single-GPU baseline's DAG (0: no baseline)
  std::size_t platform_hosts = 0;  ///< hosts of the platform
  std::size_t platform_routes = 0; ///< routes of the platform (a --cluster's (G+2)^2 per node; 0 if unknown)
  bool trace = false;              ///< a Chrome trace is written (one JSON event per task record)
};

/** @brief Bytes per unit (docs/safety.md). Measured on ResNet-50, 4 ranks, 500 and 1500 iterations: 35 bytes of
 *  peak memory per task record (the record, its share of the report), doubled for the records vector's growth;
 *  310 bytes more per record with --trace (the event's JSON in memory). A task of the DAG per rank (stream actors'
 *  state), a host and a route are not measured: generous guesses. */
inline constexpr std::uint64_t kBytesPerRecord = 64;
inline constexpr std::uint64_t kBytesPerTraceEvent = 384;
inline constexpr std::uint64_t kBytesPerRankTask = 512;
inline constexpr std::uint64_t kBytesPerHost = 4096;
inline constexpr std::uint64_t kBytesPerRoute = 256;

/** @brief Estimated peak memory of a run, in bytes (saturates instead of overflowing). */
std::uint64_t estimate_run_bytes(const RunSize& size);

/** @brief This machine's physical memory in bytes (sysconf), 0 when unknown. */
std::uint64_t physical_memory_bytes();

/** @brief Throws ConfigError, with the estimate and how it was made, when estimate_run_bytes(size) exceeds
 *  `physical_bytes` (0: nothing is checked). */
void check_run_size(const RunSize& size, std::uint64_t physical_bytes);

} // namespace ddlsim::engine
