// Fuzz target: sizes and times with units (parse_bytes, parse_seconds), positive integers, and --algorithm texts
// whose size thresholds use them (collectives::parse_algorithm).
#include "collectives/algorithm_spec.hpp"
#include "common/strings.hpp"
#include "fuzz_common.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace ddlsim;
  fuzz::run(data, size, [](const std::string& text) { parse_bytes(text, "size"); });
  fuzz::run(data, size, [](const std::string& text) {
    const double s = parse_seconds(text, "time");
    if (!std::isfinite(s) || s < 0 || std::signbit(s))
      __builtin_trap(); // the documented contract
  });
  fuzz::run(data, size, [](const std::string& text) { parse_positive_int(text, "count"); });
  fuzz::run(data, size, [](const std::string& text) { collectives::parse_algorithm(text); });
  return 0;
}
