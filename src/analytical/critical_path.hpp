// Closed-form iteration time of a DAG: its longest path, given each task's duration.
#pragma once

#include "dag/dag.hpp"

#include <functional>
#include <vector>

namespace ddlsim::analytical {

/** @brief A task's time in seconds. */
using DurationFn = std::function<double(const dag::Task&)>;

/** @brief Finish time of every task of one iteration when each starts as soon as its dependencies of the same
 *  iteration end (the streams' order is already encoded as edges by the DAG builder). */
std::vector<double> finish_times(const dag::IterationDag& dag, const DurationFn& duration);

/** @brief Length of the longest path of one iteration: the iteration time of one isolated rank. */
double critical_path_s(const dag::IterationDag& dag, const DurationFn& duration);

/** @brief End of each of `iterations` iterations of the unrolled DAG (the last finish of the tasks that end it,
 *  dag::ends_iteration) when every task
 *  starts as soon as its dependencies end, without contention; under CommPolicy::Priority the ready aggregation of
 *  lowest priority is committed whenever the bytes in flight allow, and committed ones run one after the other, as
 *  the engine's scheduler does. */
std::vector<double> iteration_ends_s(const dag::IterationDag& dag, unsigned iterations, const DurationFn& duration);

} // namespace ddlsim::analytical
