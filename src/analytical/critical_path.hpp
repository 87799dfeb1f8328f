// Closed-form iteration time of a DAG: its longest path, given each task's duration.
#pragma once

#include "dag/dag.hpp"

#include <functional>
#include <vector>

namespace ddlsim::analytical {

/** @brief Finish time of every task when each starts as soon as its dependencies end (the streams' order
 *  is already encoded as edges by the DAG builder). `duration(task)` gives the task's time in seconds. */
std::vector<double> finish_times(const dag::IterationDag& dag, const std::function<double(const dag::Task&)>& duration);

/** @brief Length of the longest path: the iteration time of one isolated rank (or of lock-step ranks). */
double critical_path_s(const dag::IterationDag& dag, const std::function<double(const dag::Task&)>& duration);

} // namespace ddlsim::analytical
