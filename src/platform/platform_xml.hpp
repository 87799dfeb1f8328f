// Writes a generated cluster as a SimGrid platform XML file (the form `ddlsim run --platform` loads).
#pragma once

#include "platform/cluster_spec.hpp"

#include <string>

namespace ddlsim::platform {

/** @brief The whole XML document of a validated spec: a diagram and the sources of every number in a comment,
 *  one Full zone per node (hosts, links, routes of NodeLayout), one zoneRoute per node pair in a Full top zone.
 *  The file grows as nodes^2; use the in-memory builder (`ddlsim run --cluster`) for large clusters. */
std::string platform_xml(const ClusterSpec& spec);

/** @brief A number with up to 12 significant digits, no trailing zeros (2.85e-6 * 1e6 -> "2.85"). */
std::string format_number(double value);

} // namespace ddlsim::platform
