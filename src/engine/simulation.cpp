// Runs an S-SGD DAG on a SimGrid platform: a single-GPU baseline phase, then every rank.
#include "engine/simulation.hpp"

#include "collectives/algorithm_table.hpp"
#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "engine/phase.hpp"
#include "engine/setup.hpp"
#include "hardware/gpu_catalog.hpp"

#include <simgrid/s4u/Actor.hpp>

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

double reference_speed(const std::string& gpu)
{
  const auto* spec = platform::find_gpu(gpu);
  if (spec == nullptr) // workload validation refuses such workloads
    throw Error("internal: reference GPU '" + gpu + "' is not in the GPU catalogue");
  return spec->peak_fp32_flops;
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
  impl_->collective = collectives::make_collective(input.algorithm, input.collective);
  impl_->setup = open_platform({input.platform_file, input.cluster, input.ranks, input.hosts, input.simgrid_cfg});
  const Setup& s = impl_->setup;
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
  out.simgrid_cfg = setup.simgrid_cfg;
  out.hosts = setup.host_names;
  check_record_count(input, setup.ranks.size(), dag);
  if (input.dry_run)
    return out;

  auto phase = [&](std::string name, const dag::IterationDag* graph, std::vector<platform::GpuHost> ranks,
                   std::vector<int> nodes) {
    return std::make_unique<Phase>(PhaseSpec{std::move(name), graph, std::move(ranks), std::move(nodes),
                                             impl_->collective.get(), input.collective, input.iterations,
                                             impl_->reference_speed, &input.progress, &input.aggregation_progress});
  };
  std::unique_ptr<Phase> single;
  if (input.single_gpu_baseline && setup.ranks.size() > 1)
    single = phase("single", baseline ? baseline : &dag, {setup.ranks[0]}, {0});
  auto multi = phase("multi", &dag, setup.ranks, setup.node_of_rank);
  sg4::Actor::create("ddlsim-driver", setup.ranks[0].host, [&] {
    if (single)
      out.single = single->run();
    out.multi = multi->run();
  });
  setup.engine->run();

  const std::size_t expected = setup.ranks.size() * input.iterations * dag.tasks.size();
  if (out.multi.records.size() != expected)
    throw Error("the simulation stopped before every task completed (" + std::to_string(out.multi.records.size()) +
                " of " + std::to_string(expected) + " tasks): SimGrid found a deadlock");
  return out;
}

SimulationOutput simulate(const SimulationInput& input, const dag::IterationDag& dag)
{
  Simulation simulation(input);
  return simulation.run(dag);
}

} // namespace ddlsim::engine
