// Small string helpers: checked number parsing, natural ordering, human-readable units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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

/** @brief Names the field of a line of a file that holds byte `column` (0-based) of `line_text`; "" when unknown. */
using FieldOfColumn = std::function<std::string(const std::string& line_text, std::size_t column)>;

/** @brief `text` without a leading UTF-8 byte-order mark (spreadsheets write one), then checked to be valid UTF-8:
 *  throws InputError "FILE: line N, column C: FIELD: invalid UTF-8 (byte 0xNN)" otherwise, FIELD from `field_of`
 *  (left out when it is empty or returns ""). */
std::string checked_utf8(const std::string& text, const std::string& file, const FieldOfColumn& field_of = {});

/** @brief The key a `key: value` line of protobuf text format or JSON assigns at byte `column` (0-based) of `line`:
 *  the last identifier or quoted string before a ':' outside quotes, "comment" after a '#' outside quotes, ""
 *  when there is none. For checked_utf8(). */
std::string key_at_column(const std::string& line, std::size_t column);

/** @brief True when the file exists and can be opened for reading. */
bool readable_file(const std::string& path);

/** @brief Whole file as a string; throws InputError naming the file when it cannot be read. */
std::string read_file(const std::string& path);

} // namespace ddlsim
