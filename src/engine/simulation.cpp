// Runs an S-SGD DAG on a SimGrid platform: a single-GPU baseline phase, then every rank.
#include "engine/simulation.hpp"

#include "collectives/algorithm_table.hpp"
#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "engine/phase.hpp"
#include "engine/setup.hpp"
#include "engine/simgrid_config.hpp"
#include "hardware/cpu_catalog.hpp"
#include "hardware/gpu_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

/** Every task of every rank and iteration is recorded (~40 bytes): 5e8 records is about 20 GB. */
constexpr double kMaxTaskRecords = 5e8;

void check_record_count(const SimulationInput& input, std::size_t ranks, const dag::IterationDag& dag)
{
  const double records = double(ranks) * input.iterations * dag.tasks.size();
  if (records > kMaxTaskRecords)
    throw ConfigError(field("iterations") + " " + std::to_string(input.iterations) + " x " + std::to_string(ranks) +
                      " ranks x " + std::to_string(dag.tasks.size()) + " tasks = " + format_double(records) +
                      " task records, more than the " + format_double(kMaxTaskRecords) +
                      " this machine's memory allows (about 40 bytes each): use fewer iterations");
}

/** The speed and memory bandwidth of a parameter server's host, from its catalogue entry (prop cpu or gpu). */
collectives::ServerRate server_rate(const sg4::Host& host)
{
  const std::string name = host.get_name();
  // A host without speed never gets here: the platform check refuses it (speed must be > 0).
  collectives::ServerRate rate{host.get_speed(), 0};
  if (const char* cpu = host.get_property("cpu")) {
    const auto* spec = platform::find_cpu(cpu);
    if (spec == nullptr)
      throw ConfigError(field("ps_hosts") + ": host '" + name + "' names CPU '" + cpu +
                        "', which is not in the CPU catalogue (" + platform::known_cpus() + ")");
    if (std::abs(host.get_speed() - spec->peak_fp32_flops()) > 1e-9 * spec->peak_fp32_flops())
      throw ConfigError(field("ps_hosts") + ": host '" + name + "' has speed " + format_double(host.get_speed()) +
                        " FLOP/s but its CPU '" + cpu + "' peaks at " + format_double(spec->peak_fp32_flops()));
    rate.memory_bytes_per_s = spec->memory_bytes_per_s;
  } else if (const char* gpu = host.get_property("gpu")) {
    if (const auto* spec = platform::find_gpu(gpu))
      rate.memory_bytes_per_s = spec->memory_bytes_per_s;
  }
  if (!(rate.memory_bytes_per_s > 0))
    throw ConfigError(field("ps_hosts") + ": host '" + name +
                      "' names no catalogued CPU or GPU (property cpu or gpu), so a parameter server there has no "
                      "memory bandwidth");
  return rate;
}

/** Fills the servers' rates when parameter servers run the update (hosts prepare() will refuse are skipped). */
void resolve_server_rates(collectives::CollectiveOptions& o, const std::vector<platform::GpuHost>& ranks)
{
  if (o.ps_update != collectives::PsUpdate::Server)
    return;
  o.ps_rates.clear();
  for (int s = 0; s < o.ps_servers; ++s) {
    const sg4::Host* host = nullptr;
    if (o.ps_hosts.empty())
      host = s < static_cast<int>(ranks.size()) ? ranks[s].host : nullptr;
    else
      host = sg4::Host::by_name_or_null(o.ps_hosts[s]);
    if (host == nullptr)
      return;
    o.ps_rates.push_back(server_rate(*host));
  }
}

double reference_speed(const std::string& gpu)
{
  const auto* spec = platform::find_gpu(gpu);
  if (spec == nullptr) // workload validation refuses such workloads
    throw Error("internal: reference GPU '" + gpu + "' is not in the GPU catalogue");
  return spec->peak_fp32_flops;
}

/** Activities SimGrid started: mailbox transfers, executions and sleeps (one signal each; a counter, nothing else).
 *  SimGrid 3.32 signals no host-to-host transfer (the flow forms'): each phase counts those (CommWorld). */
std::uint64_t g_activities = 0;

void count_activities()
{
  static bool connected = false; // one engine per process: connected once
  if (connected)
    return;
  connected = true;
  sg4::Comm::on_send_cb([](const sg4::Comm&) { ++g_activities; }); // one per transfer (all go through mailboxes)
  sg4::Exec::on_start_cb([](const sg4::Exec&) { ++g_activities; });
  sg4::Actor::on_sleep_cb([](const sg4::Actor&) { ++g_activities; });
}

/** Linux's limit on memory mappings per process (vm.max_map_count), or 0 when it cannot be read; the environment
 *  variable DDLSIM_MAX_MAP_COUNT replaces it (the tests use it to try the limit without 16,384 GPUs). */
std::size_t max_map_count()
{
  if (const char* forced = std::getenv("DDLSIM_MAX_MAP_COUNT"))
    return std::strtoull(forced, nullptr, 10);
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t n = 0;
  return in >> n ? n : 0;
}

/** SimGrid maps a stack for every actor and protects a guard page at its end, which splits the mapping in two; at
 *  16,384 GPUs (two stream actors each) that is more than Linux's default limit of 65,530 mappings, and SimGrid
 *  aborts ("Failed to protect stack"). Where the actors would not fit, the guard pages go (contexts/guard-size:0,
 *  recorded in the run's --cfg list: one mapping per stack; a stack overflow is then not caught, and ddlsim's actors
 *  recurse nowhere), unless the user chose a guard size; where even that does not fit, the run is refused. */
void fit_stacks(Setup& setup, const dag::IterationDag& dag, const collectives::CollectiveOptions& options)
{
  const std::size_t limit = max_map_count();
  if (limit == 0)
    return;
  const std::size_t per_rank =
      1 + (dag.input.empty() ? 0 : 1) + (dag.timer.empty() ? 0 : 1) + std::size_t(std::max(dag.comm_streams, 1));
  const std::size_t actors = setup.ranks.size() * per_rank + std::size_t(options.ps_servers) + 64;
  const std::size_t reserve = 4096; // libraries, heap arenas, the platform
  for (const auto& cfg : setup.simgrid_cfg)
    if (cfg.rfind("contexts/guard-size:", 0) == 0)
      return; // the user's choice
  if (2 * actors + reserve <= limit)
    return;
  if (actors + reserve > limit)
    throw ConfigError("this run needs about " + std::to_string(actors + reserve) + " memory mappings (" +
                      std::to_string(actors) + " SimGrid actor stacks and about " + std::to_string(reserve) +
                      " for the rest of the process), more than this machine's limit of " + std::to_string(limit) +
                      " (vm.max_map_count): raise it (sysctl -w vm.max_map_count=" +
                      std::to_string(2 * (actors + reserve)) + ") or simulate fewer GPUs");
  const std::string cfg = "contexts/guard-size:0";
  sg4::Engine::set_config(cfg);
  setup.simgrid_cfg.push_back(cfg);
#ifdef __GLIBC__
  // Without a guard page SimGrid callocs each stack (xbt_malloc0 of contexts/stack-size, SimGrid 3.32
  // src/kernel/context/ContextSwapped.cpp); glibc's mmap threshold has grown by then (it follows the largest block
  // freed), so the stacks came from the heap and calloc zeroed every page: ring at 4,096 GPUs with
  // contexts/guard-size:0 peaked at 1,255 MiB instead of 207. A fixed threshold of one stack maps each stack fresh,
  // and only the pages an actor touches are resident (257 MiB; docs/performance.md). Not lower: every block at least
  // the threshold is mapped and unmapped again, and at 16,384 ranks the per-rank vectors of a collective's plan
  // (128 to 400 KiB) are; with a threshold of 64 KiB, hd with two streams made 48,000 mappings and 1.8 million page
  // faults, 12 of its 38 s of wall time in the kernel (docs/performance.md).
  const long stack = long(simgrid::config::get_value<int>("contexts/stack-size")) * 1024;
  mallopt(M_MMAP_THRESHOLD,
          int(std::clamp(
              stack, 4096L,
              32L * 1024 * 1024))); // glibc's maximum, 32 MiB on 64 bits (malloc/malloc.c, DEFAULT_MMAP_THRESHOLD_MAX)
#endif
}

/** True when the network is SimGrid's exact alpha-beta model as default_simgrid_config() sets it
 * (PhaseSpec::exact_network): no --cfg but the actors' stacks (contexts/...), and a static platform
 * (Setup::static_links). */
bool exact_network(const Setup& setup)
{
  const auto& defaults = default_simgrid_config();
  for (const auto& cfg : setup.simgrid_cfg)
    if (std::find(defaults.begin(), defaults.end(), cfg) == defaults.end() && cfg.rfind("contexts/", 0) != 0)
      return false;
  return setup.static_links;
}

} // namespace

struct Simulation::Impl {
  SimulationInput input;
  double reference_speed = 0;
  std::unique_ptr<collectives::Collective> collective;
  Setup setup;
  collectives::ClosedFormInput closed_form;
  bool ran = false;
};

Simulation::Simulation(const SimulationInput& in)
    : impl_(std::make_unique<Impl>())
{
  impl_->input = in;
  const SimulationInput& input = impl_->input;
  if (input.iterations == 0)
    throw ConfigError(field("iterations") + " must be >= 1 (got 0)");
  impl_->reference_speed = reference_speed(input.reference_gpu);
  impl_->setup = open_platform({input.platform_file, input.cluster, input.ranks, input.hosts, input.simgrid_cfg});
  const Setup& s = impl_->setup;
  resolve_server_rates(impl_->input.collective, s.ranks);
  impl_->collective = collectives::make_collective(input.algorithm, input.collective);
  collectives::CommWorld probe(hosts_of(s.ranks), s.node_of_rank, input.collective, "probe");
  impl_->collective->prepare(probe); // adds the servers, whose routes the closed forms read; may throw
  impl_->closed_form = closed_form_input(probe, s.node_of_rank, input.collective);
}

Simulation::~Simulation() = default;

const std::vector<std::string>& Simulation::hosts() const
{
  return impl_->setup.host_names;
}

const collectives::ClosedFormInput& Simulation::closed_form() const
{
  return impl_->closed_form;
}

double Simulation::compute_scale() const
{
  return impl_->reference_speed / impl_->setup.ranks.at(0).speed_flops;
}

SimulationOutput Simulation::run(const dag::IterationDag& dag, const dag::IterationDag* baseline)
{
  if (impl_->ran)
    throw Error("internal: a simulation runs once");
  impl_->ran = true;
  const SimulationInput& input = impl_->input;
  Setup& setup = impl_->setup;
  SimulationOutput out;
  fit_stacks(setup, dag, input.collective);
  out.simgrid_cfg = setup.simgrid_cfg;
  out.hosts = setup.host_names;
  check_record_count(input, setup.ranks.size(), dag);
  if (input.dry_run)
    return out;

  // The multi-GPU phase alone may copy iterations: the baseline (one GPU) is cheap, and copying its iterations would
  // start the multi-GPU phase at another clock, which moves its times by roundings (the golden report's last digits).
  const bool static_links = setup.static_links;
  const bool exact = exact_network(setup);
  auto phase = [&, exact, static_links](std::string name, const dag::IterationDag* graph,
                                        std::vector<platform::GpuHost> ranks, std::vector<int> nodes, bool replicate) {
    const bool record = input.record_transfers && name == "multi";
    return std::make_unique<Phase>(
        PhaseSpec{std::move(name), graph, std::move(ranks), std::move(nodes), impl_->collective.get(), input.collective,
                  input.iterations, impl_->reference_speed, &input.progress, &input.aggregation_progress,
                  // the trace's messages are not copied: a traced phase runs them all; nor are the iterations on a
                  // platform with profiles, where a later iteration meets other bandwidths, latencies or speeds
                  record, record ? input.transfer_ranks : std::set<int>{}, replicate && !record && static_links,
                  input.link_timelines, input.drive_streams, exact, static_links});
  };
  std::unique_ptr<Phase> single;
  if (input.single_gpu_baseline && setup.ranks.size() > 1)
    single = phase("single", baseline ? baseline : &dag, {setup.ranks[0]}, {0}, false);
  auto multi = phase("multi", &dag, setup.ranks, setup.node_of_rank, input.replicate_iterations);
  count_activities();
  sg4::Actor::create("ddlsim-driver", setup.ranks[0].host, [&] {
    if (single) {
      const std::uint64_t before = g_activities;
      out.single = single->run();
      out.single->activities += g_activities - before; // the phase counted its host-to-host flows
    }
    const std::uint64_t before = g_activities;
    out.multi = multi->run();
    out.multi.activities += g_activities - before;
  });
  setup.engine->run();

  const std::size_t expected = setup.ranks.size() * input.iterations * dag.tasks.size();
  if (out.multi.records.size() != expected)
    throw Error(stalled_message(setup, "the simulation stopped before every task completed (" +
                                           std::to_string(out.multi.records.size()) + " of " +
                                           std::to_string(expected) + " tasks)"));
  return out;
}

SimulationOutput simulate(const SimulationInput& input, const dag::IterationDag& dag)
{
  Simulation simulation(input);
  return simulation.run(dag);
}

} // namespace ddlsim::engine
