// Runs the S-SGD DAG on a SimGrid platform: one compute and one communication actor per GPU rank.
#include "engine/simulation.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "platform/cluster_builder.hpp"
#include "platform/gpu_catalog.hpp"
#include "platform/gpu_hosts.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {

const std::vector<std::string>& default_simgrid_config()
{
  // CM02 with cross-traffic off and no TCP window cap: a transfer of S bytes over a route of latency L and
  // bottleneck bandwidth B takes exactly L + S/B; concurrent flows share links max-min fairly.
  // Actor stacks of 512 KiB instead of 8 MiB: ddlsim's actors recurse nowhere, and creating thousands of
  // 8 MiB stacks dominated the wall time of 1024-GPU runs (bench/collectives.sh). No effect on results.
  static const std::vector<std::string> cfg = {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0",
                                               "contexts/stack-size:512"};
  return cfg;
}

namespace {

bool g_engine_used = false;

/** Every task of every rank and iteration is recorded (~40 bytes): 5e8 records is about 20 GB. */
constexpr double kMaxTaskRecords = 5e8;

/** The engine with its platform loaded and the ranks chosen. */
struct Setup {
  std::unique_ptr<sg4::Engine> engine;
  std::vector<platform::GpuHost> ranks;
  std::vector<int> node_of_rank; ///< ranks in the same netzone share a node id (0, 1, ... by first rank)
  std::vector<std::string> simgrid_cfg;
  std::vector<std::string> host_names;
};

void check_config_syntax(const std::string& cfg)
{
  const auto colon = cfg.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == cfg.size())
    throw ConfigError("--cfg must be KEY:VALUE (got '" + cfg + "')");
}

void apply_config(const std::string& cfg)
{
  check_config_syntax(cfg);
  try {
    sg4::Engine::set_config(cfg);
  } catch (const std::exception& e) {
    const std::string what = e.what(); // SimGrid appends the list of every key: keep the first line
    throw ConfigError("--cfg '" + cfg + "': " + what.substr(0, what.find('\n')));
  }
}

/** SimGrid aborts (instead of throwing) on a host without speed or a link without bandwidth once a simulation
 *  uses them: refuse them up front, naming the culprit. */
void check_resources(const sg4::Engine& engine, const std::string& platform_file)
{
  for (const auto* host : engine.get_all_hosts())
    if (!(host->get_speed() > 0) || !std::isfinite(host->get_speed()))
      throw InputError(platform_file + ": host '" + host->get_name() + "': speed must be > 0 flop/s (got " +
                       format_double(host->get_speed()) + ")");
  for (const auto* link : engine.get_all_links()) {
    if (!(link->get_bandwidth() > 0) || !std::isfinite(link->get_bandwidth()))
      throw InputError(platform_file + ": link '" + link->get_name() + "': bandwidth must be > 0 bytes/s (got " +
                       format_double(link->get_bandwidth()) + ")");
    if (!(link->get_latency() >= 0) || !std::isfinite(link->get_latency()))
      throw InputError(platform_file + ": link '" + link->get_name() + "': latency must be >= 0 s (got " +
                       format_double(link->get_latency()) + ")");
  }
}

Setup open_platform(const std::string& platform_file, const std::optional<platform::ClusterSpec>& cluster,
                    unsigned ranks, const std::vector<std::string>& hosts, const std::vector<std::string>& simgrid_cfg)
{
  if (g_engine_used)
    throw Error("internal: SimGrid allows one simulation per process");
  if (!cluster && !readable_file(platform_file))
    throw InputError(platform_file + ": cannot open platform file");
  for (const auto& cfg : simgrid_cfg) // before the engine exists: a second simulate() would be refused
    check_config_syntax(cfg);
  g_engine_used = true;

  // res_network warns, as the platform loads, of every link latency under surf/precision, negative ones too:
  // check_resources() refuses negative ones in one line of its own (one under 1 ns now loads silently).
  std::vector<std::string> args = {"ddlsim", "--log=root.thresh:warning", "--log=res_network.thresh:error"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  Setup s;
  s.engine = std::make_unique<sg4::Engine>(&argc, argv.data());
  for (const auto& cfg : default_simgrid_config())
    apply_config(cfg);
  for (const auto& cfg : simgrid_cfg)
    apply_config(cfg);
  s.simgrid_cfg = default_simgrid_config();
  s.simgrid_cfg.insert(s.simgrid_cfg.end(), simgrid_cfg.begin(), simgrid_cfg.end());

  if (cluster) {
    platform::build_cluster(*cluster); // validated by the caller; no file to read
  } else {
    try {
      s.engine->load_platform(platform_file);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw InputError(platform_file + ": invalid platform: " + what.substr(0, what.find('\n')));
    }
  }
  check_resources(*s.engine, platform_file);
  const auto gpus = platform::find_gpu_hosts(s.engine->get_all_hosts(), platform_file);
  std::vector<std::string> names;
  for (const auto& g : gpus)
    names.push_back(g.name);
  std::map<std::string, int> node_ids;
  for (std::size_t i : platform::select_rank_hosts(names, hosts, ranks, platform_file)) {
    s.ranks.push_back(gpus[i]);
    s.host_names.push_back(gpus[i].name);
    const std::string zone = gpus[i].host->get_englobing_zone()->get_name();
    auto it = node_ids.emplace(zone, static_cast<int>(node_ids.size())).first;
    s.node_of_rank.push_back(it->second);
  }
  return s;
}

std::vector<sg4::Host*> hosts_of(const std::vector<platform::GpuHost>& ranks)
{
  std::vector<sg4::Host*> hosts;
  for (const auto& r : ranks)
    hosts.push_back(r.host);
  return hosts;
}

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

/** One phase: the given ranks run `iterations` iterations of the DAG, each rank on two in-order streams. */
class Phase {
public:
  Phase(std::string name, const dag::IterationDag& dag, const std::vector<platform::GpuHost>& ranks,
        const std::vector<int>& node_of_rank, const collectives::Collective& collective,
        const collectives::CollectiveOptions& options, unsigned iterations, double reference_speed,
        const ProgressFn& progress)
      : name_(std::move(name))
      , dag_(dag)
      , collective_(collective)
      , iterations_(iterations)
      , reference_speed_(reference_speed)
      , progress_(progress)
      , compute_order_(dag.stream_tasks(dag::Stream::Compute))
      , comm_order_(dag.stream_tasks(dag::Stream::Communication))
      , world_(hosts_of(ranks), node_of_rank, options, name_)
      , group_(world_)
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
    result_.records.reserve(ranks.size() * iterations * dag.tasks.size());
    collective_.prepare(world_); // outside any actor: may throw ConfigError
  }

  /** Runs the phase to completion; must be called from an actor. */
  PhaseResult run()
  {
    start_ = sg4::Engine::get_clock();
    std::vector<std::uint64_t> sequence;
    for (unsigned it = 0; it < iterations_; ++it)
      for (int id : comm_order_)
        sequence.push_back(dag_.tasks[id].bytes);
    std::vector<sg4::ActorPtr> actors = collective_.start(world_, sequence);
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
        result_.records.push_back({rank, static_cast<int>(it), id, start - start_, end - start_});
        done[id] = 1;
        if (state.waiting > 0) {
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
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
      collective_.allreduce(group_, rank, task.bytes);
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
  collectives::Group group_;
  std::vector<RankState> states_;
  std::vector<unsigned> finished_;
  PhaseResult result_;
  double start_ = 0;
};

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
  if (input.iterations == 0)
    throw ConfigError("--iterations must be >= 1 (got 0)");
  const double ref_speed = reference_speed(input.workload, input.workload_name);
  auto collective = collectives::make_collective(input.algorithm, input.collective);
  Setup setup = open_platform(input.platform_file, input.cluster, input.ranks, input.hosts, input.simgrid_cfg);

  SimulationOutput out;
  out.simgrid_cfg = setup.simgrid_cfg;
  out.hosts = setup.host_names;
  out.dag = dag::build_iteration_dag(input.workload, input.schedule);
  const double records = double(setup.ranks.size()) * input.iterations * out.dag.tasks.size();
  if (records > kMaxTaskRecords)
    throw ConfigError("--iterations " + std::to_string(input.iterations) + " x " + std::to_string(setup.ranks.size()) +
                      " ranks x " + std::to_string(out.dag.tasks.size()) + " tasks = " + format_double(records) +
                      " task records, more than the " + format_double(kMaxTaskRecords) +
                      " this machine's memory allows (about 40 bytes each): use fewer iterations");
  if (input.dry_run)
    return out;

  std::unique_ptr<Phase> single;
  if (input.single_gpu_baseline && setup.ranks.size() > 1)
    single = std::make_unique<Phase>("single", out.dag, std::vector<platform::GpuHost>{setup.ranks[0]},
                                     std::vector<int>{0}, *collective, input.collective, input.iterations, ref_speed,
                                     input.progress);
  Phase multi("multi", out.dag, setup.ranks, setup.node_of_rank, *collective, input.collective, input.iterations,
              ref_speed, input.progress);
  sg4::Actor::create("ddlsim-driver", setup.ranks[0].host, [&] {
    if (single)
      out.single = single->run();
    out.multi = multi.run();
  });
  setup.engine->run();

  const std::size_t expected = setup.ranks.size() * input.iterations * out.dag.tasks.size();
  if (out.multi.records.size() != expected)
    throw Error("the simulation stopped before every task completed (" + std::to_string(out.multi.records.size()) +
                " of " + std::to_string(expected) + " tasks): SimGrid found a deadlock");
  return out;
}

namespace {

/** Worst route (largest latency, smallest bandwidth) among the given pairs of world endpoints. */
void worst_route(const collectives::CommWorld& world, const std::vector<std::pair<int, int>>& pairs, double& alpha,
                 double& bandwidth)
{
  alpha = 0;
  bandwidth = 0;
  double bw = std::numeric_limits<double>::infinity();
  for (const auto& [a, b] : pairs) {
    const auto [lat, band] = world.route(a, b);
    alpha = std::max(alpha, lat);
    bw = std::min(bw, band);
  }
  if (!pairs.empty())
    bandwidth = bw;
}

} // namespace

SweepOutput run_collective_sweep(const SweepInput& input)
{
  auto collective = collectives::make_collective(input.algorithm, input.collective);
  Setup setup = open_platform(input.platform_file, std::nullopt, input.ranks, input.hosts, input.simgrid_cfg);
  SweepOutput out;
  out.hosts = setup.host_names;
  out.simgrid_cfg = setup.simgrid_cfg;
  out.node_of_rank = setup.node_of_rank;

  collectives::CommWorld world(hosts_of(setup.ranks), setup.node_of_rank, input.collective, "sweep");
  collective->prepare(world);
  const int p = world.size();

  // Routes the closed forms need (O(P log P) pairs, so that this stays cheap at thousands of ranks).
  std::vector<std::pair<int, int>> flat, intra, leaders, servers;
  std::map<int, int> leader_of_node; // node -> its lowest rank
  std::vector<int> first_of_node;
  for (int r = 0; r < p; ++r)
    if (leader_of_node.emplace(setup.node_of_rank[r], r).second)
      first_of_node.push_back(r);
  for (int r = 0; r < p; ++r) {
    if (p > 1)
      flat.emplace_back(r, (r + 1) % p);
    for (int mask = 1; mask < p; mask <<= 1)
      if ((r ^ mask) < p)
        flat.emplace_back(r, r ^ mask);
    const int leader = leader_of_node[setup.node_of_rank[r]];
    if (leader != r) {
      intra.emplace_back(r, leader);
      intra.emplace_back(leader, r);
    }
    for (int e = p; e < world.endpoints(); ++e)
      servers.emplace_back(r, e);
  }
  const int nodes = static_cast<int>(first_of_node.size());
  for (int i = 0; i < nodes; ++i) {
    if (nodes > 1)
      leaders.emplace_back(first_of_node[i], first_of_node[(i + 1) % nodes]);
    for (int mask = 1; mask < nodes; mask <<= 1)
      if ((i ^ mask) < nodes)
        leaders.emplace_back(first_of_node[i], first_of_node[i ^ mask]);
  }
  worst_route(world, flat, out.alpha_s, out.bandwidth_bytes_per_s);
  worst_route(world, intra, out.intra_alpha_s, out.intra_bandwidth_bytes_per_s);
  worst_route(world, leaders, out.leader_alpha_s, out.leader_bandwidth_bytes_per_s);
  worst_route(world, servers, out.server_alpha_s, out.server_bandwidth_bytes_per_s);

  collectives::Group group(world);
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(p));
  const std::size_t n = input.sizes.size();
  std::vector<double> start(n, 0.0), end(n, 0.0);
  std::vector<std::uint64_t> sent_after(n, 0);
  std::size_t completed = 0;
  auto rank_bytes = [&world, p] {
    std::uint64_t sent = 0;
    for (int q = 0; q < p; ++q)
      sent += world.bytes_sent(q);
    return sent;
  };
  sg4::Actor::create("sweep-driver", world.host(0), [&] {
    auto actors = collective->start(world, input.sizes);
    for (int r = 0; r < p; ++r)
      actors.push_back(sg4::Actor::create("sweep-rank" + std::to_string(r), world.host(r), [&, r] {
        for (std::size_t k = 0; k < n; ++k) {
          barrier->wait(); // every rank starts size k at the same time
          if (r == 0)
            start[k] = sg4::Engine::get_clock();
          collective->allreduce(group, r, input.sizes[k]);
          end[k] = std::max(end[k], sg4::Engine::get_clock());
          barrier->wait(); // nobody starts size k+1 before everyone is done with k
          if (r == 0) {
            sent_after[k] = rank_bytes();
            completed = k + 1;
            if (input.progress)
              input.progress(k, end[k] - start[k]);
          }
        }
      }));
    for (auto& a : actors)
      a->join();
  });
  setup.engine->run();

  if (completed != n)
    throw Error("the collective sweep stopped after " + std::to_string(completed) + " of " + std::to_string(n) +
                " sizes: SimGrid found a deadlock");
  for (std::size_t k = 0; k < n; ++k)
    out.points.push_back({input.sizes[k], end[k] - start[k], sent_after[k] - (k == 0 ? 0 : sent_after[k - 1])});
  return out;
}

} // namespace ddlsim::engine
