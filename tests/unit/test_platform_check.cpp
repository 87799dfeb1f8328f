// Unit tests of the platform check that runs before SimGrid reads a file (src/platform/platform_check.cpp).
#include "common/error.hpp"
#include "common/strings.hpp"
#include "platform/cluster_spec.hpp"
#include "platform/platform_check.hpp"
#include "platform/platform_xml.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>

using namespace ddlsim;

namespace {

/** The error of checking `xml`, or "(accepted)". */
std::string check(const std::string& xml)
{
  try {
    platform::check_platform_xml(xml, "p.xml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string doc(const std::string& body)
{
  return "<?xml version='1.0'?>\n<platform version=\"4.1\">\n" + body + "</platform>\n";
}

const std::string kHosts = "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
                           "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>";

} // namespace

TEST_CASE("platform check: every shipped platform is accepted")
{
  for (const auto& f : std::filesystem::directory_iterator(std::string(DDLSIM_SOURCE_DIR) + "/platforms"))
    if (f.path().extension() == ".xml")
      CHECK_NOTHROW(platform::check_platform_xml(read_file(f.path().string()), f.path().string()));
}

TEST_CASE("platform check: a generated cluster of 128 nodes x 8 GPUs is checked in linear time")
{
  platform::ClusterSpec s;
  s.nodes = 128;
  s.gpus_per_node = 8;
  s.gpu = "V100-SXM2";
  s.intra = platform::Intra::NvLink;
  s.inter = platform::Inter::Ib100;
  const std::string xml = platform::platform_xml(s);
  const auto start = std::chrono::steady_clock::now();
  CHECK(check(xml) == "(accepted)");
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 10);
}

TEST_CASE("platform check: routes, zoneRoutes and routing")
{
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\">" + kHosts +
                  "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone>")) == "(accepted)");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\">" + kHosts + "</zone>")) ==
        "p.xml: line 3: zone 'z' (routing=\"Full\") has no route from 'a' to 'b'");
  // symmetrical="NO" covers one direction only
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\">" + kHosts +
                  "<route src=\"a\" dst=\"b\" symmetrical=\"NO\"><link_ctn id=\"l\"/></route></zone>")) ==
        "p.xml: line 3: zone 'z' (routing=\"Full\") has no route from 'b' to 'a'");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\">" + kHosts +
                  "<route src=\"a\" dst=\"c\"><link_ctn id=\"l\"/></route></zone>")) ==
        "p.xml: line 3: route a -> c: 'c' is not a host or router of zone 'z'");
  CHECK(check(doc("<zone id=\"z\" routing=\"None\"><host id=\"a\" speed=\"1Gf\"/></zone>")) == "(accepted)");
  CHECK(check(doc("<zone id=\"z\" routing=\"None\">" + kHosts + "</zone>")) ==
        "p.xml: line 3: zone 'z' has routing=\"None\" but 2 hosts or zones to connect ('a', 'b', ...)");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><host id=\"a\" speed=\"1Gf\"/>"
                  "</zone>")) == "p.xml: line 3: host 'a' declared twice");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\">" + kHosts + "<link id=\"l\" bandwidth=\"1GBps\"/></zone>")) ==
        "p.xml: line 3: link 'l' declared twice");
}

TEST_CASE("platform check: a zoneRoute needs zones inside the zone and gateways inside them")
{
  const std::string node0 = "<zone id=\"n0\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><router id=\"g0\"/>"
                            "<link id=\"l0\" bandwidth=\"1GBps\"/><route src=\"a\" dst=\"g0\"><link_ctn id=\"l0\"/>"
                            "</route></zone>\n";
  const std::string node1 = "<zone id=\"n1\" routing=\"Full\"><host id=\"b\" speed=\"1Gf\"/><router id=\"g1\"/>"
                            "<link id=\"l1\" bandwidth=\"1GBps\"/><route src=\"b\" dst=\"g1\"><link_ctn id=\"l1\"/>"
                            "</route></zone>\n";
  auto top = [&](const std::string& zone_route) {
    return check(doc("<zone id=\"top\" routing=\"Full\">\n" + node0 + node1 + zone_route + "</zone>"));
  };
  CHECK(top("<zoneRoute src=\"n0\" dst=\"n1\" gw_src=\"g0\" gw_dst=\"g1\"><link_ctn id=\"l0\"/></zoneRoute>") ==
        "(accepted)");
  CHECK(top("<zoneRoute src=\"n0\" dst=\"n1\" gw_src=\"g1\" gw_dst=\"g1\"><link_ctn id=\"l0\"/></zoneRoute>") ==
        "p.xml: line 6: zoneRoute n0 -> n1: gateway 'g1' is not a host or router of zone 'n0'");
  CHECK(top("<zoneRoute src=\"n0\" dst=\"n9\" gw_src=\"g0\" gw_dst=\"g1\"><link_ctn id=\"l0\"/></zoneRoute>") ==
        "p.xml: line 6: zoneRoute n0 -> n9: 'n9' is not a zone inside zone 'top'");
  // the gateway must be reachable from the hosts of its zone
  const std::string cut = "<zone id=\"n0\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><router id=\"g0\"/>"
                          "</zone>\n";
  CHECK(check(doc("<zone id=\"top\" routing=\"Full\">\n" + cut + node1 +
                  "<zoneRoute src=\"n0\" dst=\"n1\" gw_src=\"g0\" gw_dst=\"g1\"><link_ctn id=\"l1\"/></zoneRoute>"
                  "</zone>")) == "p.xml: line 4: zone 'n0' (routing=\"Full\") has no route from 'a' to 'g0'");
}

TEST_CASE("platform check: XML, DTD and depth")
{
  CHECK(check("<platform><zone").rfind("p.xml: line 1: not well-formed XML: ", 0) == 0);
  CHECK(check("<?xml version='1.0'?>\n<zone id=\"z\" routing=\"Full\"/>\n") ==
        "p.xml: the root element must be <platform>");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\"><host id=\"a\"/></zone>")) ==
        "p.xml: line 3: not a valid platform: Element host does not carry attribute speed");
  CHECK(check(doc("<zone id=\"z\" routing=\"Full\"><hots id=\"a\" speed=\"1Gf\"/></zone>"))
            .rfind("p.xml: line 3: not a valid platform: Element zone content does not follow the DTD", 0) == 0);
  CHECK(check("<?xml version='1.0'?>\n<!DOCTYPE platform [<!ENTITY x \"y\">]>\n<platform/>\n") ==
        "p.xml: the DOCTYPE declares entities or elements of its own (not supported)");
  // "--" in a comment: SimGrid accepts it, and so do the shipped platforms
  CHECK(check("<?xml version='1.0'?>\n<!-- a -- b -->\n<platform version=\"4.1\"/>\n") == "(accepted)");
  std::string open, close;
  for (int i = 0; i < platform::kMaxZoneDepth; ++i) {
    open += "<zone id=\"z" + std::to_string(i) + "\" routing=\"Full\">\n";
    close += "</zone>\n";
  }
  CHECK(check(doc(open + close)) == "(accepted)");
  CHECK(check(doc(open + "<zone id=\"deep\" routing=\"Full\"/>\n" + close)) ==
        "p.xml: line " + std::to_string(3 + platform::kMaxZoneDepth) + ": zones nested 65 deep (at most 64)");
}

TEST_CASE("platform check: a platform with a profile is one whose links may change, and no shipped one has any")
{
  const std::string plain = doc("<zone id=\"z\" routing=\"Full\">" + kHosts + "</zone>");
  CHECK_FALSE(platform::has_profiles(plain));
  for (const char* attribute : {"latency_file", "bandwidth_file", "state_file", "speed_file", "availability_file"}) {
    const std::string profiled = doc("<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/>"
                                     "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\" " +
                                     std::string(attribute) + "=\"p.txt\"/></zone>");
    INFO(attribute);
    CHECK(platform::has_profiles(profiled));
  }
  CHECK(platform::has_profiles(doc("<trace id=\"t\" periodicity=\"1\">0 1</trace>"
                                   "<trace_connect kind=\"LATENCY\" trace=\"t\" element=\"l\"/>")));
  for (const auto& f : std::filesystem::directory_iterator(std::string(DDLSIM_SOURCE_DIR) + "/platforms")) {
    if (f.path().extension() != ".xml")
      continue;
    INFO(f.path().string());
    CHECK_FALSE(platform::has_profiles(read_file(f.path().string())));
  }
}

TEST_CASE("platform check: a platform with a latency profile is one whose link latencies may change")
{
  auto link = [](const std::string& attribute) {
    return doc("<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><link id=\"l\" bandwidth=\"1GBps\" "
               "latency=\"1us\" " +
               attribute + "/></zone>");
  };
  CHECK(platform::has_latency_profiles(link("latency_file=\"p.txt\"")));
  CHECK_FALSE(platform::has_latency_profiles(link("")));
  for (const char* other : {"bandwidth_file", "state_file"}) {
    INFO(other);
    CHECK(platform::has_profiles(link(std::string(other) + "=\"p.txt\"")));
    CHECK_FALSE(platform::has_latency_profiles(link(std::string(other) + "=\"p.txt\"")));
  }
  const std::string trace = "<trace id=\"t\" periodicity=\"1\">0 1</trace>";
  CHECK(platform::has_latency_profiles(doc(trace + "<trace_connect kind=\"LATENCY\" trace=\"t\" element=\"l\"/>")));
  CHECK_FALSE(
      platform::has_latency_profiles(doc(trace + "<trace_connect kind=\"BANDWIDTH\" trace=\"t\" element=\"l\"/>")));
}
