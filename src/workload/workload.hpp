// Loading, validating and writing workload files (protobuf text format or JSON).
#pragma once

#include "proto/workload.pb.h"

#include <string>

namespace ddlsim::workload {

/** @brief Current workload schema version; files must declare it. */
inline constexpr unsigned kSchemaVersion = 1;

/** @brief Most layers a workload may have; parse_workload() counts them before parsing (docs/safety.md). */
inline constexpr int kMaxLayers = 1 << 20;

/** @brief Reads a workload from a .textproto/.pbtxt/.txtpb (text format) or .json file and validates it.
 *  Throws InputError naming the file, and where possible the line, field and bad value. */
proto::Workload load_workload(const std::string& path);

/** @brief Parses workload text; `format_path` decides the format by extension and names the source in errors.
 *  Before protobuf's parser sees the text: invalid UTF-8 is refused (line, column, key), a JSON key repeated in
 *  one object is refused, and the layers are counted against kMaxLayers (one linear scan). */
proto::Workload parse_workload(const std::string& text, const std::string& format_path);

/** @brief Checks every rule of the format (see workloads/README.md); throws InputError "<source>: <field>: ...". */
void validate_workload(const proto::Workload& w, const std::string& source);

/** @brief Protobuf text format of a workload (what shipped .textproto files contain). */
std::string to_textproto(const proto::Workload& w);

/** @brief JSON form of a workload, field names as in the .proto (snake_case). */
std::string to_json(const proto::Workload& w);

/** @brief Sum of gradient_bytes over layers. */
std::uint64_t total_gradient_bytes(const proto::Workload& w);

} // namespace ddlsim::workload
