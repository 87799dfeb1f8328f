// JSON printing of protobuf messages, one convention for every file ddlsim writes; the duplicate-key scan.
#include "common/json.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <cmath>
#include <cstdio>

#include <cctype>
#include <unordered_map>
#include <vector>

namespace ddlsim {
namespace {

namespace pb = google::protobuf;

std::string quoted(const std::string& s)
{
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/** A 64-bit integer as a JSON number when a double holds it exactly (|v| <= 2^53), else as a string (what JSON
 *  readers that parse numbers as doubles need to keep every digit). */
template <class T>
std::string integer(T v)
{
  constexpr double kExact = 9007199254740992.0; // 2^53
  const std::string digits = std::to_string(v);
  return std::fabs(double(v)) <= kExact ? digits : quoted(digits);
}

std::string real(double v)
{
  if (std::isnan(v))
    return "\"NaN\"";
  if (std::isinf(v))
    return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return format_double(v);
}

class Printer {
public:
  std::string print(const pb::Message& m)
  {
    message(m, 0);
    out_ += "\n";
    return out_;
  }

private:
  void indent(int depth) { out_.append(static_cast<std::size_t>(depth), ' '); }

  void message(const pb::Message& m, int depth)
  {
    const pb::Descriptor* d = m.GetDescriptor();
    out_ += "{";
    for (int i = 0; i < d->field_count(); ++i) {
      out_ += i == 0 ? "\n" : ",\n";
      const pb::FieldDescriptor* f = d->field(i);
      indent(depth + 1);
      out_ += quoted(f->name()) + ": ";
      if (f->is_repeated())
        repeated(m, f, depth + 1);
      else
        value(m, f, -1, depth + 1);
    }
    out_ += "\n";
    indent(depth);
    out_ += "}";
  }

  void repeated(const pb::Message& m, const pb::FieldDescriptor* f, int depth)
  {
    const int n = m.GetReflection()->FieldSize(m, f);
    if (n == 0) {
      out_ += "[]";
      return;
    }
    out_ += "[";
    for (int k = 0; k < n; ++k) {
      out_ += k == 0 ? "\n" : ",\n";
      indent(depth + 1);
      value(m, f, k, depth + 1);
    }
    out_ += "\n";
    indent(depth);
    out_ += "]";
  }

  /** Field `f` of `m`, element `k` of a repeated field (k >= 0) or the singular value (k < 0). */
  void value(const pb::Message& m, const pb::FieldDescriptor* f, int k, int depth)
  {
    const pb::Reflection* r = m.GetReflection();
    const bool rep = k >= 0;
    switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      out_ += std::to_string(rep ? r->GetRepeatedInt32(m, f, k) : r->GetInt32(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      out_ += std::to_string(rep ? r->GetRepeatedUInt32(m, f, k) : r->GetUInt32(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      out_ += integer(rep ? r->GetRepeatedInt64(m, f, k) : r->GetInt64(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      out_ += integer(rep ? r->GetRepeatedUInt64(m, f, k) : r->GetUInt64(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      out_ += real(rep ? r->GetRepeatedDouble(m, f, k) : r->GetDouble(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      out_ += real(rep ? r->GetRepeatedFloat(m, f, k) : r->GetFloat(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      out_ += (rep ? r->GetRepeatedBool(m, f, k) : r->GetBool(m, f)) ? "true" : "false";
      break;
    case pb::FieldDescriptor::CPPTYPE_ENUM:
      out_ += quoted((rep ? r->GetRepeatedEnum(m, f, k) : r->GetEnum(m, f))->name());
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      out_ += quoted(rep ? r->GetRepeatedString(m, f, k) : r->GetString(m, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      message(rep ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f), depth);
      break;
    }
  }

  std::string out_;
};

} // namespace

std::string message_to_json(const google::protobuf::Message& message)
{
  return Printer().print(message);
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
