#include "analytical/processor_sharing.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <deque>
#include <utility>

namespace ddlsim::analytical {

std::vector<double> processor_sharing_ends(const std::vector<double>& arrivals, double work, double capacity)
{
  if (!(capacity > 0) || !(work >= 0))
    throw Error("internal: processor_sharing_ends needs a capacity > 0 and work >= 0");
  if (!std::is_sorted(arrivals.begin(), arrivals.end()))
    throw Error("internal: processor_sharing_ends needs arrivals in order of time");
  const std::size_t n = arrivals.size();
  std::vector<double> ends(n, 0.0);
  // Every running transfer has been given the same since the oldest arrived: `given` counts it (bytes per transfer),
  // and each transfer keeps `given` at its arrival, so it is done when `given` has grown by `work` since. The oldest
  // running one is always the first to finish (first in, first out).
  std::deque<std::pair<std::size_t, double>> running; // index, `given` at its arrival
  double t = n > 0 ? arrivals.front() : 0.0;
  double given = 0;
  std::size_t next = 0;
  while (next < n || !running.empty()) {
    if (running.empty()) {
      t = std::max(t, arrivals[next]);
      running.emplace_back(next++, given);
      continue;
    }
    const double rate = capacity / double(running.size());
    const double left = std::max(0.0, work - (given - running.front().second));
    const double done_at = t + left / rate;
    if (next < n && arrivals[next] < done_at) {
      given += rate * (arrivals[next] - t);
      t = arrivals[next];
      running.emplace_back(next++, given);
      continue;
    }
    given = running.front().second + work;
    t = done_at;
    ends[running.front().first] = t;
    running.pop_front();
  }
  return ends;
}

} // namespace ddlsim::analytical
