// Unit tests: checked parsing, natural order, unit formatting.
#include "cli/flags.hpp"
#include "collectives/algorithm_spec.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

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

TEST_CASE("size switches parse into their algorithms and thresholds in bytes")
{
  using collectives::AlgorithmId;
  const auto sw = collectives::parse_algorithm("rd<=8KiB,hd");
  REQUIRE(sw.choices.size() == 2);
  CHECK(sw.choices[0].id == AlgorithmId::Rd);
  CHECK(sw.choices[0].max_bytes == 8192);
  CHECK(sw.choices[1].id == AlgorithmId::Hd);
  CHECK(sw.for_size(8192) == AlgorithmId::Rd);
  CHECK(sw.for_size(8193) == AlgorithmId::Hd);
  CHECK(sw.text == "rd<=8KiB,hd");
  const auto three = collectives::parse_algorithm("rd<=8KiB,hd<=1MiB,ring");
  CHECK(three.for_size(1 << 20) == AlgorithmId::Hd);
  CHECK(three.for_size((1 << 20) + 1) == AlgorithmId::Ring);
  CHECK_FALSE(collectives::parse_algorithm("ring").switches());
  CHECK_THROWS_WITH(collectives::parse_algorithm("rd<=8XB,hd"),
                    Catch::Matchers::StartsWith("algorithm rd<=8XB,hd: unknown byte unit 'XB'"));
  CHECK_THROWS_WITH(collectives::parse_algorithm("rd<=1MiB,hd<=8KiB,ring"),
                    "algorithm rd<=1MiB,hd<=8KiB,ring: the sizes of a size switch must increase");
  CHECK_THROWS_WITH(collectives::parse_algorithm("magic"),
                    Catch::Matchers::StartsWith("algorithm must be one of: ring"));
  CHECK_THROWS_WITH(collectives::parse_algorithm("ps<=8KiB,ring"),
                    Catch::Matchers::StartsWith("algorithm ps<=8KiB,ring: a size switch chooses between flat"));
}

TEST_CASE("library errors name fields, the command line shows the flags that set them")
{
  const ConfigError e(field("ps_servers") + " must be >= 1; " + field("chunk_bytes") + " and " + field("simgrid_cfg") +
                      " too");
  CHECK(std::string(e.what()) == "ps_servers must be >= 1; chunk_bytes and simgrid_cfg too");
  CHECK(cli::with_flags(e.message_template()) == "--servers must be >= 1; --chunk-bytes and --cfg too");
  CHECK(cli::flag_for("inter_algorithm") == "--inter-algorithm");
  CHECK(cli::flag_for("msg_overhead_s") == "--msg-overhead");
  CHECK(cli::with_flags("no fields here") == "no fields here");
}

TEST_CASE("times and sizes need a unit, except a bare 0")
{
  CHECK(parse_seconds("32us", "t") == Approx(32e-6));
  CHECK(parse_seconds("1.5ms", "t") == Approx(1.5e-3));
  CHECK(parse_seconds("2s", "t") == 2);
  CHECK(parse_seconds("0", "t") == 0);
  CHECK(parse_seconds("0.0", "t") == 0);
  CHECK_THROWS_WITH(parse_seconds("32", "t"), "t: a time needs a unit: s, ms, us, ns (got '32')");
  CHECK_THROWS_WITH(parse_seconds("-0", "t"), Catch::Matchers::StartsWith("t: expected a time >= 0"));
  CHECK_THROWS_WITH(parse_seconds("-.0s", "t"), Catch::Matchers::StartsWith("t: expected a time >= 0"));
  CHECK_THROWS_WITH(parse_seconds("0x1s", "t"), Catch::Matchers::StartsWith("t: expected a time >= 0"));
  CHECK_THROWS_WITH(parse_seconds("infs", "t"), Catch::Matchers::StartsWith("t: expected a time >= 0"));
  CHECK_THROWS_WITH(parse_seconds("5h", "t"), "t: unknown time unit 'h' in '5h' (use s, ms, us, ns)");
  CHECK(parse_bytes("4B", "s") == 4);
  CHECK(parse_bytes("8KiB", "s") == 8192);
  CHECK(parse_bytes("0", "s") == 0);
  CHECK_THROWS_WITH(
      parse_bytes("4096", "s"),
      "s: a size needs a unit: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB (got '4096'; write 4096B for bytes)");
}

TEST_CASE("format_double prints the fewest significant digits that read back as the same double")
{
  CHECK(format_double(0.0005) == "0.0005");
  CHECK(format_double(0.1) == "0.1");
  CHECK(format_double(424.782) == "424.782");
  CHECK(format_double(123456) == "123456");
  CHECK(format_double(1e22) == "1e+22");
  CHECK(format_double(1.0 / 3) == "0.3333333333333333");
  CHECK(format_double(-0.0) == "-0");
  CHECK(format_double(std::numeric_limits<double>::denorm_min()) == "5e-324");
  CHECK(format_double(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_double(-std::numeric_limits<double>::infinity()) == "-inf");
  // Doubles of every magnitude against the definition: "%.*g" at the least precision that reads back.
  std::uint64_t bits = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 20000; ++i) {
    bits ^= bits << 13;
    bits ^= bits >> 7;
    bits ^= bits << 17;
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v))
      continue;
    char least[64];
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(least, sizeof least, "%.*g", precision, v);
      if (std::strtod(least, nullptr) == v)
        break;
    }
    REQUIRE(format_double(v) == least);
  }
}
