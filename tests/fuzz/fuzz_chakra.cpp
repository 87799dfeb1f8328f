// Fuzz target: the Chakra execution-trace importer (workload::import_chakra) and its exporter on what it read.
#include "fuzz_common.hpp"
#include "workload/chakra.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  return ddlsim::fuzz::run(data, size, [](const std::string& bytes) {
    ddlsim::workload::ImportMetadata meta;
    meta.model = "fuzz";
    meta.reference_gpu = "P40";
    meta.batch = 32;
    const auto imported = ddlsim::workload::import_chakra({{"fuzz.0.et", bytes}}, meta);
    ddlsim::workload::parse_workload(ddlsim::workload::to_textproto(imported.workload), "again.textproto");
    // what was read exports and reads back to the same layers
    const auto again = ddlsim::workload::import_chakra(
        {{"again.0.et", ddlsim::workload::export_chakra(imported.workload).bytes}}, meta);
    if (again.workload.layers_size() != imported.workload.layers_size())
      __builtin_trap();
    for (int i = 0; i < again.workload.layers_size(); ++i)
      if (again.workload.layers(i).name() != imported.workload.layers(i).name() ||
          again.workload.layers(i).gradient_bytes() != imported.workload.layers(i).gradient_bytes())
        __builtin_trap();
  });
}
