// JSON printing of protobuf messages, one convention for every file ddlsim writes.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ddlsim {

/** @brief JSON with the .proto field names (snake_case) in .proto order, indented by one space a level, every field
 *  printed, zeros included; 64-bit integers as numbers where a double holds them exactly (protobuf's own printer
 *  writes them as strings), doubles in their shortest exact form. protobuf's JSON parser reads it back. */
std::string message_to_json(const google::protobuf::Message& message);

} // namespace ddlsim
