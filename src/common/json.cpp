// JSON printing of protobuf messages, one convention for every file ddlsim writes; the duplicate-key scan.
#include "common/json.hpp"

#include "common/error.hpp"

#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <unordered_map>
#include <vector>

namespace ddlsim {

std::string message_to_json(const google::protobuf::Message& message)
{
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok())
    throw Error("cannot print " + message.GetTypeName() + " as JSON: " + std::string(status.message()));
  return out;
}

namespace {

/** Appends code point `cp` (< 0x10000) as UTF-8. */
void append_utf8(std::string& out, unsigned cp)
{
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/** The field a key names for protobuf's JSON parser: snake_case and lowerCamelCase are the same field. */
std::string field_key(const std::string& key)
{
  std::string out;
  bool upper = false;
  for (char c : key) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

struct Frame {
  bool object = false;
  bool expect_key = false;                   ///< object: the next string is a key
  bool counted = false;                      ///< the array under the top-level key being counted
  bool in_value = false;                     ///< array: an element has started since the last ','
  std::unordered_map<std::string, int> keys; ///< object: field key -> line of its first occurrence
};

} // namespace

std::size_t check_json_keys(const std::string& text, const std::string& source, const std::string& counted)
{
  constexpr std::size_t kMaxDepth = 1000;
  std::vector<Frame> stack;
  std::size_t count = 0;
  int line = 1;
  bool next_counted = false; // the value after the top-level key `counted`
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == ':')
      continue;
    const bool after_counted_key = next_counted;
    next_counted = false;
    if (!stack.empty() && !stack.back().object && c != ']' && c != ',' && !stack.back().in_value) {
      stack.back().in_value = true;
      count += stack.back().counted ? 1 : 0;
    }
    if (c == '{' || c == '[') {
      if (stack.size() == kMaxDepth)
        return count;
      Frame frame;
      frame.object = c == '{';
      frame.expect_key = frame.object;
      frame.counted = c == '[' && after_counted_key;
      stack.push_back(std::move(frame));
    } else if (c == '}' || c == ']') {
      if (stack.empty())
        return count;
      stack.pop_back();
    } else if (c == ',') {
      if (stack.empty())
        return count;
      stack.back().expect_key = stack.back().object;
      stack.back().in_value = false;
    } else if (c == '"') {
      std::string value;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (static_cast<unsigned char>(text[i]) < 0x20)
          return count; // a control character in a string is malformed JSON: protobuf's parser says so
        if (text[i] != '\\') {
          value += text[i];
          continue;
        }
        if (++i == text.size())
          return count;
        const char e = text[i];
        if (e == 'u' && i + 4 < text.size()) {
          unsigned cp = 0;
          for (int k = 1; k <= 4; ++k) {
            const char h = text[i + k];
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              return count; // malformed: protobuf's parser says so
            cp = cp * 16 + unsigned(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
          }
          append_utf8(value, cp);
          i += 4;
        } else {
          static const std::string kFrom = "bfnrt", kTo = "\b\f\n\r\t";
          const auto k = kFrom.find(e);
          value += k == std::string::npos ? e : kTo[k];
        }
      }
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        Frame& object = stack.back();
        object.expect_key = false;
        const auto [it, inserted] = object.keys.emplace(field_key(value), line);
        if (!inserted)
          throw InputError(source + ": line " + std::to_string(line) + ": duplicate key '" + value +
                           "' (first on line " + std::to_string(it->second) + ")");
        next_counted = stack.size() == 1 && field_key(value) == field_key(counted);
      }
    } else if (!stack.empty() && stack.back().object && stack.back().expect_key) {
      return count; // a key that is not a string: malformed
    }
  }
  return count;
}

} // namespace ddlsim
