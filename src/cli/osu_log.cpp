// OSU micro-benchmark latency logs (`collective --compare`): the measured sizes and latencies, checked line by line.
#include "cli/osu_log.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace ddlsim::cli {

std::vector<Measurement> parse_osu_log(const std::string& text, const std::string& path, std::size_t max_rows)
{
  std::istringstream in(text);
  std::vector<Measurement> rows;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#')
      continue;
    std::istringstream fields(line);
    std::string size_field, latency_field, extra;
    fields >> size_field >> latency_field;
    const std::string where = path + ": line " + std::to_string(number);
    if (latency_field.empty() || (fields >> extra))
      throw InputError(where + ": expected 'SIZE LATENCY_US' (got '" + line + "')");
    const auto comma = size_field.find(',');
    std::string processes;
    if (comma != std::string::npos) {
      processes = size_field.substr(0, comma);
      size_field = size_field.substr(comma + 1);
      if (processes.empty() || processes.find_first_not_of("0123456789") != std::string::npos || processes[0] == '0')
        throw InputError(where + ": the process count before ',' must be a positive integer (got '" + processes + "')");
    }
    // OSU logs give sizes in bytes, without a unit; a unit is accepted too
    const bool bare = !size_field.empty() && size_field.find_first_not_of("0123456789") == std::string::npos;
    std::uint64_t size = 0;
    try {
      size = parse_bytes(bare ? size_field + "B" : size_field, "size");
    } catch (const ConfigError&) {
      throw InputError(where + ": bad message size '" + size_field + "'");
    }
    if (size == 0)
      throw InputError(where + ": message size must be > 0 bytes (got '" + size_field + "')");
    if (rows.size() == max_rows)
      throw InputError(where + ": more than " + std::to_string(max_rows) + " measurements (at most " +
                       std::to_string(max_rows) + " sizes per sweep)");
    char* end = nullptr;
    const double us = std::strtod(latency_field.c_str(), &end);
    if (*end != '\0' || !std::isfinite(us) || us <= 0)
      throw InputError(where + ": latency must be a positive number of microseconds (got '" + latency_field + "')");
    rows.push_back({size, us * 1e-6, processes, number});
  }
  if (rows.empty())
    throw InputError(path + ": no measurements");
  return rows;
}

} // namespace ddlsim::cli
