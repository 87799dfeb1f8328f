// Chrome trace (chrome://tracing, Perfetto) of a simulation phase: one row per GPU stream.
#pragma once

#include "dag/dag.hpp"
#include "dag/records.hpp"

#include <string>

namespace ddlsim::report {

/** @brief Trace Event Format JSON: every task as a complete event ("ph": "X") with its start and duration in
 *  microseconds; process = rank (named after its host), thread 0 = compute stream, 1 = communication. */
std::string chrome_trace(const dag::IterationDag& dag, const dag::PhaseResult& phase);

} // namespace ddlsim::report
