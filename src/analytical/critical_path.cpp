// Closed-form iteration time of a DAG: its longest path, given each task's duration.
#include "analytical/critical_path.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <queue>
#include <tuple>

namespace ddlsim::analytical {

std::vector<double> finish_times(const dag::IterationDag& dag, const DurationFn& duration)
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

double critical_path_s(const dag::IterationDag& dag, const DurationFn& duration)
{
  const auto finish = finish_times(dag, duration);
  return finish.empty() ? 0.0 : *std::max_element(finish.begin(), finish.end());
}

namespace {

/** The unrolled DAG run as a discrete-event simulation without contention. */
class Unrolled {
public:
  Unrolled(const dag::IterationDag& dag, unsigned iterations, const DurationFn& duration)
      : dag_(dag)
      , n_(static_cast<int>(iterations))
      , t_(static_cast<int>(dag.tasks.size()))
      , duration_(duration)
      , remaining_(static_cast<std::size_t>(n_) * t_, 0)
      , ready_(remaining_.size(), 0.0)
      , finish_(remaining_.size(), 0.0)
      , dependents_(remaining_.size())
  {
    for (int it = 0; it < n_; ++it)
      for (const auto& task : dag.tasks) {
        const int node = it * t_ + task.id;
        for (int d : task.deps)
          link(it * t_ + d, node);
        for (const auto& d : task.other)
          if (it + d.offset >= 0 && it + d.offset < n_)
            link((it + d.offset) * t_ + d.task, node);
      }
  }

  std::vector<double> run()
  {
    for (int node = 0; node < n_ * t_; ++node)
      if (remaining_[node] == 0)
        release(node, 0.0);
    launch(0.0);
    std::size_t finished = 0;
    while (!events_.empty()) {
      const auto [time, node] = events_.top();
      events_.pop();
      ++finished;
      finish_[node] = time;
      if (priority(node)) {
        --in_flight_;
        in_flight_bytes_ -= task(node).bytes;
      }
      for (int next : dependents_[node]) {
        ready_[next] = std::max(ready_[next], time);
        if (--remaining_[next] == 0)
          release(next, ready_[next]);
      }
      launch(time);
    }
    if (finished != static_cast<std::size_t>(n_) * t_)
      throw Error("internal: the DAG has a cycle");
    std::vector<double> ends(n_, 0.0);
    for (int node = 0; node < n_ * t_; ++node)
      if (dag::ends_iteration(task(node)))
        ends[node / t_] = std::max(ends[node / t_], finish_[node]);
    return ends;
  }

private:
  const dag::Task& task(int node) const { return dag_.tasks[node % t_]; }
  bool priority(int node) const
  {
    return dag_.comm_policy == dag::CommPolicy::Priority && task(node).kind == dag::TaskKind::Aggregation;
  }
  void link(int from, int to)
  {
    dependents_[from].push_back(to);
    ++remaining_[to];
  }
  void release(int node, double time)
  {
    if (priority(node))
      pending_.emplace(node / t_, task(node).priority, node);
    else
      events_.emplace(time + duration_(task(node)), node);
  }
  /** Commits the pending priority aggregations the credit allows, lowest priority first. */
  void launch(double now)
  {
    while (!pending_.empty()) {
      const int node = std::get<2>(pending_.top());
      if (in_flight_bytes_ >= dag_.credit_bytes)
        return;
      pending_.pop();
      ++in_flight_;
      in_flight_bytes_ += task(node).bytes;
      stream_free_ = std::max(now, stream_free_) + duration_(task(node)); // committed ones run one after another
      events_.emplace(stream_free_, node);
    }
  }

  const dag::IterationDag& dag_;
  int n_, t_;
  const DurationFn& duration_;
  std::vector<int> remaining_;
  std::vector<double> ready_, finish_;
  std::vector<std::vector<int>> dependents_;
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>> events_;
  std::priority_queue<std::tuple<int, int, int>, std::vector<std::tuple<int, int, int>>, std::greater<>> pending_;
  int in_flight_ = 0;
  std::uint64_t in_flight_bytes_ = 0;
  double stream_free_ = 0; ///< when the communication stream has run every committed aggregation
};

} // namespace

std::vector<double> iteration_ends_s(const dag::IterationDag& dag, unsigned iterations, const DurationFn& duration)
{
  return Unrolled(dag, iterations, duration).run();
}

} // namespace ddlsim::analytical
