// Platform XML checked before SimGrid sees it (SimGrid 3.32 aborts or crashes on many inconsistent platforms):
// libxml2 parses it and validates it against ddlsim's DTD, then ddlsim's own checks resolve every name and prove
// every host reachable from every other, zone by zone, in time linear in the document.
#include "platform/platform_check.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <libxml/xmlerror.h>

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ddlsim::platform {
namespace {

/** The platform elements ddlsim accepts, written for ddlsim from SimGrid's platform documentation (Debian's
 *  SimGrid 3.32 packages do not install simgrid.dtd). Element order inside a zone is left to SimGrid's parser;
 *  what this adds is the set of elements and attributes, required attributes and the enumerated values,
 *  routing included ("Fulx" is refused here: SimGrid aborts on it). */
const char* const kPlatformDtd = R"dtd(
<!ENTITY % zone-content "prop|zone|AS|cluster|cabinet|peer|host|router|link|backbone|host_link|route|zoneRoute|ASroute
                         |bypassRoute|bypassZoneRoute|bypassASroute|trace|trace_connect">
<!ENTITY % routing "(Full|Floyd|Dijkstra|DijkstraCache|None|Vivaldi|Cluster|ClusterTorus|ClusterFatTree
                     |ClusterDragonfly|Star|Wifi)">
<!ENTITY % yes-no "(YES|NO|yes|no)">
<!ENTITY % sharing "(SHARED|SPLITDUPLEX|FULLDUPLEX|FATPIPE|WIFI)">
<!ELEMENT platform (config|zone|AS|cluster|cabinet|peer|trace|trace_connect|actor|process)*>
<!ATTLIST platform version CDATA #IMPLIED>
<!ELEMENT config (prop)*>
<!ATTLIST config id CDATA #IMPLIED>
<!ELEMENT zone (%zone-content;)*>
<!ATTLIST zone id CDATA #REQUIRED routing %routing; #REQUIRED>
<!ELEMENT AS (%zone-content;)*>
<!ATTLIST AS id CDATA #REQUIRED routing %routing; #REQUIRED>
<!ELEMENT host (prop|disk)*>
<!ATTLIST host id CDATA #REQUIRED speed CDATA #REQUIRED core CDATA #IMPLIED pstate CDATA #IMPLIED
               coordinates CDATA #IMPLIED speed_file CDATA #IMPLIED state_file CDATA #IMPLIED
               availability_file CDATA #IMPLIED>
<!ELEMENT disk (prop)*>
<!ATTLIST disk id CDATA #IMPLIED read_bw CDATA #REQUIRED write_bw CDATA #REQUIRED>
<!ELEMENT prop EMPTY>
<!ATTLIST prop id CDATA #REQUIRED value CDATA #REQUIRED>
<!ELEMENT router EMPTY>
<!ATTLIST router id CDATA #REQUIRED coordinates CDATA #IMPLIED>
<!ELEMENT link (prop)*>
<!ATTLIST link id CDATA #REQUIRED bandwidth CDATA #REQUIRED latency CDATA #IMPLIED sharing_policy %sharing; #IMPLIED
               bandwidth_file CDATA #IMPLIED latency_file CDATA #IMPLIED state_file CDATA #IMPLIED>
<!ELEMENT backbone EMPTY>
<!ATTLIST backbone id CDATA #REQUIRED bandwidth CDATA #REQUIRED latency CDATA #REQUIRED>
<!ELEMENT host_link EMPTY>
<!ATTLIST host_link id CDATA #REQUIRED up CDATA #REQUIRED down CDATA #REQUIRED>
<!ELEMENT route (link_ctn)*>
<!ATTLIST route src CDATA #REQUIRED dst CDATA #REQUIRED symmetrical %yes-no; #IMPLIED>
<!ELEMENT zoneRoute (link_ctn)*>
<!ATTLIST zoneRoute src CDATA #REQUIRED dst CDATA #REQUIRED gw_src CDATA #REQUIRED gw_dst CDATA #REQUIRED
                    symmetrical %yes-no; #IMPLIED>
<!ELEMENT ASroute (link_ctn)*>
<!ATTLIST ASroute src CDATA #REQUIRED dst CDATA #REQUIRED gw_src CDATA #REQUIRED gw_dst CDATA #REQUIRED
                  symmetrical %yes-no; #IMPLIED>
<!ELEMENT bypassRoute (link_ctn)*>
<!ATTLIST bypassRoute src CDATA #REQUIRED dst CDATA #REQUIRED>
<!ELEMENT bypassZoneRoute (link_ctn)*>
<!ATTLIST bypassZoneRoute src CDATA #REQUIRED dst CDATA #REQUIRED gw_src CDATA #REQUIRED gw_dst CDATA #REQUIRED>
<!ELEMENT bypassASroute (link_ctn)*>
<!ATTLIST bypassASroute src CDATA #REQUIRED dst CDATA #REQUIRED gw_src CDATA #REQUIRED gw_dst CDATA #REQUIRED>
<!ELEMENT link_ctn EMPTY>
<!ATTLIST link_ctn id CDATA #REQUIRED direction (UP|DOWN|NONE) #IMPLIED>
<!ELEMENT cluster (prop)*>
<!ATTLIST cluster id CDATA #REQUIRED prefix CDATA #REQUIRED suffix CDATA #REQUIRED radical CDATA #REQUIRED
                  speed CDATA #REQUIRED bw CDATA #REQUIRED lat CDATA #REQUIRED core CDATA #IMPLIED
                  sharing_policy %sharing; #IMPLIED topology (FLAT|TORUS|FAT_TREE|DRAGONFLY) #IMPLIED
                  topo_parameters CDATA #IMPLIED bb_bw CDATA #IMPLIED bb_lat CDATA #IMPLIED
                  bb_sharing_policy (SHARED|FATPIPE) #IMPLIED router_id CDATA #IMPLIED limiter_link CDATA #IMPLIED
                  loopback_bw CDATA #IMPLIED loopback_lat CDATA #IMPLIED>
<!ELEMENT cabinet EMPTY>
<!ATTLIST cabinet id CDATA #REQUIRED prefix CDATA #REQUIRED suffix CDATA #REQUIRED radical CDATA #REQUIRED
                  speed CDATA #REQUIRED bw CDATA #REQUIRED lat CDATA #REQUIRED>
<!ELEMENT peer EMPTY>
<!ATTLIST peer id CDATA #REQUIRED speed CDATA #REQUIRED bw_in CDATA #REQUIRED bw_out CDATA #REQUIRED
               lat CDATA #IMPLIED coordinates CDATA #IMPLIED speed_file CDATA #IMPLIED state_file CDATA #IMPLIED
               availability_file CDATA #IMPLIED>
<!ELEMENT trace (#PCDATA)>
<!ATTLIST trace id CDATA #REQUIRED file CDATA #IMPLIED periodicity CDATA #REQUIRED>
<!ELEMENT trace_connect EMPTY>
<!ATTLIST trace_connect kind (HOST_AVAIL|SPEED|LINK_AVAIL|BANDWIDTH|LATENCY) #IMPLIED trace CDATA #REQUIRED
                        element CDATA #REQUIRED>
<!ELEMENT actor (argument|prop)*>
<!ATTLIST actor host CDATA #REQUIRED function CDATA #REQUIRED start_time CDATA #IMPLIED kill_time CDATA #IMPLIED
                on_failure (DIE|RESTART) #IMPLIED>
<!ELEMENT process (argument|prop)*>
<!ATTLIST process host CDATA #REQUIRED function CDATA #REQUIRED start_time CDATA #IMPLIED kill_time CDATA #IMPLIED
                  on_failure (DIE|RESTART) #IMPLIED>
<!ELEMENT argument EMPTY>
<!ATTLIST argument value CDATA #REQUIRED>
)dtd";

/** The first error libxml2 reports, one line with its line number. */
struct FirstError {
  std::string message;
  int line = 0;
};

void collect_error(void* context, xmlErrorPtr error)
{
  auto* first = static_cast<FirstError*>(context);
  // SimGrid's own parser accepts "--" inside comments (the shipped platforms have some): so does ddlsim.
  if (error == nullptr || !first->message.empty() || error->level == XML_ERR_WARNING ||
      error->code == XML_ERR_HYPHEN_IN_COMMENT)
    return;
  std::string text = error->message == nullptr ? "malformed XML" : error->message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  for (char& c : text)
    if (c == '\n')
      c = ' ';
  first->message = text;
  first->line = error->line;
}

/** Installs collect_error for the lifetime of the object, restores libxml2's default handler after. */
class ErrorCapture {
public:
  ErrorCapture() { xmlSetStructuredErrorFunc(&first_, collect_error); }
  ~ErrorCapture() { xmlSetStructuredErrorFunc(nullptr, nullptr); }
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;
  const FirstError& first() const { return first_; }

private:
  FirstError first_;
};

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
struct DtdFree {
  void operator()(xmlDtd* d) const { xmlFreeDtd(d); }
};
struct ValidFree {
  void operator()(xmlValidCtxt* v) const { xmlFreeValidCtxt(v); }
};

std::string attribute(xmlNode* node, const char* name)
{
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr)
    return {};
  std::string out(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return out;
}

bool named(const xmlNode* node, const char* name)
{
  return node->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(node->name), name) == 0;
}

/** A route or zoneRoute of a zone. */
struct Route {
  std::string src, dst, gw_src, gw_dst;
  bool symmetrical = true;
  bool zone_route = false;
  int line = 0;
};

struct Zone {
  std::string id;
  std::string routing;
  int parent = -1;
  int line = 0;
  bool has_hosts = false;           ///< a host in this zone or below (a <cluster> counts)
  std::vector<int> children;        ///< child zones (clusters included)
  std::vector<std::string> members; ///< hosts and routers declared directly in this zone
  std::vector<std::string> hosts;   ///< hosts declared directly in this zone
  std::vector<Route> routes;
  std::unordered_set<std::string> gateways; ///< members used as gateways by the parent's zoneRoutes
};

/** Everything the checks need from the document, with the names resolved. */
class Model {
public:
  Model(const std::string& file)
      : file_(file)
  {
  }

  [[noreturn]] void fail(int line, const std::string& what) const
  {
    throw InputError(file_ + ": line " + std::to_string(line) + ": " + what);
  }

  void read(xmlNode* root)
  {
    for (xmlNode* n = root->children; n != nullptr; n = n->next)
      read_element(n, -1, 1);
    for (std::size_t z = zones_.size(); z-- > 0;) // children come after their parent: propagate upwards
      if (zones_[z].has_hosts && zones_[z].parent >= 0)
        zones_[zones_[z].parent].has_hosts = true;
    for (const auto& z : zones_)
      for (const auto& r : z.routes)
        if (r.zone_route)
          for (const auto& [end, gw] : {std::pair{&r.src, &r.gw_src}, std::pair{&r.dst, &r.gw_dst}})
            if (auto it = zone_index_.find(*end); it != zone_index_.end())
              zones_[it->second].gateways.insert(*gw);
  }

  void check() const
  {
    for (std::size_t z = 0; z < zones_.size(); ++z)
      check_references(static_cast<int>(z));
    for (const auto& [id, line] : link_uses_)
      if (!links_.count(id))
        fail(line, "link_ctn names link '" + id + "', which is not declared");
    for (std::size_t z = 0; z < zones_.size(); ++z)
      check_reachability(zones_[z]);
  }

private:
  void read_element(xmlNode* n, int zone, int depth)
  {
    if (n->type != XML_ELEMENT_NODE)
      return;
    const int line = static_cast<int>(xmlGetLineNo(n));
    if (named(n, "zone") || named(n, "AS") || named(n, "cluster")) {
      if (depth > kMaxZoneDepth)
        fail(line, "zones nested " + std::to_string(depth) + " deep (at most " + std::to_string(kMaxZoneDepth) + ")");
      Zone z;
      z.id = attribute(n, "id");
      z.routing = named(n, "cluster") ? "Cluster" : attribute(n, "routing");
      z.parent = zone;
      z.line = line;
      z.has_hosts = named(n, "cluster");
      const int index = static_cast<int>(zones_.size());
      if (!zone_index_.emplace(z.id, index).second)
        fail(line, "zone '" + z.id + "' declared twice");
      if (named(n, "cluster")) { // its router, the gateway of zoneRoutes (SimGrid's default name)
        const std::string router = attribute(n, "router_id");
        declare_netpoint(router.empty() ? attribute(n, "prefix") + z.id + "_router" + attribute(n, "suffix") : router,
                         index, line, false);
      }
      zones_.push_back(std::move(z));
      if (zone >= 0)
        zones_[zone].children.push_back(index);
      for (xmlNode* c = n->children; c != nullptr; c = c->next)
        read_element(c, index, depth + 1);
      return;
    }
    if (zone < 0)
      return; // config, trace, actor: nothing to resolve
    Zone& z = zones_[zone];
    if (named(n, "host") || named(n, "router") || named(n, "peer")) {
      const std::string id = attribute(n, "id");
      declare_netpoint(id, zone, line, !named(n, "router"));
      z.members.push_back(id);
      if (!named(n, "router")) {
        z.hosts.push_back(id);
        z.has_hosts = true;
      }
    } else if (named(n, "cabinet")) {
      z.has_hosts = true;
    } else if (named(n, "link") || named(n, "backbone")) {
      if (!links_.insert(attribute(n, "id")).second)
        fail(line, "link '" + attribute(n, "id") + "' declared twice");
    } else if (named(n, "route") || named(n, "zoneRoute") || named(n, "ASroute")) {
      Route r;
      r.src = attribute(n, "src");
      r.dst = attribute(n, "dst");
      r.zone_route = !named(n, "route");
      r.gw_src = attribute(n, "gw_src");
      r.gw_dst = attribute(n, "gw_dst");
      const std::string sym = attribute(n, "symmetrical");
      r.symmetrical = sym != "NO" && sym != "no";
      r.line = line;
      for (xmlNode* c = n->children; c != nullptr; c = c->next)
        if (named(c, "link_ctn"))
          link_uses_.emplace_back(attribute(c, "id"), static_cast<int>(xmlGetLineNo(c)));
      z.routes.push_back(std::move(r));
    }
  }

  void declare_netpoint(const std::string& id, int zone, int line, bool host)
  {
    if (!netpoint_zone_.emplace(id, zone).second)
      fail(line, std::string(host ? "host" : "router") + " '" + id + "' declared twice");
  }

  /** Whether zone `inner` is `outer` or inside it. */
  bool within(int inner, int outer) const
  {
    for (int z = inner; z >= 0; z = zones_[z].parent)
      if (z == outer)
        return true;
    return false;
  }

  void check_references(int index) const
  {
    const Zone& z = zones_[index];
    if (z.routing == "None" && !z.routes.empty())
      fail(z.routes.front().line, "zone '" + z.id + "' has routing=\"None\" but declares a route");
    for (const auto& r : z.routes) {
      if (!r.zone_route) {
        for (const auto* end : {&r.src, &r.dst}) {
          auto it = netpoint_zone_.find(*end);
          if (it == netpoint_zone_.end() || it->second != index)
            fail(r.line,
                 "route " + r.src + " -> " + r.dst + ": '" + *end + "' is not a host or router of zone '" + z.id + "'");
        }
        continue;
      }
      for (const auto& [end, gw] : {std::pair{&r.src, &r.gw_src}, std::pair{&r.dst, &r.gw_dst}}) {
        auto zit = zone_index_.find(*end);
        if (zit == zone_index_.end() || zones_[zit->second].parent != index)
          fail(r.line,
               "zoneRoute " + r.src + " -> " + r.dst + ": '" + *end + "' is not a zone inside zone '" + z.id + "'");
        auto git = netpoint_zone_.find(*gw);
        if (git == netpoint_zone_.end() || !within(git->second, zit->second))
          fail(r.line, "zoneRoute " + r.src + " -> " + r.dst + ": gateway '" + *gw +
                           "' is not a host or router of zone '" + *end + "'");
      }
    }
  }

  /** The endpoints a zone must connect: its hosts, its child zones holding hosts, the gateways its parent uses. */
  std::vector<std::string> endpoints(const Zone& z) const
  {
    std::vector<std::string> out = z.hosts;
    for (int c : z.children)
      if (zones_[c].has_hosts)
        out.push_back(zones_[c].id);
    for (const auto& m : z.members)
      if (z.gateways.count(m) && !contains_host(z, m))
        out.push_back(m);
    return out;
  }
  static bool contains_host(const Zone& z, const std::string& id)
  {
    for (const auto& h : z.hosts)
      if (h == id)
        return true;
    return false;
  }
  void check_reachability(const Zone& z) const
  {
    const bool full = z.routing == "Full";
    const bool graph = z.routing == "Floyd" || z.routing == "Dijkstra" || z.routing == "DijkstraCache";
    if (!full && !graph && z.routing != "None")
      return; // Cluster, Star, Vivaldi, Wifi: SimGrid routes every member by construction
    if (!z.has_hosts)
      return;
    const std::vector<std::string> ends = endpoints(z);
    if (ends.size() < 2)
      return;
    if (z.routing == "None")
      fail(z.line, "zone '" + z.id + "' has routing=\"None\" but " + std::to_string(ends.size()) +
                       " hosts or zones to connect ('" + ends[0] + "', '" + ends[1] + "', ...)");
    std::unordered_map<std::string, std::vector<std::string>> next, prev;
    std::unordered_set<std::string> pairs;
    for (const auto& r : z.routes) {
      next[r.src].push_back(r.dst);
      prev[r.dst].push_back(r.src);
      pairs.insert(r.src + '\n' + r.dst);
      if (r.symmetrical) {
        next[r.dst].push_back(r.src);
        prev[r.src].push_back(r.dst);
        pairs.insert(r.dst + '\n' + r.src);
      }
    }
    if (full) {
      // Full routing is a table: every ordered pair of endpoints needs its own entry (gateway pairs excepted).
      for (std::size_t a = 0; a < ends.size(); ++a)
        for (std::size_t b = 0; b < ends.size(); ++b)
          if (a != b && !(a >= first_gateway(z, ends) && b >= first_gateway(z, ends)) &&
              !pairs.count(ends[a] + '\n' + ends[b]))
            fail(z.line,
                 "zone '" + z.id + "' (routing=\"Full\") has no route from '" + ends[a] + "' to '" + ends[b] + "'");
      return;
    }
    for (const auto* edges : {&next, &prev}) {
      std::unordered_set<std::string> seen = {ends[0]};
      std::vector<std::string> todo = {ends[0]};
      while (!todo.empty()) {
        const std::string at = todo.back();
        todo.pop_back();
        auto it = edges->find(at);
        if (it != edges->end())
          for (const auto& to : it->second)
            if (seen.insert(to).second)
              todo.push_back(to);
      }
      for (const auto& e : ends)
        if (!seen.count(e))
          fail(z.line, "zone '" + z.id + "' (routing=\"" + z.routing + "\") has no path " +
                           (edges == &next ? "from '" + ends[0] + "' to '" + e : "from '" + e + "' to '" + ends[0]) +
                           "'");
    }
  }
  /** endpoints() lists gateways last: the index of the first. */
  std::size_t first_gateway(const Zone& z, const std::vector<std::string>& ends) const
  {
    std::size_t n = z.hosts.size();
    for (int c : z.children)
      n += zones_[c].has_hosts ? 1 : 0;
    return std::min(n, ends.size());
  }

  std::string file_;
  std::vector<Zone> zones_;
  std::unordered_map<std::string, int> zone_index_;
  std::unordered_map<std::string, int> netpoint_zone_;
  std::unordered_set<std::string> links_;
  std::vector<std::pair<std::string, int>> link_uses_;
};

} // namespace

void check_platform_xml(const std::string& xml, const std::string& file)
{
  ErrorCapture capture;
  auto fail = [&](const std::string& what) {
    const FirstError& e = capture.first();
    throw InputError(file + ": " + (e.line > 0 ? "line " + std::to_string(e.line) + ": " : std::string()) +
                     (e.message.empty() ? what : what + ": " + e.message));
  };
  // No network, no entity substitution, no external DTD: only the text itself is read. RECOVER only to read on
  // past a tolerated "--" in a comment: any other error is captured and refused.
  std::unique_ptr<xmlDoc, DocFree> doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), file.c_str(), nullptr,
                                                     XML_PARSE_NONET | XML_PARSE_RECOVER));
  if (!doc || !capture.first().message.empty())
    fail("not well-formed XML");
  if (doc->intSubset != nullptr && doc->intSubset->children != nullptr)
    throw InputError(file + ": the DOCTYPE declares entities or elements of its own (not supported)");
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr || !named(root, "platform"))
    throw InputError(file + ": the root element must be <platform>");
  xmlParserInputBufferPtr buffer =
      xmlParserInputBufferCreateMem(kPlatformDtd, static_cast<int>(std::strlen(kPlatformDtd)), XML_CHAR_ENCODING_UTF8);
  std::unique_ptr<xmlDtd, DtdFree> dtd(xmlIOParseDTD(nullptr, buffer, XML_CHAR_ENCODING_UTF8));
  if (!dtd)
    throw Error("internal: ddlsim's platform DTD does not parse");
  std::unique_ptr<xmlValidCtxt, ValidFree> valid(xmlNewValidCtxt());
  valid->error = nullptr;
  valid->warning = nullptr;
  if (xmlValidateDtd(valid.get(), doc.get(), dtd.get()) != 1)
    fail("not a valid platform");
  Model model(file);
  model.read(root);
  model.check();
}

bool has_latency_profiles(const std::string& xml)
{
  return xml.find("latency_file") != std::string::npos || xml.find("LATENCY") != std::string::npos;
}

bool has_profiles(const std::string& xml)
{
  for (const char* profile : {"_file", "<trace", "trace_connect", "profile"})
    if (xml.find(profile) != std::string::npos)
      return true;
  return false;
}

} // namespace ddlsim::platform
