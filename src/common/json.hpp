// JSON printing of protobuf messages, one convention for every file ddlsim writes; a scan of JSON input for what
// protobuf's parser accepts silently (repeated keys).
#pragma once

#include <google/protobuf/message.h>

#include <cstddef>
#include <string>

namespace ddlsim {

/** @brief JSON with the .proto field names (snake_case) in .proto order, indented by one space a level, every field
 *  printed, zeros included; 64-bit integers as numbers where a double holds them exactly (protobuf's own printer
 *  writes them as strings), doubles in their shortest exact form. protobuf's JSON parser reads it back. */
std::string message_to_json(const google::protobuf::Message& message);

/** @brief Scans JSON text without building it, before protobuf's parser sees it (that parser merges a repeated key:
 *  two "layers" arrays become one). Throws InputError "SOURCE: line N: duplicate key 'KEY' (first on line M)" for a
 *  key given twice in one object; keys are compared as protobuf maps them to fields (`batch_size_per_gpu` and
 *  `batchSizePerGpu` are one field; \u escapes decoded). Returns the number of elements of the array under the
 *  top-level key `counted` (0 if there is none), so that a bound can be checked before parsing. Linear in the
 *  text; malformed JSON is left to the real parser (the scan stops where it stops making sense, or beyond 1000
 *  levels of nesting). */
std::size_t check_json_keys(const std::string& text, const std::string& source, const std::string& counted);

} // namespace ddlsim
