// JSON printing of protobuf messages, one convention for every file ddlsim writes.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ddlsim {

/** @brief JSON with the .proto field names (snake_case), indented, every field printed, zeros included. */
std::string message_to_json(const google::protobuf::Message& message);

} // namespace ddlsim
