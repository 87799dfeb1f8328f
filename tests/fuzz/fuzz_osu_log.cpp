// Fuzz target: OSU latency logs read by `collective --compare` (cli::parse_osu_log).
#include "cli/osu_log.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size,
                           [](const std::string& text) { ddlsim::cli::parse_osu_log(text, "fuzz.log", 1000); });
}
