// Engine setup shared by the training simulation and the collective sweep.
#include "engine/setup.hpp"

#include "analytical/routes.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "engine/config_policy.hpp"
#include "engine/simgrid_config.hpp"
#include "platform/cluster_builder.hpp"
#include "platform/platform_check.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>
#include <map>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

bool g_engine_used = false;

void apply_config(const std::string& cfg)
{
  check_config_syntax(cfg);
  try {
    sg4::Engine::set_config(cfg);
  } catch (const std::exception& e) {
    const std::string what = e.what(); // SimGrid appends the list of every key: keep the first line
    throw ConfigError(field("simgrid_cfg") + " '" + cfg + "': " + what.substr(0, what.find('\n')));
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

std::unique_ptr<sg4::Engine> make_engine()
{
  // res_network warns, as the platform loads, of every link latency under surf/precision, negative ones too:
  // check_resources() refuses negative ones in one line of its own (one under 1 ns now loads silently).
  std::vector<std::string> args = {"ddlsim", "--log=root.thresh:warning", "--log=res_network.thresh:error"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

/** Loads the platform; sets whether it is static and whether its latencies may change (Setup::static_links,
 *  Setup::latency_profiles; a generated cluster has no profiles). */
void load(Setup& s, const PlatformRequest& r)
{
  if (r.cluster) {
    platform::build_cluster(*r.cluster); // validated by the caller; no file to read
    s.static_links = true;
    return;
  }
  const std::string xml = read_file(r.platform_file);
  platform::check_platform_xml(xml, r.platform_file); // SimGrid aborts on many inconsistent files: refuse them first
  try {
    s.engine->load_platform(r.platform_file);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw InputError(r.platform_file + ": invalid platform: " + what.substr(0, what.find('\n')));
  }
  s.static_links = !platform::has_profiles(xml);
  s.latency_profiles = platform::has_latency_profiles(xml);
}

/** Chooses the ranks' hosts and numbers the nodes (netzones) by first rank. */
void map_ranks(Setup& s, const PlatformRequest& r)
{
  const auto gpus = platform::find_gpu_hosts(s.engine->get_all_hosts(), r.platform_file);
  std::vector<std::string> names;
  for (const auto& g : gpus)
    names.push_back(g.name);
  std::map<std::string, int> node_ids;
  for (std::size_t i : platform::select_rank_hosts(names, r.hosts, r.ranks, r.platform_file)) {
    s.ranks.push_back(gpus[i]);
    s.host_names.push_back(gpus[i].name);
    const std::string zone = gpus[i].host->get_englobing_zone()->get_name();
    auto it = node_ids.emplace(zone, static_cast<int>(node_ids.size())).first;
    s.node_of_rank.push_back(it->second);
  }
}

} // namespace

Setup open_platform(const PlatformRequest& r)
{
  if (g_engine_used)
    throw Error("internal: SimGrid allows one simulation per process");
  if (!r.cluster && !readable_file(r.platform_file))
    throw InputError(r.platform_file + ": cannot open platform file");
  for (const auto& cfg : r.simgrid_cfg) { // before the engine exists: a second simulate() would be refused
    check_config_syntax(cfg);
    check_config_safety(cfg); // SimGrid crashes or aborts on some keys and values
  }
  g_engine_used = true;

  Setup s;
  s.engine = make_engine();
  for (const auto& cfg : default_simgrid_config())
    apply_config(cfg);
  for (const auto& cfg : r.simgrid_cfg)
    apply_config(cfg);
  s.simgrid_cfg = default_simgrid_config();
  s.simgrid_cfg.insert(s.simgrid_cfg.end(), r.simgrid_cfg.begin(), r.simgrid_cfg.end());
  load(s, r);
  check_resources(*s.engine, r.platform_file);
  map_ranks(s, r);
  return s;
}

std::string stalled_message(const Setup& setup, const std::string& what)
{
  std::string m = what + ": SimGrid found a deadlock";
  // SimGrid's src/surf/network_cm02.cpp at v3.32: NetworkCm02Link::set_latency, update_actions_state_lazy
  if (setup.latency_profiles)
    m += ". The platform changes link latencies over time (a latency profile): SimGrid 3.32 never ends a transfer "
         "that waits its latency when the latency of a link it crosses changes (it starts the transfer's sharing at "
         "once, and the end of its latency then leaves it with no event), the likely cause here. Latency profiles work "
         "only where no transfer waits its latency at a change (docs/safety.md, \"Latency profiles\")";
  return m;
}

collectives::ClosedFormInput closed_form_input(const collectives::CommWorld& world,
                                               const std::vector<int>& node_of_rank,
                                               const collectives::CollectiveOptions& options)
{
  collectives::ClosedFormInput in;
  in.ranks = world.size();
  std::map<int, int> per_node;
  for (int n : node_of_rank)
    ++per_node[n];
  in.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node)
    in.ranks_per_node = std::max(in.ranks_per_node, count);
  in.options = options;
  const auto pairs = analytical::closed_form_route_pairs(node_of_rank, world.endpoints());
  in.hops = analytical::worst_hops(pairs, [&world](int a, int b) { return world.route(a, b); });
  return in;
}

std::vector<sg4::Host*> hosts_of(const std::vector<platform::GpuHost>& ranks)
{
  std::vector<sg4::Host*> hosts;
  for (const auto& r : ranks)
    hosts.push_back(r.host);
  return hosts;
}

} // namespace ddlsim::engine
