// The size-switch form of an --algorithm value ("rd<=8KiB,hd"), parsed in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddlsim {

/** @brief "SMALL<=SIZE,LARGE": SMALL for allreduces of up to SIZE bytes, LARGE above. */
struct SizeSwitchSpec {
  std::string small;
  std::uint64_t threshold_bytes = 0;
  std::string large;
};

/** @brief The switch, or nullopt when `algorithm` is a plain name; throws ConfigError for a bad SIZE. */
std::optional<SizeSwitchSpec> parse_size_switch(const std::string& algorithm);

} // namespace ddlsim
