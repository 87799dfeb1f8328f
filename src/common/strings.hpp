// Small string helpers: checked number parsing, natural ordering, human-readable units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim {

/** @brief "a, b, c": the items joined by `separator`. */
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

/** @brief Splits on a separator; empty pieces are kept. */
std::vector<std::string> split(const std::string& text, char sep);

/** @brief Parses a whole string as a positive integer; throws ConfigError naming `what` otherwise. */
std::uint64_t parse_positive_int(const std::string& text, const std::string& what);

/** @brief "gpu2" < "gpu10": compares digit runs by value, everything else byte-wise. */
bool natural_less(const std::string& a, const std::string& b);

/** @brief "4B", "8KiB", "1MiB", "1GiB", "10KB" (10^3), "2MB" -> bytes; a unit is required except for "0"; throws
 *  ConfigError naming `what` and listing the units. */
std::uint64_t parse_bytes(const std::string& text, const std::string& what);

/** @brief "32us", "1.5ms", "2s", "5ns" -> seconds, >= 0 and finite; a unit is required except for "0" (a bare
 *  number is refused: "32" meant as microseconds would be read as 32 s); "-0" is refused like any negative time.
 *  Throws ConfigError naming `what` and listing the units. */
double parse_seconds(const std::string& text, const std::string& what);

/** @brief 0.0123 -> "12.300 ms": seconds with an SI prefix, 3 decimals. */
std::string format_seconds(double seconds);

/** @brief 102228128 -> "97.49 MiB": bytes with a binary prefix. */
std::string format_bytes(double bytes);

/** @brief Shortest decimal form that reads back as the same double: 0.0005 -> "0.0005", NaN -> "nan". */
std::string format_double(double value);

/** @brief `text` without a leading UTF-8 byte-order mark (spreadsheets write one), then checked to be valid UTF-8:
 *  throws InputError "FILE: line N, column C: invalid UTF-8 (byte 0xNN)" otherwise. */
std::string checked_utf8(const std::string& text, const std::string& file);

/** @brief True when the file exists and can be opened for reading. */
bool readable_file(const std::string& path);

/** @brief Whole file as a string; throws InputError naming the file when it cannot be read. */
std::string read_file(const std::string& path);

} // namespace ddlsim
