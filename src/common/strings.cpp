// Small string helpers: checked number parsing, natural ordering, human-readable units.
#include "common/strings.hpp"

#include "common/error.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace ddlsim {

std::string join(const std::vector<std::string>& items, const std::string& separator)
{
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : separator) + items[i];
  return out;
}

std::vector<std::string> split(const std::string& text, char sep)
{
  std::vector<std::string> out;
  std::string piece;
  std::istringstream in(text);
  while (std::getline(in, piece, sep))
    out.push_back(piece);
  if (!text.empty() && text.back() == sep)
    out.emplace_back();
  return out;
}

std::uint64_t parse_positive_int(const std::string& text, const std::string& what)
{
  if (text.empty() || text.size() > 18)
    throw ConfigError(what + " must be a positive integer (got '" + text + "')");
  std::uint64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw ConfigError(what + " must be a positive integer (got '" + text + "')");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value == 0)
    throw ConfigError(what + " must be a positive integer (got '" + text + "')");
  return value;
}

bool natural_less(const std::string& a, const std::string& b)
{
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])))
        ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])))
        ++ej;
      // Compare numerically without overflow: strip leading zeros, then length, then digits.
      std::size_t si = i;
      std::size_t sj = j;
      while (si + 1 < ei && a[si] == '0')
        ++si;
      while (sj + 1 < ej && b[sj] == '0')
        ++sj;
      if (ei - si != ej - sj)
        return ei - si < ej - sj;
      const int cmp = a.compare(si, ei - si, b, sj, ej - sj);
      if (cmp != 0)
        return cmp < 0;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j])
        return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j)
    return a.size() - i < b.size() - j;
  return a < b; // same natural key (e.g. "a01" vs "a1"): fall back to bytes for a strict order
}

std::uint64_t parse_bytes(const std::string& text, const std::string& what)
{
  static const char* const kAccepted = "B, KiB, MiB, GiB, TiB, KB, MB, GB, TB";
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
    ++digits;
  const std::string unit = text.substr(digits);
  static const std::pair<const char*, std::uint64_t> units[] = {
      {"B", 1},        {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20},   {"GiB", 1ULL << 30},     {"TiB", 1ULL << 40},
      {"KB", 1000ULL}, {"MB", 1000000ULL},  {"GB", 1000000000ULL}, {"TB", 1000000000000ULL}};
  if (digits == 0 || digits > 15)
    throw ConfigError(what + ": expected a size such as 4B, 8KiB, 1MiB or 1GiB (got '" + text + "')");
  const std::uint64_t number = std::stoull(text.substr(0, digits));
  if (unit.empty()) {
    if (number == 0) // zero bytes is zero in every unit
      return 0;
    throw ConfigError(what + ": a size needs a unit: " + kAccepted + " (got '" + text + "'; write " + text +
                      "B for bytes)");
  }
  for (const auto& [name, factor] : units)
    if (unit == name) {
      if (number > std::numeric_limits<std::uint64_t>::max() / factor)
        throw ConfigError(what + ": byte count too large (got '" + text + "')");
      return number * factor;
    }
  throw ConfigError(what + ": unknown byte unit '" + unit + "' in '" + text + "' (use " + kAccepted + ")");
}

double parse_seconds(const std::string& text, const std::string& what)
{
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  const std::string unit(end == nullptr ? "" : end);
  double factor = 0;
  if (unit == "s")
    factor = 1;
  else if (unit == "ms")
    factor = 1e-3;
  else if (unit == "us")
    factor = 1e-6;
  else if (unit == "ns")
    factor = 1e-9;
  // strtod also reads hexadecimal, "inf" and "nan": only a plain decimal number is a time
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789.eE+-") >= std::size_t(end - begin);
  if (end == begin || !decimal || !std::isfinite(value) || value < 0 || std::signbit(value) ||
      std::isspace(static_cast<unsigned char>(text[0])))
    throw ConfigError(what + ": expected a time >= 0 such as 32us, 1.5ms or 2s (got '" + text + "')");
  if (unit.empty() && value == 0) // zero seconds is zero in every unit
    return 0;
  if (unit.empty())
    throw ConfigError(what + ": a time needs a unit: s, ms, us, ns (got '" + text + "')");
  if (factor == 0)
    throw ConfigError(what + ": unknown time unit '" + unit + "' in '" + text + "' (use s, ms, us, ns)");
  return value * factor;
}

std::string format_seconds(double seconds)
{
  char buf[64];
  const double mag = std::fabs(seconds);
  if (mag >= 1e6 || !std::isfinite(seconds))
    std::snprintf(buf, sizeof buf, "%.6g s", seconds);
  else if (mag >= 1.0 || seconds == 0.0)
    std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  else if (mag >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  else if (mag >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f ns", seconds * 1e9);
  return buf;
}

std::string format_bytes(double bytes)
{
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[u]);
  return buf;
}

std::string format_double(double value)
{
  // No decimal of fewer significant digits than the shortest that reads back (to_chars; "inf", "nan": none) does:
  // "%.*g" from there, one print and one read in most cases (from precision 1, up to 17 of each: 2.6 % of dbtree's
  // instructions at 1,024 GPUs, for its report). (A precision of 0 prints as 1.)
  char buf[64];
  int shortest = 0;
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  for (const char* c = buf; ec == std::errc() && c != end && *c != 'e'; ++c)
    shortest += std::isdigit(static_cast<unsigned char>(*c)) ? 1 : 0;
  for (int precision = shortest; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value || std::isnan(value))
      break;
  }
  return buf;
}

std::string checked_utf8(const std::string& text, const std::string& file, const FieldOfColumn& field_of)
{
  const std::size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  int line = 1;
  std::size_t line_start = start;
  for (std::size_t i = start; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (b < 0x80)
      n = 1, cp = b;
    else if ((b & 0xE0) == 0xC0)
      n = 2, cp = b & 0x1F;
    else if ((b & 0xF0) == 0xE0)
      n = 3, cp = b & 0x0F;
    else if ((b & 0xF8) == 0xF0)
      n = 4, cp = b & 0x07;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    // no overlong forms, no surrogates, nothing above U+10FFFF
    static const std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[n] && !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
    if (!ok) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", b);
      const std::string line_text = text.substr(line_start, text.find('\n', line_start) - line_start);
      const std::string name = field_of ? field_of(line_text, i - line_start) : std::string();
      throw InputError(file + ": line " + std::to_string(line) + ", column " + std::to_string(i - line_start + 1) +
                       ": " + (name.empty() ? "" : name + ": ") + "invalid UTF-8 (byte " + byte + ")");
    }
    if (b == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += n;
  }
  return start == 0 ? text : text.substr(start);
}

std::string key_at_column(const std::string& line, std::size_t column)
{
  std::string key;  // the field being assigned
  std::string last; // the last identifier or closed string
  char quote = 0;
  std::string quoted;
  for (std::size_t i = 0; i < line.size() && i < column; ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\' && i + 1 < column)
        quoted += line[++i];
      else if (c == quote)
        quote = 0, last = quoted;
      else
        quoted += c;
    } else if (c == '"' || c == '\'') {
      quote = c, quoted.clear();
    } else if (c == '#') {
      return "comment";
    } else if (c == ':') {
      key = last;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      if (i == 0 || !(std::isalnum(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == '_'))
        last.clear();
      last += c;
    }
  }
  return key;
}

bool readable_file(const std::string& path)
{
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return false;
  std::ifstream in(path);
  return in.good();
}

std::string read_file(const std::string& path)
{
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw InputError(path + ": read error");
  return ss.str();
}

} // namespace ddlsim
