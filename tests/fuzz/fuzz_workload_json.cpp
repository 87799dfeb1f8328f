// Fuzz target: workload files in JSON (workload::parse_workload: the duplicate-key scan, then protobuf's parser).
#include "fuzz_common.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& text) {
    const auto w = ddlsim::workload::parse_workload(text, "fuzz.json");
    ddlsim::workload::parse_workload(ddlsim::workload::to_json(w), "again.json"); // what it writes reads back
  });
}
