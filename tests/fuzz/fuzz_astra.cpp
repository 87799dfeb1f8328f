// Fuzz target: the ASTRA-sim 1.0 data-parallel importer (workload::import_astra).
#include "fuzz_common.hpp"
#include "workload/importers.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& text) {
    ddlsim::workload::ImportMetadata meta;
    meta.model = "fuzz";
    meta.reference_gpu = "P40";
    meta.batch = 32;
    const auto w = ddlsim::workload::import_astra(text, "fuzz.txt", 1e9, meta);
    ddlsim::workload::parse_workload(ddlsim::workload::to_textproto(w), "again.textproto");
  });
}
