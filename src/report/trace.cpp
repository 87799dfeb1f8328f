// Chrome trace (chrome://tracing, Perfetto) of a simulation phase: one row per GPU stream.
#include "report/trace.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

namespace ddlsim::report {
namespace {

/** JSON string escaping for the few characters layer and host names may contain. */
std::string quoted(const std::string& s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

/** The timeline rows of a rank: one per stream, one per lane of concurrent communication streams. */
struct Rows {
  explicit Rows(const dag::IterationDag& dag)
      : dag_(dag)
  {
    for (std::size_t j = 0; j < dag.communication.size(); ++j)
      position_[dag.communication[j].task] = static_cast<int>(j);
  }
  int of(const dag::Task& t, int iteration) const
  {
    switch (t.stream) {
    case dag::Stream::Compute:
      return 0;
    case dag::Stream::Input:
      return 1;
    case dag::Stream::Timer:
      return 2;
    case dag::Stream::Communication:
      break;
    }
    const auto n = static_cast<long>(dag_.communication.size());
    return 3 + static_cast<int>((iteration * n + position_.at(t.id)) % dag_.comm_streams);
  }
  std::vector<std::pair<int, std::string>> names() const
  {
    std::vector<std::pair<int, std::string>> rows{{0, "compute"}};
    if (!dag_.input.empty())
      rows.emplace_back(1, "input");
    if (!dag_.timer.empty())
      rows.emplace_back(2, "fusion cycle");
    for (int k = 0; k < dag_.comm_streams; ++k)
      rows.emplace_back(3 + k, dag_.comm_streams == 1 ? "communication" : "communication " + std::to_string(k));
    return rows;
  }

private:
  const dag::IterationDag& dag_;
  std::map<int, int> position_;
};

/** Microseconds with 6 decimals from whole picoseconds: a slice that ends where the next starts prints the same
 *  digits for both (ts and dur rounded separately used to overlap by 1 ps, which Perfetto reads as nesting). */
std::string microseconds(long long ps)
{
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%lld.%06lld", ps < 0 ? "-" : "", std::llabs(ps) / 1000000,
                std::llabs(ps) % 1000000);
  return buf;
}

} // namespace

std::string chrome_trace(const dag::IterationDag& dag, const dag::PhaseResult& phase, const TraceFilter& filter)
{
  const Rows rows(dag);
  auto keep_rank = [&](int r) { return filter.ranks.empty() || filter.ranks.count(r) > 0; };
  auto keep_iteration = [&](int i) { return filter.iterations.empty() || filter.iterations.count(i) > 0; };
  // With --trace-iterations, counters are kept inside the kept iterations' time spans.
  std::vector<std::pair<double, double>> kept_spans;
  if (!filter.iterations.empty()) {
    std::map<int, std::pair<double, double>> span;
    for (const auto& rec : phase.records) {
      auto [it, fresh] = span.emplace(rec.iteration, std::make_pair(rec.start_s, rec.end_s));
      if (!fresh)
        it->second = {std::min(it->second.first, rec.start_s), std::max(it->second.second, rec.end_s)};
    }
    for (int i : filter.iterations)
      if (span.count(i))
        kept_spans.push_back(span[i]);
  }
  auto keep_time = [&](double t) {
    for (const auto& [a, b] : kept_spans)
      if (t >= a && t <= b)
        return true;
    return false;
  };
  std::ostringstream out;
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto sep = [&] {
    out << (first ? "  " : ",\n  ");
    first = false;
  };
  for (std::size_t r = 0; r < phase.hosts.size(); ++r) {
    if (!keep_rank(static_cast<int>(r)))
      continue;
    sep();
    out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << r << ", \"args\": {\"name\": "
        << quoted("rank " + std::to_string(r) + " (" + phase.hosts[r] + ", " + phase.gpus[r] + ")") << "}}";
    for (const auto& [tid, name] : rows.names()) {
      sep();
      out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << r << ", \"tid\": " << tid
          << ", \"args\": {\"name\": " << quoted(name) << "}}";
    }
  }
  // the kept aggregation slices of each (rank, row), for the flow arrows to bind to
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> aggregations;
  for (const auto& rec : phase.records) {
    if (!keep_rank(rec.rank) || !keep_iteration(rec.iteration))
      continue;
    const dag::Task& t = dag.tasks[rec.task];
    sep();
    const long long start = std::llround(rec.start_s * 1e12), end = std::llround(rec.end_s * 1e12);
    if (t.kind == dag::TaskKind::Aggregation)
      aggregations[{rec.rank, rows.of(t, rec.iteration)}].emplace_back(start, end);
    out << "{\"ph\": \"X\", \"name\": " << quoted(t.name) << ", \"cat\": \"" << dag::to_string(t.kind)
        << "\", \"pid\": " << rec.rank << ", \"tid\": " << rows.of(t, rec.iteration)
        << ", \"ts\": " << microseconds(start) << ", \"dur\": " << microseconds(end - start)
        << ", \"args\": {\"iteration\": " << rec.iteration + 1;
    if (t.kind == dag::TaskKind::Aggregation)
      out << ", \"bytes\": " << t.bytes;
    out << "}}";
  }
  // Flow arrows, one per message between two kept ranks: from the sender's aggregation slice to the receiver's.
  for (auto& [row, slices] : aggregations)
    std::sort(slices.begin(), slices.end());
  // The slice of (rank, row) that holds [start, end], or null: a message runs inside both ends' aggregations.
  auto holding = [&](int rank, int row, long long start, long long end) -> const std::pair<long long, long long>* {
    const auto it = aggregations.find({rank, row});
    if (it == aggregations.end())
      return nullptr;
    const auto& v = it->second;
    auto at = std::upper_bound(v.begin(), v.end(), std::make_pair(start, std::numeric_limits<long long>::max()));
    if (at == v.begin())
      return nullptr;
    --at;
    return at->first <= start && end <= at->second ? &*at : nullptr;
  };
  // Perfetto keeps nanoseconds and binds a flow event to the slice open at its time: an arrow's end is placed at
  // least 1 ns inside its slice (moved by at most 1 ns from the message's start or end; the middle of a slice
  // shorter than 2 ns).
  auto inside = [](long long t, const std::pair<long long, long long>& slice) {
    constexpr long long kNs = 1000;
    if (slice.second - slice.first < 2 * kNs)
      return (slice.first + slice.second) / 2;
    return std::min(std::max(t, slice.first + kNs), slice.second - kNs);
  };
  std::size_t flow = 0;
  for (const auto& m : phase.transfers) {
    if (!keep_rank(m.from) || !keep_rank(m.to) || m.lane >= dag.comm_streams)
      continue;
    const long long start = std::llround(m.start_s * 1e12), end = std::llround(m.end_s * 1e12);
    const int row = 3 + m.lane;
    const auto* send = holding(m.from, row, start, end);
    const auto* receive = holding(m.to, row, start, end);
    if (!send || !receive) // outside the kept iterations
      continue;
    ++flow;
    sep();
    out << "{\"ph\": \"s\", \"id\": " << flow << ", \"name\": \"gradient\", \"cat\": \"transfer\", \"pid\": " << m.from
        << ", \"tid\": " << row << ", \"ts\": " << microseconds(inside(start, *send)) << ", \"args\": {\"to\": " << m.to
        << ", \"bytes\": " << m.bytes << "}}";
    sep();
    out << "{\"ph\": \"f\", \"bp\": \"e\", \"id\": " << flow
        << ", \"name\": \"gradient\", \"cat\": \"transfer\", \"pid\": " << m.to << ", \"tid\": " << row
        << ", \"ts\": " << microseconds(inside(end, *receive)) << "}";
  }
  // Counter tracks: transfers in flight on the busiest links, on a "links" row after the ranks.
  const std::size_t links_pid = phase.hosts.size();
  bool named = false;
  for (const auto& l : phase.links) {
    if (l.in_flight.empty())
      continue;
    if (!named) {
      sep();
      out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << links_pid
          << ", \"args\": {\"name\": \"links (transfers in flight, busiest first)\"}}";
      named = true;
    }
    for (const auto& [t, n] : l.in_flight) {
      if (!filter.iterations.empty() && !keep_time(t))
        continue;
      sep();
      out << "{\"ph\": \"C\", \"name\": " << quoted(l.name) << ", \"pid\": " << links_pid
          << ", \"ts\": " << microseconds(std::llround(t * 1e12)) << ", \"args\": {\"transfers\": " << n << "}}";
    }
  }
  out << "\n]}\n";
  return out.str();
}

} // namespace ddlsim::report
