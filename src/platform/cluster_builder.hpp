// Builds a generated cluster in memory with the SimGrid C++ API (no XML, no per-node-pair routes).
#pragma once

#include "platform/cluster_spec.hpp"

namespace ddlsim::platform {

/** @brief Creates the platform of a validated spec in the running SimGrid engine (call after the engine and its
 *  configuration exist, instead of loading an XML file). Same hosts, links and per-node routes as
 *  platform_xml(spec), but the nodes hang from a SimGrid star zone (star topology) or from leaf star zones
 *  under a star of leaf uplinks (fat-tree), so memory grows linearly with the number of nodes. */
void build_cluster(const ClusterSpec& spec);

} // namespace ddlsim::platform
