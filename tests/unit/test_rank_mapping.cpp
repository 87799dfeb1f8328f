// Unit tests: ranks onto GPU hosts, in natural order or as listed.
#include "common/error.hpp"
#include "platform/rank_mapping.hpp"

#include <catch2/catch.hpp>

using ddlsim::ConfigError;
using ddlsim::platform::select_rank_hosts;

TEST_CASE("ranks take the first GPU hosts in order, all of them by default")
{
  const std::vector<std::string> gpus{"n0-g0", "n0-g1", "n1-g0", "n1-g1"};
  CHECK(select_rank_hosts(gpus, {}, 0, "p.xml") == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(select_rank_hosts(gpus, {}, 2, "p.xml") == std::vector<std::size_t>{0, 1});
  CHECK_THROWS_WITH(select_rank_hosts(gpus, {}, 5, "p.xml"), "ranks 5 exceeds the 4 GPU hosts of p.xml");
}

TEST_CASE("an explicit host list chooses and orders the hosts")
{
  const std::vector<std::string> gpus{"a", "b", "c"};
  CHECK(select_rank_hosts(gpus, {"c", "a"}, 0, "p.xml") == std::vector<std::size_t>{2, 0});
  CHECK(select_rank_hosts(gpus, {"c", "a"}, 2, "p.xml") == std::vector<std::size_t>{2, 0});
  CHECK_THROWS_WITH(select_rank_hosts(gpus, {"c", "a"}, 3, "p.xml"),
                    "ranks 3 disagrees with the 2 hosts given in hosts");
  CHECK_THROWS_WITH(select_rank_hosts(gpus, {"a", "z"}, 0, "p.xml"), "hosts: 'z' is not a GPU host of p.xml");
  CHECK_THROWS_WITH(select_rank_hosts(gpus, {"a", "a"}, 0, "p.xml"), "hosts: 'a' is listed twice");
}

TEST_CASE("a platform without GPU hosts is rejected")
{
  CHECK_THROWS_AS(select_rank_hosts({}, {}, 0, "p.xml"), ddlsim::InputError); // the file is at fault
}
