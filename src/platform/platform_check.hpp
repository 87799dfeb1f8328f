// Platform XML checked before SimGrid sees it: well-formed, valid against ddlsim's DTD, references resolved,
// nesting bounded, every host reachable from every other (docs/platform-validation.md).
#pragma once

#include <string>

namespace ddlsim::platform {

/** @brief Deepest <zone> nesting accepted (SimGrid 3.32's parser corrupts its heap from 498 levels). */
inline constexpr int kMaxZoneDepth = 64;

/** @brief Checks the platform document `xml` read from `file` (named in messages); throws InputError
 *  "FILE: line N: what is wrong" on the first problem. Work is linear in the size of the document. */
void check_platform_xml(const std::string& xml, const std::string& file);

/** @brief True when the platform document `xml` may change a resource over time: a profile (a `*_file` attribute:
 *  bandwidth, latency, speed, state or availability) or a <trace> / <trace_connect> element. Errs on the side of true
 *  (any such text, even in a comment): false is a promise that every link and host keeps its values. */
bool has_profiles(const std::string& xml);

/** @brief True when the platform document `xml` may change a link's latency over time: a `latency_file` attribute or a
 *  <trace_connect kind="LATENCY">. Errs on the side of true (any such text): engine::stalled_message() then names
 *  SimGrid 3.32's defect with latency changes as the likely cause of a stalled run. */
bool has_latency_profiles(const std::string& xml);

} // namespace ddlsim::platform
