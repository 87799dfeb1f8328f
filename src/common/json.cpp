// JSON printing of protobuf messages, one convention for every file ddlsim writes.
#include "common/json.hpp"

#include "common/error.hpp"

#include <google/protobuf/util/json_util.h>

namespace ddlsim {

std::string message_to_json(const google::protobuf::Message& message)
{
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok())
    throw Error("cannot print " + message.GetTypeName() + " as JSON: " + std::string(status.message()));
  return out;
}

} // namespace ddlsim
