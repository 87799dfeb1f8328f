// Unit tests: checked parsing, natural order, unit formatting.
#include "common/algorithm_spec.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("natural_less orders digit runs by value")
{
  CHECK(natural_less("node2-gpu1", "node10-gpu0"));
  CHECK_FALSE(natural_less("node10-gpu0", "node2-gpu1"));
  CHECK(natural_less("gpu9", "gpu10"));
  CHECK(natural_less("a", "b"));
  CHECK_FALSE(natural_less("gpu3", "gpu3"));
  CHECK(natural_less("gpu", "gpu0"));
}

TEST_CASE("parse_positive_int accepts whole positive integers only")
{
  CHECK(parse_positive_int("42", "--n") == 42);
  CHECK_THROWS_WITH(parse_positive_int("0", "--n"), "--n must be a positive integer (got '0')");
  CHECK_THROWS_WITH(parse_positive_int("4x", "--n"), "--n must be a positive integer (got '4x')");
  CHECK_THROWS_WITH(parse_positive_int("-1", "--n"), "--n must be a positive integer (got '-1')");
  CHECK_THROWS_AS(parse_positive_int("", "--n"), ConfigError);
}

TEST_CASE("units are printed with their prefix")
{
  CHECK(format_seconds(0.0123) == "12.300 ms");
  CHECK(format_seconds(2.5) == "2.500 s");
  CHECK(format_seconds(4.2e-6) == "4.200 us");
  CHECK(format_bytes(102228128) == "97.49 MiB");
  CHECK(format_bytes(512) == "512 B");
}

TEST_CASE("split keeps empty pieces")
{
  CHECK(split("a,b", ',') == std::vector<std::string>{"a", "b"});
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("a,", ',') == std::vector<std::string>{"a", ""});
}

TEST_CASE("size switches parse into both algorithms and the threshold in bytes")
{
  const auto sw = parse_size_switch("rd<=8KiB,hd");
  REQUIRE(sw.has_value());
  CHECK(sw->small == "rd");
  CHECK(sw->threshold_bytes == 8192);
  CHECK(sw->large == "hd");
  CHECK_FALSE(parse_size_switch("ring").has_value());
  CHECK_THROWS_WITH(parse_size_switch("rd<=8XB,hd"),
                    Catch::Matchers::StartsWith("--algorithm rd<=8XB,hd: unknown byte unit 'XB'"));
}
