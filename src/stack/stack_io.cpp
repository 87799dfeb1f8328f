// Stack profiles: read a text-format StackProfile, check every field, convert it (docs/stacks.md).
#include "stack/stack_io.hpp"

#include "common/error.hpp"
#include "common/parse_errors.hpp"
#include "common/strings.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace ddlsim::stack {
namespace {

constexpr unsigned kSchemaVersion = 1;

/** A time or per-byte cost: finite, >= 0 and below one second (per message or per byte). */
void check_cost(const std::string& source, const char* name, double value)
{
  if (!std::isfinite(value) || value < 0 || value >= 1)
    throw InputError(source + ": " + name + " must be a finite number of seconds in [0, 1) (got " +
                     format_double(value) + ")");
}

std::vector<collectives::SizeFactor> factors(const std::string& source, const char* name,
                                             const google::protobuf::RepeatedPtrField<proto::SizeFactor>& in)
{
  std::vector<collectives::SizeFactor> out;
  for (int i = 0; i < in.size(); ++i) {
    const std::string where = source + ": " + name + "[" + std::to_string(i) + "]";
    const double v = in[i].value();
    if (!std::isfinite(v) || v <= 0 || v > 1e6)
      throw InputError(where + ".value must be a finite factor > 0 (got " + format_double(v) + ")");
    if (!out.empty() && in[i].above_bytes() <= out.back().above_bytes)
      throw InputError(where + ".above_bytes must increase (got " + std::to_string(in[i].above_bytes()) + " after " +
                       std::to_string(out.back().above_bytes) + ")");
    out.push_back({in[i].above_bytes(), v});
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::string stacks_dir()
{
  return DDLSIM_STACKS_DIR;
}

std::vector<std::string> shipped_stacks()
{
  std::vector<std::string> names{"ideal"};
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(stacks_dir(), ec)) {
    const std::string file = e.path().filename().string();
    if (ends_with(file, ".textproto") && file != "ideal.textproto")
      names.push_back(file.substr(0, file.size() - 10));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Stack parse_stack(const std::string& text, const std::string& source)
{
  proto::StackProfile p;
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &p))
    throw InputError(source + ": " + (errors.message().empty() ? "malformed text format" : errors.message()));
  if (p.schema_version() != kSchemaVersion)
    throw InputError(source + ": schema_version must be " + std::to_string(kSchemaVersion) + " (got " +
                     std::to_string(p.schema_version()) + ")");
  if (p.name().empty())
    throw InputError(source + ": name is missing");
  Stack s;
  collectives::StackProfile& o = s.profile;
  o.name = p.name();
  o.source = source;
  const std::pair<const char*, double> costs[] = {{"send_overhead_s", p.send_overhead_s()},
                                                  {"recv_overhead_s", p.recv_overhead_s()},
                                                  {"copy_s_per_byte", p.copy_s_per_byte()},
                                                  {"call_overhead_s", p.call_overhead_s()},
                                                  {"call_copy_s_per_byte", p.call_copy_s_per_byte()}};
  for (const auto& [name, value] : costs)
    check_cost(source, name, value);
  o.send_overhead_s = p.send_overhead_s();
  o.recv_overhead_s = p.recv_overhead_s();
  o.copy_s_per_byte = p.copy_s_per_byte();
  o.call_overhead_s = p.call_overhead_s();
  o.call_copy_s_per_byte = p.call_copy_s_per_byte();
  o.latency_factor = factors(source, "latency_factor", p.latency_factor());
  o.bandwidth_factor = factors(source, "bandwidth_factor", p.bandwidth_factor());
  o.rendezvous_above_bytes = p.rendezvous_above_bytes();
  check_cost(source, "pcie_copy_s_per_byte", p.pcie_copy_s_per_byte());
  if (p.pcie_copy_s_per_byte() > p.copy_s_per_byte())
    throw InputError(source + ": pcie_copy_s_per_byte must be <= copy_s_per_byte (got " +
                     format_double(p.pcie_copy_s_per_byte()) + " > " + format_double(p.copy_s_per_byte()) + ")");
  if (p.pcie_copy_s_per_byte() > 0 && !p.host_staged())
    throw InputError(source + ": pcie_copy_s_per_byte must be 0 without host_staged (got " +
                     format_double(p.pcie_copy_s_per_byte()) + ")");
  o.host_staged = p.host_staged();
  o.pcie_copy_s_per_byte = p.pcie_copy_s_per_byte();
  if (p.algorithm_size() > 0) {
    std::vector<std::pair<int, std::string>> rules;
    std::string text;
    for (const auto& r : p.algorithm()) {
      if (r.max_ranks() > (1u << 24))
        throw InputError(source + ": algorithm[" + std::to_string(rules.size()) +
                         "].max_ranks must be <= 16777216 (got " + std::to_string(r.max_ranks()) + ")");
      rules.emplace_back(static_cast<int>(r.max_ranks()), r.algorithm());
      text += (text.empty() ? "" : "; ") +
              (r.max_ranks() == 0 ? std::string() : "P<=" + std::to_string(r.max_ranks()) + ": ") + r.algorithm();
    }
    try {
      s.algorithm = collectives::rank_rules(rules, text);
    } catch (const ConfigError& e) {
      throw InputError(source + ": " + e.what());
    }
  }
  return s;
}

Stack load_stack(const std::string& name_or_file)
{
  const bool is_file = name_or_file.find('/') != std::string::npos || ends_with(name_or_file, ".textproto");
  if (!is_file && name_or_file == "ideal")
    return Stack{};
  const std::string path = is_file ? name_or_file : stacks_dir() + "/" + name_or_file + ".textproto";
  if (!is_file && !readable_file(path))
    throw InputError("unknown stack '" + name_or_file + "' (shipped: " + join(shipped_stacks()) +
                     "; or a .textproto file)");
  return parse_stack(read_file(path), is_file ? name_or_file : "stacks/" + name_or_file + ".textproto");
}

} // namespace ddlsim::stack
