// libFuzzer harness helpers: run a parser on the input; ddlsim's own errors are the expected outcome of bad input,
// anything else (a crash, a sanitizer report, another exception) is a finding.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ddlsim::fuzz {

/** Runs `parse` on the input as a string; an ddlsim::Error (one-line message) is a refusal, not a finding. */
template <class Parse>
int run(const std::uint8_t* data, std::size_t size, Parse parse)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    parse(text);
  } catch (const ddlsim::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) { // the README promises one line
      std::fprintf(stderr, "ddlsim fuzz: not a one-line message: [%s]\n", message.c_str());
      __builtin_trap();
    }
  }
  return 0;
}

} // namespace ddlsim::fuzz
