// Point-to-point probes for platform tests: one SimGrid engine per process, ddlsim's default network config.
#include "sim/probe.hpp"

#include "common/strings.hpp"
#include "engine/simgrid_config.hpp"
#include "platform/cluster_builder.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace ddlsim::test {
namespace {

std::unique_ptr<sg4::Engine> make_engine()
{
  static char name[] = "probe";
  static char log[] = "--log=root.thresh:warning";
  static char* argv[] = {name, log, nullptr};
  int argc = 2;
  return std::make_unique<sg4::Engine>(&argc, argv);
}

} // namespace

void ProbeEngine::configure()
{
  engine_ = make_engine();
  for (const auto& cfg : engine::default_simgrid_config())
    sg4::Engine::set_config(cfg);
}

ProbeEngine::ProbeEngine(const std::string& platform_file)
{
  configure();
  engine_->load_platform(platform_file);
}

ProbeEngine::ProbeEngine(const platform::ClusterSpec& spec)
{
  configure();
  platform::build_cluster(spec);
}

std::vector<std::string> ProbeEngine::gpu_hosts() const
{
  std::vector<std::string> names;
  for (auto* h : engine_->get_all_hosts())
    if (h->get_property("gpu") != nullptr)
      names.push_back(h->get_name());
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

double ProbeEngine::route_latency_s(const std::string& src, const std::string& dst) const
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  sg4::Host::by_name(src)->route_to(sg4::Host::by_name(dst), links, &latency);
  if (links.empty())
    throw std::runtime_error("no link between " + src + " and " + dst);
  return latency;
}

std::vector<std::string> ProbeEngine::route_links(const std::string& src, const std::string& dst) const
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  sg4::Host::by_name(src)->route_to(sg4::Host::by_name(dst), links, &latency);
  std::vector<std::string> names;
  for (auto* l : links)
    names.push_back(l->get_name());
  return names;
}

std::vector<double> ProbeEngine::run(const std::vector<std::vector<Transfer>>& steps)
{
  std::vector<double> durations;
  sg4::Actor::create("probe-driver", engine_->get_all_hosts().front(), [&] {
    int id = 0;
    for (const auto& step : steps) {
      const double start = sg4::Engine::get_clock();
      std::vector<sg4::ActorPtr> actors;
      for (const auto& t : step) {
        auto* box = sg4::Mailbox::by_name("probe-" + std::to_string(id++));
        const double bytes = t.bytes;
        actors.push_back(sg4::Actor::create("send", sg4::Host::by_name(t.src), [box, bytes] {
          static int payload = 0;
          box->put(&payload, static_cast<uint64_t>(bytes));
        }));
        actors.push_back(sg4::Actor::create("recv", sg4::Host::by_name(t.dst), [box] { box->get<int>(); }));
      }
      for (auto& a : actors)
        a->join();
      durations.push_back(sg4::Engine::get_clock() - start);
    }
  });
  engine_->run();
  return durations;
}

} // namespace ddlsim::test
