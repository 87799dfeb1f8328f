// Builds a generated cluster in memory with the SimGrid C++ API (no XML, no per-node-pair routes).
#include "platform/cluster_builder.hpp"

#include "hardware/cpu_catalog.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::platform {
namespace {

using simgrid::kernel::routing::NetPoint;

sg4::Link* split_duplex(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency)
{
  auto* link = zone->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency);
  link->seal();
  return link;
}

/** The links of node `node` (layout.links, named "<node>-<link>"), created in `zone`. */
std::vector<sg4::Link*> node_links(const NodeLayout& layout, int node, sg4::NetZone* zone)
{
  const std::string prefix = node_name(node) + "-";
  std::vector<sg4::Link*> links;
  for (const auto& l : layout.links)
    links.push_back(split_duplex(zone, prefix + l.name, l.bandwidth_bytes_per_s, l.latency_s));
  return links;
}

/** `zone`, made apart from the platform (no parent yet), given the models of `like`, as set_parent would copy them:
 *  a zone needs its models to make hosts and links. */
void copy_models(sg4::NetZone* zone, const sg4::NetZone* like)
{
  auto* apart = zone->get_impl();
  const auto* models = like->get_impl();
  apart->set_network_model(models->get_network_model());
  apart->set_cpu_pm_model(models->get_cpu_pm_model());
  apart->set_cpu_vm_model(models->get_cpu_vm_model());
  apart->set_disk_model(models->get_disk_model());
  apart->set_host_model(models->get_host_model());
}

/** One node zone (Full routing, as in the XML), its routes over `links` (node_links); returns the zone and its
 *  gateway. `join`: under `parent`, and sealed; otherwise apart, with the models of `parent`, which it joins later
 *  (build_cluster: set_parent refuses a sealed zone, so it is sealed once joined). */
std::pair<sg4::NetZone*, NetPoint*> build_node(const ClusterSpec& s, const NodeLayout& layout, int node,
                                               sg4::NetZone* parent, const std::vector<sg4::Link*>& links, bool join)
{
  auto* zone = sg4::create_full_zone(node_name(node));
  if (join)
    zone->set_parent(parent);
  else
    copy_models(zone, parent);
  const double gpu_speed = s.gpus_per_node == 0 ? 0 : gpu_by_name(s.gpu).peak_fp32_flops;
  std::vector<NetPoint*> points;
  for (int i = 0; i < layout.gpus; ++i) {
    auto* host = zone->create_host(gpu_host_name(node, i), gpu_speed);
    host->set_property("gpu", s.gpu);
    points.push_back(host->seal()->get_netpoint());
  }
  auto* cpu = zone->create_host(cpu_host_name(node), default_cpu().peak_fp32_flops());
  cpu->set_property("cpu", default_cpu().name);
  points.push_back(cpu->seal()->get_netpoint());
  points.push_back(zone->create_router(gateway_name(node)));

  for (int a = 0; a < layout.endpoints(); ++a)
    for (int b = a + 1; b < layout.endpoints(); ++b) {
      std::vector<sg4::LinkInRoute> route;
      for (const auto& h : layout.routes[a][b])
        route.emplace_back(links[h.link], h.up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      zone->add_route(points[a], points[b], nullptr, nullptr, route, true);
    }
  if (join)
    zone->seal();
  return {zone, points.back()};
}

} // namespace

void build_cluster(const ClusterSpec& s)
{
  const NodeLayout layout = build_node_layout(s);
  auto* root = sg4::create_star_zone("cluster");
  // Every node's links first, in the root zone (a route may cross links of any zone): SimGrid 3.32 checks that a new
  // link's name is unused by searching every zone of the platform (NetZoneImpl::get_link_by_name_or_null), so links
  // created inside 2,048 node zones, after the zones before them, cost O(nodes^2) lookups (30 of the 40 s of a
  // 16,384-GPU run; docs/performance.md). Created before any node zone, each search visits one zone.
  std::vector<std::vector<sg4::Link*>> links;
  links.reserve(static_cast<std::size_t>(s.nodes));
  for (int node = 0; node < s.nodes; ++node)
    links.push_back(node_links(layout, node, root));
  // The zones under the root are built apart from the platform and joined to it once all are built: SimGrid 3.32
  // checks that a new host's name is unused by searching every zone reachable from the root
  // (NetZoneImpl::get_host_by_name_or_null), and a zone's seal lists every host reachable from the root
  // (NetZoneImpl::get_all_hosts) to seal its own; with each zone joined as it was built, 16,384 GPUs cost O(nodes^2)
  // of both (2.1 of the 4.5 s of the ring at 16,384 GPUs on the fat tree; docs/performance.md). The same zones,
  // hosts, links and routes, made in the same order: only when each zone under the root joins it, and when zones
  // are sealed, move (SimGrid's tracing, which takes zones' creations and seals as nested, is refused:
  // engine/config_policy.cpp).
  std::vector<std::pair<sg4::NetZone*, NetPoint*>> apart; // (zone, gateway) under the root, to join
  std::vector<sg4::Link*> uplinks;                        // the fat tree's: each leaf's to the root
  if (s.topology == Topology::Star) {
    // A star zone with no links of its own: every node reaches every other through its gateway, and the
    // switch (non-blocking) adds nothing. A node zone is sealed once joined (set_parent refuses a sealed zone):
    // each seal then lists every host, O(nodes^2) again, but a cheaper O than the search it saves.
    for (int node = 0; node < s.nodes; ++node)
      apart.push_back(build_node(s, layout, node, root, links[node], false));
  } else {
    // A leaf, apart, holds its nodes joined and sealed: their seals list only the hosts reachable from the root, not
    // their own, which build_node seals as it makes them.
    const int leaves = s.nodes / s.nodes_per_leaf;
    for (int leaf = 0; leaf < leaves; ++leaf) {
      auto* leaf_zone = sg4::create_star_zone("leaf" + std::to_string(leaf));
      copy_models(leaf_zone, root);
      // The leaf's gateway is its first node's gateway: a router of its own next to the node zones breaks
      // SimGrid 3.32's hierarchical routing (routes to hosts of the other leaf looked up the wrong zone).
      NetPoint* leaf_gateway = nullptr;
      for (int node = leaf * s.nodes_per_leaf; node < (leaf + 1) * s.nodes_per_leaf; ++node) {
        auto [zone, gateway] = build_node(s, layout, node, leaf_zone, links[node], true);
        leaf_zone->add_route(zone->get_netpoint(), nullptr, gateway, nullptr, {}, true);
        if (leaf_gateway == nullptr)
          leaf_gateway = gateway;
      }
      uplinks.push_back(split_duplex(leaf_zone, "leaf" + std::to_string(leaf) + "-up", leaf_uplink_bandwidth(s), 0));
      apart.emplace_back(leaf_zone, leaf_gateway);
    }
  }
  for (std::size_t k = 0; k < apart.size(); ++k) {
    auto [zone, gateway] = apart[k];
    zone->set_parent(root);
    zone->seal();
    std::vector<sg4::LinkInRoute> up;
    if (!uplinks.empty())
      up.emplace_back(uplinks[k], sg4::LinkInRoute::Direction::UP);
    root->add_route(zone->get_netpoint(), nullptr, gateway, nullptr, up, true);
  }
  root->seal();
}

} // namespace ddlsim::platform
