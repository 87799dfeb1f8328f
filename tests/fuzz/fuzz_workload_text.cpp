// Fuzz target: workload files in protobuf text format (workload::parse_workload).
#include "fuzz_common.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& text) {
    const auto w = ddlsim::workload::parse_workload(text, "fuzz.textproto");
    ddlsim::workload::parse_workload(ddlsim::workload::to_textproto(w), "again.textproto"); // what it writes reads back
  });
}
