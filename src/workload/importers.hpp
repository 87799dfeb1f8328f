// Importers: per-layer CSV and ASTRA-sim 1.0 data-parallel workload text into a ddlsim workload.
#pragma once

#include "proto/workload.pb.h"

#include <string>

namespace ddlsim::workload {

/** @brief Fields of the workload that the imported files do not carry. */
struct ImportMetadata {
  std::string model;         ///< model name written to the workload
  std::string reference_gpu; ///< GPU the times were taken on (catalogue name)
  unsigned batch = 0;        ///< samples per GPU per iteration, > 0
  double io_s = 0;           ///< data loading per iteration, seconds
  double h2d_s = 0;          ///< host-to-device copy per iteration, seconds
  double update_s = 0;       ///< parameter update, seconds (the ASTRA-sim importer adds the layers' update delays)
};

/** @brief How the first line of a CSV file is treated. */
enum class CsvHeader {
  Auto, ///< a header if it reads layer,forward_ms,backward_ms,gradient_bytes (any case, spaces around names), else data
  Yes,  ///< must be that header
  No    ///< every line is data
};

/** @brief Parses "auto" / "yes" / "no"; throws ConfigError naming `what` otherwise. */
CsvHeader parse_csv_header(const std::string& text, const std::string& what);

/** @brief An imported workload's header: schema version and the metadata's fields, no layers yet (every importer
 *  starts from it). */
proto::Workload workload_from_metadata(const ImportMetadata& meta);

/** @brief CSV `layer,forward_ms,backward_ms,gradient_bytes`, one layer per line in forward order; blank lines and
 *  lines starting with '#' are skipped; fields are trimmed; no quoting (names cannot contain commas).
 *  Throws InputError "<source>:<line>: ..." for a malformed line. */
proto::Workload import_csv(const std::string& text, const std::string& source, CsvHeader header,
                           const ImportMetadata& meta);

/** @brief ASTRA-sim 1.0 workload text: line 1 "DATA", line 2 the number of layers, then per layer 12
 *  whitespace-separated fields: name, reserved, forward cycles, forward comm type, forward comm bytes, input-gradient
 *  cycles, type, bytes, weight-gradient cycles, type, bytes, update delay cycles. Only data-parallel files: forward
 *  and input-gradient communication must be NONE, weight-gradient communication ALLREDUCE (its size is the layer's
 *  gradient_bytes) or NONE (no parameters). Seconds = cycles / cycles_per_s; backward = input-gradient +
 *  weight-gradient cycles; the update delays are summed into update_s. Throws InputError "<source>:<line>: ...". */
proto::Workload import_astra(const std::string& text, const std::string& source, double cycles_per_s,
                             const ImportMetadata& meta);

} // namespace ddlsim::workload
