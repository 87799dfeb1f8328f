// Closed-form iteration time of a DAG: its longest path, given each task's duration.
#include "analytical/critical_path.hpp"

#include <algorithm>

namespace ddlsim::analytical {

std::vector<double> finish_times(const dag::IterationDag& dag, const std::function<double(const dag::Task&)>& duration)
{
  std::vector<double> finish(dag.tasks.size(), 0.0);
  for (const auto& t : dag.tasks) { // tasks are in topological order
    double start = 0;
    for (int d : t.deps)
      start = std::max(start, finish[d]);
    finish[t.id] = start + duration(t);
  }
  return finish;
}

double critical_path_s(const dag::IterationDag& dag, const std::function<double(const dag::Task&)>& duration)
{
  const auto finish = finish_times(dag, duration);
  return finish.empty() ? 0.0 : *std::max_element(finish.begin(), finish.end());
}

} // namespace ddlsim::analytical
