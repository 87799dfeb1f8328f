// OSU micro-benchmark latency logs (`collective --compare`): the measured sizes and latencies, checked line by line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief One measured size of an OSU latency log. */
struct Measurement {
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::string processes; ///< N of an "N,SIZE" line (empty if the line has no count)
  int line = 0;
};

/** @brief An OSU latency log: lines "SIZE LATENCY_US" or "N,SIZE LATENCY_US" (N: the process count), '#' comments;
 *  at most `max_rows` measurements. Throws InputError "PATH: line N: ..." naming what is wrong. */
std::vector<Measurement> parse_osu_log(const std::string& text, const std::string& path, std::size_t max_rows);

} // namespace ddlsim::cli
