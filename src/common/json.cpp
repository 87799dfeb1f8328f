// JSON printing of protobuf messages, one convention for every file ddlsim writes.
#include "common/json.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <cmath>
#include <cstdio>

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

} // namespace ddlsim
