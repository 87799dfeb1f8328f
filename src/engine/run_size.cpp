// The memory a training run will need, estimated before it starts and refused when the machine cannot hold it.
#include "engine/run_size.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <limits>
#include <unistd.h>

namespace ddlsim::engine {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t mul(std::uint64_t a, std::uint64_t b)
{
  return a != 0 && b > kMax / a ? kMax : a * b;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b)
{
  return b > kMax - a ? kMax : a + b;
}

std::uint64_t records_of(const RunSize& s)
{
  return add(mul(mul(s.ranks, s.iterations), s.tasks), mul(s.iterations, s.baseline_tasks));
}

} // namespace

std::uint64_t estimate_run_bytes(const RunSize& s)
{
  const std::uint64_t records = records_of(s);
  std::uint64_t bytes = mul(records, kBytesPerRecord + (s.trace ? kBytesPerTraceEvent : 0));
  bytes = add(bytes, mul(mul(s.ranks, s.tasks), kBytesPerRankTask));
  bytes = add(bytes, mul(s.baseline_tasks, kBytesPerRankTask));
  bytes = add(bytes, mul(s.platform_hosts, kBytesPerHost));
  return add(bytes, mul(s.platform_routes, kBytesPerRoute));
}

std::uint64_t physical_memory_bytes()
{
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? mul(std::uint64_t(pages), std::uint64_t(page)) : 0;
}

void check_run_size(const RunSize& s, std::uint64_t physical_bytes)
{
  const std::uint64_t need = estimate_run_bytes(s);
  if (physical_bytes == 0 || need <= physical_bytes)
    return;
  throw ConfigError("this run needs about " + format_bytes(double(need)) + " of memory, more than this machine's " +
                    format_bytes(double(physical_bytes)) + " (" + std::to_string(s.ranks) + " ranks x " +
                    std::to_string(s.iterations) + " iterations x " + std::to_string(s.tasks) +
                    " tasks = " + std::to_string(records_of(s)) + " task records" +
                    (s.trace ? " with trace events" : "") + ", " + std::to_string(s.platform_hosts) + " hosts; lower " +
                    field("iterations") + " or " + field("ranks") + ", or use fewer layers)");
}

} // namespace ddlsim::engine
