// Fuzz target: the per-layer CSV importer (workload::import_csv), header mode chosen by the first byte.
#include "fuzz_common.hpp"
#include "workload/importers.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using ddlsim::workload::CsvHeader;
  const CsvHeader header = size == 0 ? CsvHeader::Auto : CsvHeader(data[0] % 3);
  return ddlsim::fuzz::run(data, size, [header](const std::string& text) {
    ddlsim::workload::ImportMetadata meta;
    meta.model = "fuzz";
    meta.reference_gpu = "P40";
    meta.batch = 32;
    const auto w = ddlsim::workload::import_csv(text, "fuzz.csv", header, meta);
    ddlsim::workload::parse_workload(ddlsim::workload::to_json(w), "again.json"); // an import is a valid workload
  });
}
