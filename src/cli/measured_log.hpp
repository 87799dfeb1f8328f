// Measured latency logs for `collective --compare`: OSU (plain and -f), nccl-tests and CSV, checked line by line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief One measured size of a --compare log. */
struct Measurement {
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::string processes; ///< the process count the log states for this size (empty if it does not)
  int line = 0;
};

/** @brief The --compare formats: auto, osu, nccl-tests, csv (docs/collectives.md, "Comparing with a measurement"). */
const std::vector<std::string>& compare_formats();

/** @brief The measurements of log `text` (named `path` in errors) in `format` (auto: detected from its header
 *  lines), at most `max_rows`. Throws InputError "PATH: line N: ..." naming what is wrong. */
std::vector<Measurement> parse_measurements(const std::string& text, const std::string& path, const std::string& format,
                                            std::size_t max_rows);

} // namespace ddlsim::cli
