// One name table per enum: parsing, printing and the list of accepted names all read it.
#pragma once

#include "common/error.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ddlsim {

/** @brief The names of an enum's values, in the order they are listed to users. */
template <class E>
using NameTable = std::vector<std::pair<E, const char*>>;

/** @brief "a, b, c": every name of the table. */
template <class E>
std::string names_of(const NameTable<E>& table)
{
  std::string out;
  for (const auto& [value, name] : table)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

/** @brief The value named `text`; throws ConfigError "WHAT must be one of: a, b (got 'x')". */
template <class E>
E parse_name(const NameTable<E>& table, const std::string& text, const std::string& what)
{
  for (const auto& [value, name] : table)
    if (text == name)
      return value;
  throw ConfigError(what + " must be one of: " + names_of(table) + " (got '" + text + "')");
}

/** @brief The name of `value` (every value has one). */
template <class E>
const char* name_of(const NameTable<E>& table, E value)
{
  for (const auto& [v, name] : table)
    if (v == value)
      return name;
  return "?";
}

} // namespace ddlsim
