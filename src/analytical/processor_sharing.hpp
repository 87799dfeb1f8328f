// Flows of one size sharing one link equally: when each ends (SimGrid's max-min sharing on that link alone).
#pragma once

#include <vector>

namespace ddlsim::analytical {

/** @brief When each of n transfers ends that share a link of `capacity` (bytes/s) equally while they run, the k-th
 *  (from 0) running from `arrivals[k]` (s, nondecreasing) until it has been given `work` bytes of the link: a
 *  processor-sharing queue with deterministic arrivals, each of the m transfers running at once getting capacity / m
 *  (those that arrived together end together, the earlier ones first). */
std::vector<double> processor_sharing_ends(const std::vector<double>& arrivals, double work, double capacity);

} // namespace ddlsim::analytical
