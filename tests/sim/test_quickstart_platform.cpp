// Simulation tests on the shipped quick-start platform (4 nodes x 4 P40, PCIe inside, FDR between).
#include "analytical/alpha_beta.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("quick-start platform: a 16-GPU ring runs at its slowest hop, the FDR link, without contention")
{
  const std::uint64_t bytes = 64000000;
  const auto out = test::run(DDLSIM_SOURCE_DIR "/platforms/p40-4x4-ib56.xml", test::single_tensor_workload(bytes),
                             dag::Schedule::Wfbp);
  REQUIRE(out.hosts.size() == 16);
  CHECK(out.hosts[4] == "node1-gpu0");
  const auto s = report::summarize_phase(out.dag, out.multi);
  // Documented in the platform file: inside a node 5.7 us and 15.754 GB/s; across nodes 9.6 us and 6.03 GB/s.
  // Each node's NIC carries one ring flow per direction (split duplex), so the ring is lock-step at the
  // inter-node hop. If the reverse zone routes did not swap UP and DOWN, two flows would share a direction.
  const analytical::Hop hops[] = {{5.7e-6, 15.754e9}, {9.6e-6, 6.03e9}};
  const double expected = analytical::ring_allreduce_s(16, bytes, hops, 2);
  CHECK(expected == Approx(30 * (9.6e-6 + 4e6 / 6.03e9)).epsilon(1e-12));
  INFO("simulated " << s.iteration_time_s << " s, closed form " << expected << " s");
  CHECK(test::relative_error(s.iteration_time_s, expected) < 1e-9);
}
