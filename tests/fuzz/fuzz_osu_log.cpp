// Fuzz target: measured logs read by `collective --compare`, every format (cli::parse_measurements).
#include "cli/measured_log.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(
      data, size, [](const std::string& text) { ddlsim::cli::parse_measurements(text, "fuzz.log", "auto", 1000); });
}
