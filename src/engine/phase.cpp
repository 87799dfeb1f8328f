// One phase of a training simulation: a set of ranks runs the DAG, each rank on two in-order stream actors.
#include "engine/phase.hpp"

#include "engine/setup.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <mutex>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

/** Completion flags of one rank's tasks, shared by its two stream actors. SimGrid runs actors one at a
 *  time and switches only inside simcalls, so the flags can be read without the mutex; the mutex and the
 *  condition variable are used only when a stream actually has to wait (most tasks never do, and every
 *  simcall costs a context switch). */
struct RankState {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  std::vector<char> done; // [iteration * tasks + task]
  int waiting = 0;        // stream actors inside the slow path
};

} // namespace

/** The phase's state: the given ranks run `iterations` iterations of the DAG, each rank on two in-order streams. */
struct Phase::Impl {
public:
  explicit Impl(PhaseSpec spec)
      : name_(std::move(spec.name))
      , dag_(*spec.dag)
      , collective_(*spec.collective)
      , iterations_(spec.iterations)
      , reference_speed_(spec.reference_speed)
      , progress_(*spec.progress)
      , compute_order_(dag_.stream_tasks(dag::Stream::Compute))
      , comm_order_(dag_.stream_tasks(dag::Stream::Communication))
      , world_(hosts_of(spec.ranks), spec.node_of_rank, spec.options, name_)
      , group_(world_)
      , states_(spec.ranks.size())
      , finished_(spec.iterations, 0)
  {
    const unsigned iterations = spec.iterations;
    for (auto& s : states_)
      s.done.assign(static_cast<std::size_t>(iterations) * dag_.tasks.size(), 0);
    for (const auto& r : spec.ranks) {
      result_.hosts.push_back(r.name);
      result_.gpus.push_back(r.gpu);
    }
    result_.iterations = iterations;
    result_.records.reserve(spec.ranks.size() * iterations * dag_.tasks.size());
    collective_.prepare(world_); // outside any actor: may throw ConfigError
  }

  /** Runs the phase to completion; must be called from an actor. */
  dag::PhaseResult run()
  {
    start_ = sg4::Engine::get_clock();
    std::vector<std::uint64_t> sequence;
    for (unsigned it = 0; it < iterations_; ++it)
      for (int id : comm_order_)
        sequence.push_back(dag_.tasks[id].bytes);
    std::vector<sg4::ActorPtr> actors = collective_.start(world_, sequence);
    for (int r = 0; r < world_.size(); ++r) {
      const std::string id = name_ + "-rank" + std::to_string(r);
      actors.push_back(
          sg4::Actor::create(id + "-compute", world_.host(r), [this, r] { run_stream(r, compute_order_); }));
      if (!comm_order_.empty())
        actors.push_back(sg4::Actor::create(id + "-comm", world_.host(r), [this, r] { run_stream(r, comm_order_); }));
    }
    for (auto& a : actors)
      a->join();
    result_.duration_s = sg4::Engine::get_clock() - start_;
    for (int r = 0; r < world_.size(); ++r) {
      result_.bytes_sent.push_back(world_.bytes_sent(r));
      result_.bytes_received.push_back(world_.bytes_received(r));
    }
    return std::move(result_);
  }

  void run_stream(int rank, const std::vector<int>& order)
  {
    RankState& state = states_[rank];
    const std::size_t tasks = dag_.tasks.size();
    for (unsigned it = 0; it < iterations_; ++it) {
      char* done = state.done.data() + it * tasks;
      for (int id : order) {
        const dag::Task& task = dag_.tasks[id];
        auto ready = [&] {
          for (int d : task.deps)
            if (!done[d])
              return false;
          return true;
        };
        if (!ready()) {
          ++state.waiting; // before the lock: a notifier that runs meanwhile sees it
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
          state.cv->wait(lock, ready);
          --state.waiting;
        }
        const double start = sg4::Engine::get_clock();
        execute(rank, task);
        const double end = sg4::Engine::get_clock();
        result_.records.push_back(dag::TaskRecord{rank, static_cast<int>(it), id, start - start_, end - start_});
        done[id] = 1;
        if (state.waiting > 0) {
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
          state.cv->notify_all();
        }
        if (task.kind == dag::TaskKind::Update && ++finished_[it] == static_cast<unsigned>(world_.size()) && progress_)
          progress_(name_, it, end - start_);
      }
    }
  }

  void execute(int rank, const dag::Task& task)
  {
    switch (task.kind) {
    case dag::TaskKind::Io:
    case dag::TaskKind::H2d: // fixed times: they do not depend on the GPU
      if (task.duration_s > 0)
        sg4::this_actor::sleep_for(task.duration_s);
      break;
    case dag::TaskKind::Forward:
    case dag::TaskKind::Backward:
    case dag::TaskKind::Update: // reference-GPU time replayed as work, so a faster GPU takes less time
      if (task.duration_s > 0)
        sg4::this_actor::execute(task.duration_s * reference_speed_);
      break;
    case dag::TaskKind::Aggregation:
      collective_.allreduce(group_, rank, task.bytes);
      break;
    }
  }

  std::string name_;
  const dag::IterationDag& dag_;
  const collectives::Collective& collective_;
  unsigned iterations_;
  double reference_speed_;
  const dag::ProgressFn& progress_;
  std::vector<int> compute_order_;
  std::vector<int> comm_order_;
  collectives::CommWorld world_;
  collectives::Group group_;
  std::vector<RankState> states_;
  std::vector<unsigned> finished_;
  dag::PhaseResult result_;
  double start_ = 0;
};

Phase::Phase(PhaseSpec spec)
    : impl_(std::make_unique<Impl>(std::move(spec)))
{
}

Phase::~Phase() = default;

dag::PhaseResult Phase::run()
{
  return impl_->run();
}

} // namespace ddlsim::engine
