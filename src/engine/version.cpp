// The version of the SimGrid library ddlsim was built against.
#include "engine/version.hpp"

#include <xbt/base.h> // version.h needs its macros

#include <simgrid/version.h>

namespace ddlsim::engine {

std::string simgrid_version()
{
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) + "." +
         std::to_string(SIMGRID_VERSION_PATCH);
}

} // namespace ddlsim::engine
