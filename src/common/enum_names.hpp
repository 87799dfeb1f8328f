// One name table per enum: parsing, printing and the list of accepted names all read it.
#pragma once

#include "common/error.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim {

/** @brief The names of an enum's values, in the order they are listed to users. */
template <class E>
using NameTable = std::vector<std::pair<E, const char*>>;

/** @brief "a, b, c": every name of the table, joined by `separator`. */
template <class E>
std::string names_of(const NameTable<E>& table, const char* separator = ", ")
{
  std::string out;
  for (const auto& [value, name] : table)
    out += (out.empty() ? "" : separator) + std::string(name);
  return out;
}

/** @brief The value named `text`, if any. */
template <class E>
std::optional<E> find_name(const NameTable<E>& table, const std::string& text)
{
  for (const auto& [value, name] : table)
    if (text == name)
      return value;
  return std::nullopt;
}

/** @brief The value named `text`; throws ConfigError "WHAT must be one of: a, b (got 'x')". */
template <class E>
E parse_name(const NameTable<E>& table, const std::string& text, const std::string& what)
{
  if (const auto value = find_name(table, text))
    return *value;
  throw ConfigError(what + " must be one of: " + names_of(table) + " (got '" + text + "')");
}

/** @brief The name of `value` (every value has one). */
template <class E>
const char* name_of(const NameTable<E>& table, E value)
{
  for (const auto& [v, name] : table)
    if (v == value)
      return name;
  throw Error("internal: an enum value without a name");
}

} // namespace ddlsim
