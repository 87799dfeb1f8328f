// The size-switch form of an --algorithm value ("rd<=8KiB,hd"), parsed in one place.
#include "common/algorithm_spec.hpp"

#include "common/strings.hpp"

namespace ddlsim {

std::optional<SizeSwitchSpec> parse_size_switch(const std::string& algorithm)
{
  const auto comma = algorithm.find(',');
  const auto le = algorithm.find("<=");
  if (comma == std::string::npos || le == std::string::npos || le > comma)
    return std::nullopt;
  return SizeSwitchSpec{algorithm.substr(0, le),
                        parse_bytes(algorithm.substr(le + 2, comma - le - 2), "--algorithm " + algorithm),
                        algorithm.substr(comma + 1)};
}

} // namespace ddlsim
