// Reading and writing workload files in protobuf text format and JSON.
#include "workload/workload.hpp"

#include "common/error.hpp"
#include "common/json.hpp"
#include "common/parse_errors.hpp"
#include "common/strings.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

namespace ddlsim::workload {
namespace {

enum class Format { Text, Json };

bool ends_with(const std::string& s, const std::string& suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Format format_of(const std::string& path)
{
  if (ends_with(path, ".textproto") || ends_with(path, ".pbtxt") || ends_with(path, ".txtpb"))
    return Format::Text;
  if (ends_with(path, ".json"))
    return Format::Json;
  throw InputError(path + ": unknown workload format (expected a .textproto, .pbtxt, .txtpb or .json file)");
}

/** Messages opened at the top level of protobuf text format (`layers { ... }`, `layers < ... >`, or each element of
 *  `layers: [{...}, {...}]`), outside strings and comments: the number of layers, as Workload has no other message
 *  field. A linear scan, so that a bound is checked before protobuf's parser spends seconds on the text. */
std::size_t top_level_messages(const std::string& text)
{
  std::size_t count = 0;
  long depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i)
        i += text[i] == '\\' ? 1 : 0;
    } else if (c == '{' || c == '<') {
      count += depth == 0 ? 1 : 0;
      ++depth;
    } else if ((c == '}' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return count;
}

} // namespace

proto::Workload parse_workload(const std::string& raw, const std::string& format_path)
{
  // names end up in JSON traces: valid UTF-8 only, refused naming the key that holds the bad byte
  const std::string text = checked_utf8(raw, format_path, key_at_column);
  const Format format = format_of(format_path);
  const std::size_t layers =
      format == Format::Text ? top_level_messages(text) : check_json_keys(text, format_path, "layers");
  if (layers > std::size_t(kMaxLayers)) // refused before a parse of seconds
    throw InputError(format_path + ": layers: at most " + std::to_string(kMaxLayers) + " layers (got " +
                     std::to_string(layers) + ")");
  proto::Workload w;
  if (format == Format::Text) {
    google::protobuf::TextFormat::Parser parser;
    FirstErrorCollector errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(text, &w))
      throw InputError(format_path + ": " + (errors.message().empty() ? "malformed text format" : errors.message()));
  } else {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(text, &w, options);
    if (!status.ok()) {
      const std::string message(status.message()); // protobuf may add lines: keep the first
      throw InputError(format_path + ": malformed JSON workload: " + message.substr(0, message.find('\n')));
    }
  }
  validate_workload(w, format_path);
  return w;
}

proto::Workload load_workload(const std::string& path)
{
  format_of(path); // reject an unknown extension before touching the file
  return parse_workload(read_file(path), path);
}

std::string to_textproto(const proto::Workload& w)
{
  std::string out;
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(true);
  if (!printer.PrintToString(w, &out))
    throw Error("cannot print workload as text format");
  return out;
}

std::string to_json(const proto::Workload& w)
{
  return message_to_json(w);
}

std::uint64_t total_gradient_bytes(const proto::Workload& w)
{
  std::uint64_t sum = 0;
  for (const auto& layer : w.layers())
    sum += static_cast<std::uint64_t>(layer.gradient_bytes());
  return sum;
}

} // namespace ddlsim::workload
