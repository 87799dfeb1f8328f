// Chrome trace (chrome://tracing, Perfetto) of a simulation phase: one row per GPU stream.
#include "report/trace.hpp"

#include "common/error.hpp"

#include <cstdio>
#include <fstream>
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

} // namespace

std::string chrome_trace(const dag::IterationDag& dag, const dag::PhaseResult& phase)
{
  std::ostringstream out;
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto sep = [&] {
    out << (first ? "  " : ",\n  ");
    first = false;
  };
  for (std::size_t r = 0; r < phase.hosts.size(); ++r) {
    sep();
    out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << r << ", \"args\": {\"name\": "
        << quoted("rank " + std::to_string(r) + " (" + phase.hosts[r] + ", " + phase.gpus[r] + ")") << "}}";
    for (int tid = 0; tid < 2; ++tid) {
      sep();
      out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << r << ", \"tid\": " << tid
          << ", \"args\": {\"name\": \"" << (tid == 0 ? "compute" : "communication") << "\"}}";
    }
  }
  char buf[96];
  for (const auto& rec : phase.records) {
    const dag::Task& t = dag.tasks[rec.task];
    sep();
    std::snprintf(buf, sizeof buf, "\"ts\": %.6f, \"dur\": %.6f", rec.start_s * 1e6, (rec.end_s - rec.start_s) * 1e6);
    out << "{\"ph\": \"X\", \"name\": " << quoted(t.name) << ", \"cat\": \"" << dag::to_string(t.kind)
        << "\", \"pid\": " << rec.rank << ", \"tid\": " << (t.stream == dag::Stream::Compute ? 0 : 1) << ", " << buf
        << ", \"args\": {\"iteration\": " << rec.iteration + 1;
    if (t.kind == dag::TaskKind::Aggregation)
      out << ", \"bytes\": " << t.bytes;
    out << "}}";
  }
  out << "\n]}\n";
  return out.str();
}

} // namespace ddlsim::report
