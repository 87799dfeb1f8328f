// How a schedule groups gradients into aggregations and when each may start (pure functions of the workload
// and the schedule's knobs; rules and sources in docs/schedules.md).
#pragma once

#include "dag/dag.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::dag {

/** @brief One aggregation a schedule asks for. */
struct PlannedAggregation {
  std::vector<int> layers; ///< layers whose gradients it carries, in backward order
  std::uint64_t bytes = 0; ///< bytes it reduces (a partition: part of one layer's gradient)
  int ready_layer = -1;    ///< it waits for this layer's backward
  double timer_s = 0;      ///< > 0: it also waits this long after timer_layer's backward (fusion cycle)
  int timer_layer = -1;
  int priority = 0; ///< Priority policy: lower is sent first
};

/** @brief What the plans read of the workload: per layer (index = layer) backward time on the ranks' GPU, and
 *  gradient bytes. */
struct LayerTimes {
  std::vector<double> backward_s;
  std::vector<std::uint64_t> bytes;
  int last_layer() const { return static_cast<int>(bytes.size()) - 1; }
  /** Seconds from the start of backward until layer l's gradient exists. */
  std::vector<double> ready_s() const;
};

/** @brief The schedule's aggregations, in launch order. */
std::vector<PlannedAggregation> plan_aggregations(const LayerTimes& layers, const ScheduleOptions& options);

} // namespace ddlsim::dag
