// Importers of per-layer CSV and ASTRA-sim 1.0 data-parallel workload files; every rule names file and line.
#include "workload/importers.hpp"

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "workload/workload.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace ddlsim::workload {

CsvHeader parse_csv_header(const std::string& text, const std::string& what)
{
  static const NameTable<CsvHeader> names = {{CsvHeader::Auto, "auto"}, {CsvHeader::Yes, "yes"}, {CsvHeader::No, "no"}};
  return parse_name(names, text, what);
}

namespace {

std::string trim(const std::string& s)
{
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  const auto end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

std::string lower(std::string s)
{
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/** Whole string as a finite double, or false. */
bool parse_double(const std::string& text, double& value)
{
  // Plain decimal numbers only: strtod would also take hexadecimal ("0x10") and leading blanks.
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno == 0 && std::isfinite(value);
}

/** Whole string as a non-negative integer that fits in int64 (digits only), or false. */
bool parse_count(const std::string& text, std::int64_t& value)
{
  if (text.empty() || text.size() > 18)
    return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  value = std::stoll(text);
  return true;
}

/** Whole string as an integer, optionally negative (ASTRA-sim's reserved field), or false. */
bool parse_int(const std::string& text, std::int64_t& value)
{
  std::int64_t magnitude = 0;
  if (!text.empty() && text[0] == '-') {
    if (!parse_count(text.substr(1), magnitude))
      return false;
    value = -magnitude;
    return true;
  }
  return parse_count(text, value);
}

/** Remembers layer names and the line each was first seen on. */
class NameTable {
public:
  void add(const std::string& name, const std::string& where, int line)
  {
    const auto [it, inserted] = lines_.emplace(name, line);
    if (!inserted)
      throw InputError(where + ": duplicate layer name '" + name + "' (first on line " + std::to_string(it->second) +
                       ")");
  }

private:
  std::unordered_map<std::string, int> lines_;
};

/** The CSV column that holds byte `column` of `line`, for invalid UTF-8 messages. */
std::string csv_field_at(const std::string& line, std::size_t column)
{
  static const char* const kColumns[] = {"layer", "forward_ms", "backward_ms", "gradient_bytes"};
  const auto first = line.find_first_not_of(" \t\r");
  if (first != std::string::npos && first <= column && line[first] == '#')
    return "comment";
  std::size_t commas = 0;
  for (std::size_t i = 0; i < column && i < line.size(); ++i)
    commas += line[i] == ',' ? 1 : 0;
  return commas < 4 ? kColumns[commas] : "field " + std::to_string(commas + 1);
}

/** The ASTRA-sim field (by word position) that holds byte `column` of `line`, for invalid UTF-8 messages. */
std::string astra_field_at(const std::string& line, std::size_t column)
{
  static const char* const kFields[] = {"layer name",
                                        "reserved field",
                                        "forward cycles",
                                        "forward communication type",
                                        "forward communication size",
                                        "input-gradient cycles",
                                        "input-gradient communication type",
                                        "input-gradient communication size",
                                        "weight-gradient cycles",
                                        "weight-gradient communication type",
                                        "weight-gradient communication size",
                                        "update delay"};
  std::size_t words = 0;
  for (std::size_t i = 0; i <= column && i < line.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(line[i])) &&
        (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1]))))
      ++words;
  return words >= 1 && words <= 12 ? kFields[words - 1] : "field " + std::to_string(words);
}

} // namespace

proto::Workload workload_from_metadata(const ImportMetadata& meta)
{
  proto::Workload w;
  w.set_schema_version(kSchemaVersion);
  w.set_model(meta.model);
  w.set_batch_size_per_gpu(meta.batch);
  w.set_reference_gpu(meta.reference_gpu);
  w.set_io_s(meta.io_s);
  w.set_h2d_s(meta.h2d_s);
  w.set_update_s(meta.update_s);
  return w;
}

proto::Workload import_csv(const std::string& file_text, const std::string& source, CsvHeader header,
                           const ImportMetadata& meta)
{
  // a spreadsheet's byte-order mark is dropped; invalid UTF-8 is refused naming the column
  const std::string text = checked_utf8(file_text, source, csv_field_at);
  static const char* const kHeader = "layer,forward_ms,backward_ms,gradient_bytes";
  proto::Workload w = workload_from_metadata(meta);
  NameTable names;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  bool first = true;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#')
      continue;
    const std::string where = source + ":" + std::to_string(line_no);
    auto fields = split(line, ',');
    for (auto& f : fields)
      f = trim(f);
    const bool is_header = fields.size() == 4 && lower(fields[0]) == "layer" && lower(fields[1]) == "forward_ms" &&
                           lower(fields[2]) == "backward_ms" && lower(fields[3]) == "gradient_bytes";
    if (first) {
      first = false;
      if (header == CsvHeader::Yes && !is_header)
        throw InputError(where + ": expected the header '" + kHeader + "' (got '" + line + "'; use --csv-header no " +
                         "for a file without one)");
      if (header != CsvHeader::No && is_header)
        continue;
    }
    if (fields.size() != 4)
      throw InputError(where + ": expected 4 comma-separated fields " + kHeader + " (got " +
                       std::to_string(fields.size()) + ")");
    if (fields[0].empty())
      throw InputError(where + ": layer: empty name");
    double fwd_ms = 0, bwd_ms = 0;
    if (!parse_double(fields[1], fwd_ms))
      throw InputError(where + ": forward_ms: not a finite number ('" + fields[1] + "')");
    if (!parse_double(fields[2], bwd_ms))
      throw InputError(where + ": backward_ms: not a finite number ('" + fields[2] + "')");
    if (fwd_ms < 0)
      throw InputError(where + ": forward_ms must be >= 0 (got " + fields[1] + ")");
    if (bwd_ms < 0)
      throw InputError(where + ": backward_ms must be >= 0 (got " + fields[2] + ")");
    std::int64_t bytes = 0;
    if (!parse_count(fields[3], bytes))
      throw InputError(where + ": gradient_bytes: not a non-negative integer ('" + fields[3] + "')");
    names.add(fields[0], where, line_no);
    auto* layer = w.add_layers();
    layer->set_name(fields[0]);
    // "-.0" passes the >= 0 checks; stored as +0 so that text -> JSON -> text writes "0" throughout
    layer->set_forward_s(fwd_ms == 0 ? 0.0 : fwd_ms / 1e3);
    layer->set_backward_s(bwd_ms == 0 ? 0.0 : bwd_ms / 1e3);
    layer->set_gradient_bytes(bytes);
  }
  if (w.layers_size() == 0)
    throw InputError(source + ": no layer lines (expected " + kHeader + " per line)");
  validate_workload(w, source);
  return w;
}

namespace {

/** One ASTRA-sim 1.0 layer line, checked. */
struct AstraLayer {
  std::string name;
  std::int64_t forward_cycles = 0;
  std::int64_t backward_cycles = 0; ///< input-gradient + weight-gradient cycles
  std::int64_t gradient_bytes = 0;  ///< the weight-gradient ALLREDUCE size (0 with NONE)
  std::int64_t update_cycles = 0;
};

std::vector<std::string> words_of(const std::string& line)
{
  std::istringstream words(line);
  std::vector<std::string> t;
  for (std::string word; words >> word;)
    t.push_back(word);
  return t;
}

/** Line 1: the parallelism, which must be DATA. */
void check_astra_parallelism(const std::vector<std::string>& t, const std::string& raw, const std::string& where)
{
  if (t[0] != "DATA")
    throw InputError(where +
                     ": only data-parallel ASTRA-sim workloads are supported: the first line must be "
                     "DATA (got '" +
                     trim(raw) + "')");
  if (t.size() != 1)
    throw InputError(where + ": unexpected text after DATA ('" + trim(raw) + "')");
}

/** Line 2: the number of layers, > 0. */
std::int64_t parse_astra_layer_count(const std::vector<std::string>& t, const std::string& raw,
                                     const std::string& where)
{
  std::int64_t declared = 0;
  if (t.size() != 1 || !parse_count(t[0], declared) || declared == 0)
    throw InputError(where + ": expected the number of layers, an integer > 0 (got '" + trim(raw) + "')");
  return declared;
}

/** A layer line: 12 fields, cycles and sizes non-negative integers, data-parallel communication only. */
AstraLayer parse_astra_layer(const std::vector<std::string>& t, const std::string& where)
{
  if (t.size() != 12)
    throw InputError(where +
                     ": expected 12 fields (name, reserved, forward cycles/type/bytes, input-gradient "
                     "cycles/type/bytes, weight-gradient cycles/type/bytes, update cycles), got " +
                     std::to_string(t.size()));
  std::int64_t reserved = 0;
  if (!parse_int(t[1], reserved))
    throw InputError(where + ": reserved field: not an integer ('" + t[1] + "')");
  const char* const field_names[] = {"forward cycles", "input-gradient cycles", "weight-gradient cycles"};
  std::int64_t cycles[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k)
    if (!parse_count(t[2 + 3 * k], cycles[k]))
      throw InputError(where + ": " + field_names[k] + ": not a non-negative integer ('" + t[2 + 3 * k] + "')");
  const char* const comm_names[] = {"forward", "input-gradient", "weight-gradient"};
  std::int64_t sizes[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    const std::string& type = t[3 + 3 * k];
    if (!parse_count(t[4 + 3 * k], sizes[k]))
      throw InputError(where + ": " + comm_names[k] + " communication size: not a non-negative integer ('" +
                       t[4 + 3 * k] + "')");
    const bool allowed = type == "NONE" || (k == 2 && type == "ALLREDUCE");
    if (!allowed)
      throw InputError(where + ": " + comm_names[k] + " communication " + type +
                       " is not data-parallel (allowed: " + (k == 2 ? "ALLREDUCE, NONE" : "NONE") + ")");
    if (type == "NONE" && sizes[k] != 0)
      throw InputError(where + ": " + comm_names[k] + " communication NONE with size " + t[4 + 3 * k] + " (must be 0)");
  }
  AstraLayer layer;
  if (!parse_count(t[11], layer.update_cycles))
    throw InputError(where + ": update delay: not a non-negative integer ('" + t[11] + "')");
  layer.name = t[0];
  layer.forward_cycles = cycles[0];
  layer.backward_cycles = cycles[1] + cycles[2];
  layer.gradient_bytes = sizes[2];
  return layer;
}

} // namespace

proto::Workload import_astra(const std::string& file_text, const std::string& source, double cycles_per_s,
                             const ImportMetadata& meta)
{
  const std::string text = checked_utf8(file_text, source, astra_field_at);
  if (!std::isfinite(cycles_per_s) || !(cycles_per_s > 0))
    throw ConfigError(field("frequency_hz") + " must be a finite number > 0 (got " + format_double(cycles_per_s) + ")");
  proto::Workload w = workload_from_metadata(meta);
  NameTable names;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  std::int64_t declared = -1;
  int declared_line = 0;
  bool have_type = false;
  double update_cycles = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::vector<std::string> t = words_of(raw);
    if (t.empty())
      continue;
    const std::string where = source + ":" + std::to_string(line_no);
    if (!have_type) {
      check_astra_parallelism(t, raw, where);
      have_type = true;
      continue;
    }
    if (declared < 0) {
      declared = parse_astra_layer_count(t, raw, where);
      declared_line = line_no;
      continue;
    }
    if (w.layers_size() == declared)
      throw InputError(where + ": more layer lines than the " + std::to_string(declared) + " declared on line " +
                       std::to_string(declared_line));
    const AstraLayer l = parse_astra_layer(t, where);
    names.add(l.name, where, line_no);
    auto* layer = w.add_layers();
    layer->set_name(l.name);
    layer->set_forward_s(double(l.forward_cycles) / cycles_per_s);
    layer->set_backward_s(double(l.backward_cycles) / cycles_per_s);
    layer->set_gradient_bytes(l.gradient_bytes);
    update_cycles += double(l.update_cycles);
  }
  if (!have_type)
    throw InputError(source + ": empty file (expected DATA, the number of layers, then one line per layer)");
  if (declared < 0)
    throw InputError(source + ": missing the number of layers after DATA");
  if (w.layers_size() != declared)
    throw InputError(source + ": declares " + std::to_string(declared) + " layers on line " +
                     std::to_string(declared_line) + " but has " + std::to_string(w.layers_size()));
  w.set_update_s(meta.update_s + update_cycles / cycles_per_s);
  validate_workload(w, source);
  return w;
}

} // namespace ddlsim::workload
