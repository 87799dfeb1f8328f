// Fuzz target: communication stack profiles in protobuf text format (stack::parse_stack).
#include "fuzz_common.hpp"
#include "stack/stack_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size,
                           [](const std::string& text) { ddlsim::stack::parse_stack(text, "fuzz.textproto"); });
}
