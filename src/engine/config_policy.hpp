// The --cfg keys and values ddlsim refuses because SimGrid 3.32 crashes, aborts or silently ignores them.
#pragma once

#include <string>

namespace ddlsim::engine {

/** @brief Smallest and largest accepted contexts/stack-size, in KiB (SimGrid segfaults on 1 and on -1). */
inline constexpr long kMinStackKiB = 64;
inline constexpr long kMaxStackKiB = 1L << 20;

/** @brief Throws ConfigError for a KEY:VALUE (syntax already checked) that ddlsim knows to be dangerous: tracing
 *  (ddlsim writes its own timeline; several combinations abort), contexts/nthreads other than 1, a stack size
 *  outside [64 KiB, 1 GiB], an unknown context factory, a network, host or CPU model outside the tested list.
 *  docs/platform-validation.md lists them with the reason for each. */
void check_config_safety(const std::string& cfg);

} // namespace ddlsim::engine
