// Simulation tests of the engine itself: SimGrid allows one engine per process, and simulate() says so.
#include "common/error.hpp"
#include "sim/sim_helpers.hpp"
#include "support/test_platforms.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("a second simulation in the same process is refused with ddlsim::Error")
{
  const auto platform = test::write_star_platform({});
  const auto workload = test::single_tensor_workload(1000000);
  REQUIRE_NOTHROW(test::run(platform, workload, dag::Schedule::Wfbp));
  CHECK_THROWS_MATCHES(test::run(platform, workload, dag::Schedule::Wfbp), Error,
                       Catch::Matchers::Message("internal: SimGrid allows one simulation per process"));
}
