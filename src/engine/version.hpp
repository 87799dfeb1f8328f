// The version of the SimGrid library ddlsim was built against.
#pragma once

#include <string>

namespace ddlsim::engine {

/** @brief "3.32.0". */
std::string simgrid_version();

} // namespace ddlsim::engine
