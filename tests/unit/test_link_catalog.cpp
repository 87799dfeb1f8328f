// Unit tests of the link catalogue: the figures of data/interconnects/README.md and NCCL's latency model.
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/link_catalog.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using platform::link_by_name;

TEST_CASE("link catalogue: bandwidths are the cited or theoretical figures")
{
  CHECK(link_by_name("pcie3-x16").bandwidth_bytes_per_s == Approx(8e9 * 16 * 128.0 / 130.0 / 8).epsilon(1e-4));
  CHECK(link_by_name("pcie4-x16").bandwidth_bytes_per_s == Approx(16e9 * 16 * 128.0 / 130.0 / 8).epsilon(1e-4));
  CHECK(link_by_name("nvlink1").bandwidth_bytes_per_s == 18.3e9);
  CHECK(link_by_name("nvlink2").bandwidth_bytes_per_s * 2 == 47.9e9);
  CHECK(link_by_name("nvlink3").bandwidth_bytes_per_s == 600e9 / 12 / 2);
  CHECK(link_by_name("10gbe").bandwidth_bytes_per_s == 10e9 / 8);
  CHECK(link_by_name("25gbe").bandwidth_bytes_per_s == 25e9 / 8);
  CHECK(link_by_name("ib56").bandwidth_bytes_per_s == 6.03e9);
  CHECK(link_by_name("ib100").bandwidth_bytes_per_s == 12.2e9);
  CHECK(link_by_name("ib200").bandwidth_bytes_per_s == 24e9);
}

TEST_CASE("link catalogue: latencies reproduce NCCL's per-hop figures over the routes they sit on")
{
  const auto& pcie = link_by_name("pcie3-x16");
  CHECK(pcie.latency_s == Approx(2.85e-6).epsilon(1e-12));
  CHECK(link_by_name("pcie4-x16").latency_s == pcie.latency_s);
  CHECK(2 * pcie.latency_s == Approx(5.7e-6).epsilon(1e-12));
  for (const char* name : {"nvlink1", "nvlink2", "nvlink3"}) {
    INFO(name);
    CHECK(link_by_name(name).route_latency_s == 3.4e-6);
    CHECK(2 * link_by_name(name).latency_s == Approx(3.4e-6).epsilon(1e-12));
  }
  for (const char* name : {"ib56", "ib100", "ib200"}) {
    INFO(name);
    const auto& nic = link_by_name(name);
    CHECK(nic.latency_s == Approx(1.95e-6).epsilon(1e-12));
    CHECK(2 * pcie.latency_s + 2 * nic.latency_s == Approx(9.6e-6).epsilon(1e-12));
    CHECK(nic.route_latency_s == 9.6e-6);
  }
}

TEST_CASE("link catalogue: Ethernet has its own measured network latency, distinct from InfiniBand's")
{
  const auto& pcie = link_by_name("pcie3-x16");
  for (const char* name : {"10gbe", "25gbe"}) {
    INFO(name);
    const auto& nic = link_by_name(name);
    // NIC to NIC: the 4 B OSU allreduce on 2 nodes over 10GbE, 31.92 us (data/osu-allreduce-10gbe/allreduce2.log).
    CHECK(2 * nic.latency_s == Approx(31.92e-6).epsilon(1e-12));
    CHECK(2 * pcie.latency_s + 2 * nic.latency_s == Approx(37.62e-6).epsilon(1e-12));
    CHECK(nic.route_latency_s == Approx(37.62e-6).epsilon(1e-12));
    CHECK(nic.latency_source.find("allreduce2.log") != std::string::npos);
  }
  CHECK(link_by_name("25gbe").latency_source.find("no 25 GbE latency measurement") == 0);
  CHECK(link_by_name("ib56").latency_source.find("NCCL's per-hop ring latency model") == 0);
}

TEST_CASE("link catalogue: every class says where its bandwidth comes from")
{
  for (const auto& c : platform::link_catalog()) {
    INFO(c.name);
    const bool measured = c.bandwidth_source.find("measured") == 0 || c.bandwidth_source.find("rule of thumb") == 0;
    const bool theoretical = c.bandwidth_source.find("theoretical") == 0;
    CHECK((measured || theoretical));
    if (measured)
      CHECK(c.bandwidth_source.find("interconnects/README.md") != std::string::npos);
  }
}

TEST_CASE("link catalogue: every cited file is in the repository's own data/")
{
  for (const auto& c : platform::link_catalog()) {
    INFO(c.name << ": " << c.bandwidth_source);
    CHECK(c.bandwidth_source.find("shared/") == std::string::npos);
    const auto at = c.bandwidth_source.find("data/interconnects/README.md");
    if (c.bandwidth_source.find("interconnects/README.md") != std::string::npos)
      CHECK(at != std::string::npos);
  }
  CHECK(readable_file(DDLSIM_SOURCE_DIR "/data/interconnects/README.md"));
}

TEST_CASE("link catalogue: the PCIe constants are the catalogue's, every GPU's links are catalogued")
{
  CHECK(link_by_name("pcie3-x16").bandwidth_bytes_per_s == platform::kPcie3x16Bandwidth_bytes_per_s);
  CHECK(platform::pcie_x16_link(3).name == "pcie3-x16");
  CHECK(platform::pcie_x16_link(4).bandwidth_bytes_per_s == platform::kPcie4x16Bandwidth_bytes_per_s);
  CHECK(platform::nvlink_link(2).name == "nvlink2");
  CHECK_THROWS_AS(platform::nvlink_link(0), ConfigError);
  for (const auto& gpu : platform::gpu_catalog()) {
    INFO(gpu.name);
    CHECK_NOTHROW(platform::pcie_x16_link(gpu.pcie_generation));
    CHECK((gpu.nvlink_generation == 0) == (gpu.nvlink_links == 0));
    if (gpu.nvlink_generation > 0)
      CHECK_NOTHROW(platform::nvlink_link(gpu.nvlink_generation));
    CHECK(gpu.gpus_per_board >= 1);
    CHECK((gpu.gpus_per_board > 1) == !gpu.chip.empty());
    CHECK(!gpu.interconnect_source.empty());
  }
  CHECK(platform::gpu_by_name("A100-SXM4-40GB").pcie_generation == 4);
  CHECK(platform::gpu_by_name("K80").gpus_per_board == 2);
}

TEST_CASE("link catalogue: an unknown class is rejected with the known names")
{
  CHECK_THROWS_WITH(link_by_name("ib400"),
                    "unknown link class 'ib400' (known: pcie3-x16, pcie4-x16, nvlink1, nvlink2, nvlink3, "
                    "10gbe, 25gbe, ib56, ib100, ib200)");
  CHECK_THROWS_AS(link_by_name("ib400"), ConfigError);
}
