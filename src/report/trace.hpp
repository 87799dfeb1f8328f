// Chrome trace (chrome://tracing, Perfetto) of a simulation phase: one row per GPU stream.
#pragma once

#include "dag/dag.hpp"
#include "dag/records.hpp"

#include <set>
#include <string>

namespace ddlsim::report {

/** @brief Which ranks and iterations (0-based) a trace keeps; empty: all. */
struct TraceFilter {
  std::set<int> ranks;
  std::set<int> iterations;
};

/** @brief Trace Event Format JSON: every task as a complete event ("ph": "X") with its start and duration in
 *  microseconds; process = rank (named after its host), thread 0 = compute stream, 1 = input, 2 = fusion cycle,
 *  3 + k = communication stream k. Every message of `phase.transfers` between two kept ranks inside kept
 *  aggregation slices is a flow arrow: "s" on the sender's slice at the message's start, "f" ("bp": "e") on the
 *  receiver's slice at its end, both at least 1 ns inside their slice. */
std::string chrome_trace(const dag::IterationDag& dag, const dag::PhaseResult& phase, const TraceFilter& filter = {});

} // namespace ddlsim::report
