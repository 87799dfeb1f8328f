// The command line's names for the library's fields: errors from below name fields, users see flags.
#pragma once

#include <string>

namespace ddlsim::cli {

/** @brief The flag that sets library field `name` ("ps_servers" -> "--servers"; by default "--" + the name with
 *  '_' as '-'). */
std::string flag_for(const std::string& name);

/** @brief `message_template` with every field mark rendered as its flag. */
std::string with_flags(const std::string& message_template);

} // namespace ddlsim::cli
