// Chakra execution traces (ASTRA-sim 2.0's workload format) in and out: per-layer data-parallel traces only.
#pragma once

#include "proto/workload.pb.h"
#include "workload/importers.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::workload {

/** @brief One Chakra ET file: its name (for messages and its rank, NAME.<rank>.et) and its bytes. */
struct ChakraFile {
  std::string name;
  std::string bytes;
};

/** @brief What an import read, besides the workload: one line per fact a user should know. */
struct ChakraImport {
  proto::Workload workload;
  std::vector<std::string> notes; ///< e.g. "3 passes of the same iteration: read one"
};

/** @brief Most nodes one file may hold (4 per layer of the largest workload); refused while reading. */
inline constexpr std::int64_t kMaxChakraNodes = std::int64_t(4) << 20;

/** @brief Reads the per-layer data-parallel traces that Chakra's text converter writes (and export_chakra):
 *  compute nodes COMP_NODE_<layer>_FWD / _BWD_WG / _BWD_IG (the phase and the layer come from the name; the
 *  layers are in the order their forward nodes take in the dependency order), and all-reduce nodes
 *  (COMM_COLL_NODE, comm_type ALL_REDUCE) whose comm_size becomes the gradient bytes of the layer of the one
 *  backward compute node they depend on. forward_s = FWD duration, backward_s = BWD_WG + BWD_IG durations
 *  (duration_micros / 1e6). Several passes must repeat one iteration exactly. Several files (ranks) must agree on
 *  layers and bytes; times are rank 0's. Anything else is refused: InputError "FILE: node ID ('NAME'): ..." or
 *  "FILE: byte N: ..." for framing. `meta` fills what a trace does not carry (GPU, batch, io/h2d/update). */
ChakraImport import_chakra(const std::vector<ChakraFile>& files, const ImportMetadata& meta);

/** @brief A workload as one rank's Chakra ET (every rank of a data-parallel run has the same file). */
struct ChakraExport {
  std::string bytes;
  int rounded = 0;         ///< durations not a whole number of microseconds (rounded to the nearest)
  double max_change_s = 0; ///< largest change rounding made, seconds
};

/** @brief GlobalMetadata, then per layer a COMP_NODE_<layer>_FWD node (forward order, each depending on the
 *  previous), then from the last layer to the first COMP_NODE_<layer>_BWD_WG (the whole backward time; it depends
 *  on the node before it) and, for a layer with gradient bytes, COMM_COLL_NODE_<layer>_ALLREDUCE depending on it.
 *  io_s, h2d_s and update_s have no node (the import takes them as options). */
ChakraExport export_chakra(const proto::Workload& w);

} // namespace ddlsim::workload
