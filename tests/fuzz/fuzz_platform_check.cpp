// Fuzz target: the platform XML check that runs before SimGrid reads a file (platform::check_platform_xml).
#include "fuzz_common.hpp"
#include "platform/platform_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size,
                           [](const std::string& text) { ddlsim::platform::check_platform_xml(text, "fuzz.xml"); });
}
