// The --cfg keys and values ddlsim refuses because SimGrid 3.32 crashes, aborts or silently ignores them.
#pragma once

#include <string>

namespace ddlsim::engine {

/** @brief Smallest and largest accepted contexts/stack-size, in KiB (SimGrid segfaults on 1 and on -1). */
inline constexpr long kMinStackKiB = 64;
inline constexpr long kMaxStackKiB = 1L << 20;

/** @brief Accepted maxmin/precision (SimGrid's default 1e-5): 0, negative values and 1e-11 abort in SimGrid's max-min
 *  solver (`Cannot saturate more a constraint that has no active element`, ps message by message on 16 one-GPU nodes
 *  over 10GbE); 1e-9 ran there and on the 1,024-GPU ring, 64-GPU hd and 72-GPU tree and ps; above 1e-3 the solver's
 *  rounding is as large as the shares it decides. */
inline constexpr double kMinMaxminPrecision = 1e-9;
inline constexpr double kMaxMaxminPrecision = 1e-3;
/** @brief Accepted surf/precision, seconds (SimGrid's default 1e-9): 0 and negative values hang (the run never ends);
 *  1e-12 and 1e-15 ran; above a microsecond the simulated times round by more than a hop's latency. */
inline constexpr double kMinSurfPrecision = 1e-12;
inline constexpr double kMaxSurfPrecision = 1e-6;

/** @brief Throws ConfigError for a KEY:VALUE (syntax already checked) that ddlsim knows to be dangerous: tracing
 *  (ddlsim writes its own timeline; several combinations abort), contexts/nthreads other than 1, a stack size
 *  outside [64 KiB, 1 GiB], an unknown context factory, a network, host or CPU model outside the tested list, a
 *  maxmin/precision or surf/precision outside the ranges above. docs/safety.md lists them with the reason for each. */
void check_config_safety(const std::string& cfg);

} // namespace ddlsim::engine
