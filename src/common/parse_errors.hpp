// The first error protobuf's text-format parser reports, with its position (workload and stack files alike).
#pragma once

#include <google/protobuf/io/tokenizer.h>

#include <string>

namespace ddlsim {

/** @brief Keeps the first parse error with its position; the text-format parser reports lines from 0. */
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override
  {
    if (message_.empty())
      message_ = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& message() const { return message_; }

private:
  std::string message_;
};

} // namespace ddlsim
