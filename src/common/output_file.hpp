// Every output file ddlsim writes goes through here: written beside the target, then renamed over it.
#pragma once

#include <string>

namespace ddlsim {

/** @brief Writes `content` to `path`: first to a temporary file in the same directory, then renamed, so an
 *  interrupted run never leaves a half-written file. Throws WriteError naming the path and the reason. */
void write_output_file(const std::string& path, const std::string& content);

} // namespace ddlsim
