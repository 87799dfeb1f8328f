// Fuzz target: `--cluster` strings (platform::parse_cluster_string); the canonical form must read back the same.
#include "fuzz_common.hpp"
#include "platform/cluster_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& text) {
    const auto spec = ddlsim::platform::parse_cluster_string(text);
    const std::string canonical = ddlsim::platform::to_cluster_string(spec);
    if (ddlsim::platform::to_cluster_string(ddlsim::platform::parse_cluster_string(canonical)) != canonical)
      __builtin_trap();
  });
}
