// Runs the S-SGD DAG on a SimGrid platform: one compute and one communication actor per GPU rank.
#include "engine/simulation.hpp"

#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "platform/cluster_builder.hpp"
#include "platform/gpu_catalog.hpp"
#include "platform/gpu_hosts.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <memory>
#include <mutex>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {

const std::vector<std::string>& default_simgrid_config()
{
  // CM02 with cross-traffic off and no TCP window cap: a transfer of S bytes over a route of latency L and
  // bottleneck bandwidth B takes exactly L + S/B; concurrent flows share links max-min fairly.
  static const std::vector<std::string> cfg = {"network/model:CM02", "network/crosstraffic:0",
                                               "network/TCP-gamma:0"};
  return cfg;
}

namespace {

bool g_engine_used = false;

/** Completion flags of one rank's tasks, shared by its two stream actors. */
struct RankState {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  std::vector<char> done; // [iteration * tasks + task]
};

/** One phase: the given ranks run `iterations` iterations of the DAG, each rank on two in-order streams. */
class Phase {
public:
  Phase(std::string name, const dag::IterationDag& dag, const std::vector<platform::GpuHost>& ranks,
        const collectives::Collective& collective, unsigned iterations, double reference_speed,
        const ProgressFn& progress)
      : name_(std::move(name))
      , dag_(dag)
      , collective_(collective)
      , iterations_(iterations)
      , reference_speed_(reference_speed)
      , progress_(progress)
      , compute_order_(dag.stream_tasks(dag::Stream::Compute))
      , comm_order_(dag.stream_tasks(dag::Stream::Communication))
      , world_(hosts_of(ranks), name_)
      , states_(ranks.size())
      , finished_(iterations, 0)
  {
    for (auto& s : states_)
      s.done.assign(static_cast<std::size_t>(iterations) * dag.tasks.size(), 0);
    for (const auto& r : ranks) {
      result_.hosts.push_back(r.name);
      result_.gpus.push_back(r.gpu);
    }
    result_.iterations = iterations;
  }

  /** Runs the phase to completion; must be called from an actor. */
  PhaseResult run()
  {
    start_ = sg4::Engine::get_clock();
    std::vector<sg4::ActorPtr> actors;
    for (int r = 0; r < world_.size(); ++r) {
      const std::string id = name_ + "-rank" + std::to_string(r);
      actors.push_back(sg4::Actor::create(id + "-compute", world_.host(r),
                                          [this, r] { run_stream(r, compute_order_); }));
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

private:
  static std::vector<sg4::Host*> hosts_of(const std::vector<platform::GpuHost>& ranks)
  {
    std::vector<sg4::Host*> hosts;
    for (const auto& r : ranks)
      hosts.push_back(r.host);
    return hosts;
  }

  void run_stream(int rank, const std::vector<int>& order)
  {
    RankState& state = states_[rank];
    const std::size_t tasks = dag_.tasks.size();
    for (unsigned it = 0; it < iterations_; ++it) {
      char* done = state.done.data() + it * tasks;
      for (int id : order) {
        const dag::Task& task = dag_.tasks[id];
        {
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
          state.cv->wait(lock, [&] {
            for (int d : task.deps)
              if (!done[d])
                return false;
            return true;
          });
        }
        const double start = sg4::Engine::get_clock();
        execute(rank, task);
        const double end = sg4::Engine::get_clock();
        result_.records.push_back({rank, static_cast<int>(it), id, start - start_, end - start_});
        {
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
          done[id] = 1;
          state.cv->notify_all();
        }
        if (task.kind == dag::TaskKind::Update && ++finished_[it] == static_cast<unsigned>(world_.size()) &&
            progress_)
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
      collective_.allreduce(world_, rank, task.bytes);
      break;
    }
  }

  std::string name_;
  const dag::IterationDag& dag_;
  const collectives::Collective& collective_;
  unsigned iterations_;
  double reference_speed_;
  const ProgressFn& progress_;
  std::vector<int> compute_order_;
  std::vector<int> comm_order_;
  collectives::CommWorld world_;
  std::vector<RankState> states_;
  std::vector<unsigned> finished_;
  PhaseResult result_;
  double start_ = 0;
};

void apply_config(const std::string& cfg)
{
  const auto colon = cfg.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == cfg.size())
    throw ConfigError("--cfg must be KEY:VALUE (got '" + cfg + "')");
  try {
    sg4::Engine::set_config(cfg);
  } catch (const std::exception& e) {
    const std::string what = e.what(); // SimGrid appends the list of every key: keep the first line
    throw ConfigError("--cfg '" + cfg + "': " + what.substr(0, what.find('\n')));
  }
}

double reference_speed(const proto::Workload& w, const std::string& workload_name)
{
  const auto* spec = platform::find_gpu(w.reference_gpu());
  if (spec == nullptr)
    throw InputError(workload_name + ": reference_gpu '" + w.reference_gpu() +
                     "' is not in the GPU catalogue (known: " + platform::known_gpus() + ")");
  return spec->peak_fp32_flops;
}

} // namespace

SimulationOutput simulate(const SimulationInput& input)
{
  if (g_engine_used)
    throw Error("internal: SimGrid allows one simulation per process");
  if (input.iterations == 0)
    throw ConfigError("--iterations must be >= 1 (got 0)");
  if (!input.cluster && !readable_file(input.platform_file))
    throw InputError(input.platform_file + ": cannot open platform file");
  const double ref_speed = reference_speed(input.workload, "workload");
  auto collective = collectives::make_collective(input.algorithm);
  for (const auto& cfg : input.simgrid_cfg)
    if (cfg.find(':') == std::string::npos)
      throw ConfigError("--cfg must be KEY:VALUE (got '" + cfg + "')");
  g_engine_used = true;

  std::vector<std::string> args = {"ddlsim", "--log=root.thresh:warning"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());

  SimulationOutput out;
  for (const auto& cfg : default_simgrid_config())
    apply_config(cfg);
  for (const auto& cfg : input.simgrid_cfg)
    apply_config(cfg);
  out.simgrid_cfg = default_simgrid_config();
  out.simgrid_cfg.insert(out.simgrid_cfg.end(), input.simgrid_cfg.begin(), input.simgrid_cfg.end());

  if (input.cluster) {
    platform::build_cluster(*input.cluster); // validated by the caller; no file to read
  } else {
    try {
      engine.load_platform(input.platform_file);
    } catch (const std::exception& e) {
      throw InputError(input.platform_file + ": invalid platform: " + e.what());
    }
  }

  const auto gpus = platform::find_gpu_hosts(engine.get_all_hosts(), input.platform_file);
  std::vector<std::string> names;
  for (const auto& g : gpus)
    names.push_back(g.name);
  std::vector<platform::GpuHost> ranks;
  for (std::size_t i : platform::select_rank_hosts(names, input.hosts, input.ranks, input.platform_file)) {
    ranks.push_back(gpus[i]);
    out.hosts.push_back(gpus[i].name);
  }
  out.dag = dag::build_iteration_dag(input.workload, input.schedule);
  if (input.dry_run)
    return out;

  sg4::Actor::create("ddlsim-driver", ranks[0].host, [&] {
    if (input.single_gpu_baseline && ranks.size() > 1)
      out.single = Phase("single", out.dag, {ranks[0]}, *collective, input.iterations, ref_speed, input.progress).run();
    out.multi = Phase("multi", out.dag, ranks, *collective, input.iterations, ref_speed, input.progress).run();
  });
  engine.run();

  const std::size_t expected = ranks.size() * input.iterations * out.dag.tasks.size();
  if (out.multi.records.size() != expected)
    throw Error("the simulation stopped before every task completed (" + std::to_string(out.multi.records.size()) +
                " of " + std::to_string(expected) + " tasks): SimGrid found a deadlock");
  return out;
}

} // namespace ddlsim::engine
