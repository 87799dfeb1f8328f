// Measured latency logs for `collective --compare`: OSU (plain and -f), nccl-tests and CSV, checked line by line.
#include "cli/measured_log.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace ddlsim::cli {

/** The --compare formats (docs/collectives.md, "Comparing with a measurement"). */
const std::vector<std::string>& compare_formats()
{
  static const std::vector<std::string> formats = {"auto", "osu", "nccl-tests", "csv"};
  return formats;
}

namespace {

std::string trim(const std::string& s)
{
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split_fields(const std::string& line, char separator)
{
  std::vector<std::string> fields;
  if (separator == ' ') {
    std::istringstream in(line);
    for (std::string f; in >> f;)
      fields.push_back(f);
    return fields;
  }
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator))
    fields.push_back(trim(field));
  if (!line.empty() && line.back() == separator)
    fields.emplace_back();
  return fields;
}

bool is_count(const std::string& s)
{
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s[0] != '0';
}

/** A size in bytes (a bare integer, as every tool writes it, or with a ddlsim unit), > 0. */
std::uint64_t measured_size(const std::string& field, const std::string& where)
{
  const bool bare = !field.empty() && field.find_first_not_of("0123456789") == std::string::npos;
  std::uint64_t size = 0;
  try {
    size = parse_bytes(bare ? field + "B" : field, "size");
  } catch (const ConfigError&) {
    throw InputError(where + ": bad message size '" + field + "'");
  }
  if (size == 0)
    throw InputError(where + ": message size must be > 0 bytes (got '" + field + "')");
  return size;
}

double measured_seconds(const std::string& field, const std::string& where, const std::string& column)
{
  char* end = nullptr;
  const double us = std::strtod(field.c_str(), &end);
  if (field.empty() || *end != '\0' || !std::isfinite(us) || us <= 0)
    throw InputError(where + ": " + column + " must be a positive number of microseconds (got '" + field + "')");
  return us * 1e-6;
}

/** Calls `fn(number, trimmed line, "PATH: line N")` for every line that is neither blank nor a '#' comment. */
template <class Fn>
void for_each_data_line(std::istream& in, const std::string& path, Fn fn)
{
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string t = trim(line);
    if (!t.empty() && t[0] != '#')
      fn(number, t, path + ": line " + std::to_string(number));
  }
}

/** The format of a log: nccl-tests by its "# nThread" / column header lines, CSV by a header line of names
 *  separated by commas, OSU otherwise. */
std::string detect_format(const std::string& text)
{
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (t.empty())
      continue;
    if (t[0] == '#') {
      if (t.find("nThread") != std::string::npos || t.find("out-of-place") != std::string::npos ||
          (t.find(" count ") != std::string::npos && t.find("busbw") != std::string::npos))
        return "nccl-tests";
      continue;
    }
    return std::isalpha(static_cast<unsigned char>(t[0])) && t.find(',') != std::string::npos ? "csv" : "osu";
  }
  return "osu";
}

/** OSU's osu_allreduce: "SIZE AVG_US" (plain) or "SIZE AVG_US MIN_US MAX_US ITERATIONS" (-f), '#' comments; a
 *  size may be "N,SIZE" (N: the process count, as the logs in data/ carry it). */
void read_osu(std::istream& in, const std::string& path, std::vector<Measurement>& rows)
{
  for_each_data_line(in, path, [&](int number, const std::string& t, const std::string& where) {
    const auto f = split_fields(t, ' ');
    if (f.size() != 2 && f.size() != 5)
      throw InputError(where + ": expected 'SIZE LATENCY_US' or OSU -f's 'SIZE AVG MIN MAX ITERATIONS' (got '" + t +
                       "')");
    std::string size_field = f[0];
    std::string processes;
    const auto comma = size_field.find(',');
    if (comma != std::string::npos) {
      processes = size_field.substr(0, comma);
      size_field = size_field.substr(comma + 1);
      if (!is_count(processes))
        throw InputError(where + ": the process count before ',' must be a positive integer (got '" + processes + "')");
    }
    const std::uint64_t size = measured_size(size_field, where);
    const double avg = measured_seconds(f[1], where, "latency");
    if (f.size() == 5) {
      const double lo = measured_seconds(f[2], where, "min latency");
      const double hi = measured_seconds(f[3], where, "max latency");
      if (!(lo <= avg && avg <= hi))
        throw InputError(where + ": need min <= avg <= max latency (got '" + t + "')");
      if (!is_count(f[4]))
        throw InputError(where + ": iterations must be a positive integer (got '" + f[4] + "')");
    }
    rows.push_back({size, avg, processes, number});
  });
}

/** nccl-tests' *_perf: the column header "# size count type redop [root] time algbw busbw error|#wrong ..." names
 *  the columns (the out-of-place time is the first "time"); "#  Rank N ..." lines count the processes. */
void read_nccl_tests(std::istream& in, const std::string& path, std::vector<Measurement>& rows)
{
  int number = 0;
  std::size_t size_col = 0, time_col = 0, columns = 0;
  int ranks = 0;
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string t = trim(line);
    if (t.empty())
      continue;
    if (t[0] == '#') {
      const auto f = split_fields(t.substr(1), ' ');
      if (!f.empty() && f[0] == "Rank")
        ++ranks;
      const auto time = std::find(f.begin(), f.end(), "time");
      if (!header && !f.empty() && f[0] == "size" && time != f.end()) {
        header = true;
        size_col = 0;
        time_col = static_cast<std::size_t>(time - f.begin());
        columns = f.size();
      }
      continue;
    }
    const std::string where = path + ": line " + std::to_string(number);
    if (!header)
      throw InputError(where + ": a row before nccl-tests' column header ('#  size  count  type ... time ...')");
    const auto f = split_fields(t, ' ');
    if (f.size() != columns)
      throw InputError(where + ": expected " + std::to_string(columns) + " columns as the header names (got " +
                       std::to_string(f.size()) + ")");
    rows.push_back({measured_size(f[size_col], where), measured_seconds(f[time_col], where, "time"),
                    ranks > 0 ? std::to_string(ranks) : std::string(), number});
  }
}

/** CSV: a header naming "bytes" (or "size") and "latency_us" (or "time_us"), optionally "processes"; other
 *  columns are ignored. */
void read_csv(std::istream& in, const std::string& path, std::vector<Measurement>& rows)
{
  std::vector<std::string> names;
  std::ptrdiff_t size_col = -1, time_col = -1, proc_col = -1;
  for_each_data_line(in, path, [&](int number, const std::string& t, const std::string& where) {
    const auto f = split_fields(t, ',');
    if (names.empty()) {
      names = f;
      const auto col = [&](std::initializer_list<const char*> choices) -> std::ptrdiff_t {
        for (const char* c : choices) {
          const auto it = std::find(names.begin(), names.end(), c);
          if (it != names.end())
            return it - names.begin();
        }
        return -1;
      };
      size_col = col({"bytes", "size"});
      time_col = col({"latency_us", "time_us"});
      proc_col = col({"processes"});
      if (size_col < 0 || time_col < 0)
        throw InputError(where + ": the CSV header needs columns 'bytes' (or 'size') and 'latency_us' (or 'time_us')");
      return;
    }
    if (f.size() != names.size())
      throw InputError(where + ": expected " + std::to_string(names.size()) + " fields as the header names (got " +
                       std::to_string(f.size()) + ")");
    std::string processes;
    if (proc_col >= 0) {
      processes = f[proc_col];
      if (!is_count(processes))
        throw InputError(where + ": processes must be a positive integer (got '" + processes + "')");
    }
    rows.push_back(
        {measured_size(f[size_col], where), measured_seconds(f[time_col], where, names[time_col]), processes, number});
  });
}

} // namespace

std::vector<Measurement> parse_measurements(const std::string& text, const std::string& path, const std::string& format,
                                            std::size_t max_rows)
{
  const std::string chosen = format == "auto" ? detect_format(text) : format;
  std::istringstream in(text);
  std::vector<Measurement> rows;
  if (chosen == "nccl-tests")
    read_nccl_tests(in, path, rows);
  else if (chosen == "csv")
    read_csv(in, path, rows);
  else
    read_osu(in, path, rows);
  if (rows.empty())
    throw InputError(path + ": no measurements (read as " + chosen + ")");
  if (rows.size() > max_rows)
    throw InputError(path + ": line " + std::to_string(rows[max_rows].line) + ": more than " +
                     std::to_string(max_rows) + " measurements (at most " + std::to_string(max_rows) +
                     " sizes per sweep)");
  return rows;
}

} // namespace ddlsim::cli
