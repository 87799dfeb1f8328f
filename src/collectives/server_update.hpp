// The work of a parameter server that sums pushes and runs the optimizer update on its host (no SimGrid).
#pragma once

#include "collectives/options.hpp"

#include <cstdint>

namespace ddlsim::collectives {

/** @brief An optimizer's cost per FP32 parameter, from its update rule (docs/frameworks.md, "Optimizer costs"). */
struct OptimizerCost {
  Optimizer id;
  const char* name;
  double flop_per_param;  ///< arithmetic of one parameter's update
  double bytes_per_param; ///< memory traffic of one parameter's update: 4 bytes per FP32 read or written
  const char* rule;       ///< the update rule and where it is written down
};

/** @brief The row of `id`. */
const OptimizerCost& optimizer_cost(Optimizer id);
/** @brief Name table order: sgd, momentum, adam. */
const OptimizerCost* find_optimizer(const char* name);
/** @brief "sgd, momentum, adam". */
const char* known_optimizers();

/** @brief Seconds a server of `rate` takes to sum `pushes` gradients of `bytes` each and update `bytes` of FP32
 *  parameters with `optimizer`: max(F / flops, T / memory bandwidth), F = ((pushes - 1) + flop_per_param) x bytes/4,
 *  T = (pushes + 1 + bytes_per_param / 4) x bytes (the sum reads every push and writes one buffer; the update then
 *  reads and writes what its rule touches). 0 for 0 bytes. */
double server_update_s(const ServerRate& rate, int pushes, std::uint64_t bytes, Optimizer optimizer);

} // namespace ddlsim::collectives
