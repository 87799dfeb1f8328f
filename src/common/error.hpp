// Error types of ddlsim: library code throws these, only main() turns them into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace ddlsim {

/** @brief Base of every error ddlsim reports to a user. The message is complete and one line. */
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/** @brief Bad input file or value in it: the message names the file, the field and the bad value. */
class InputError : public Error {
public:
  using Error::Error;
};

/** @brief Bad command-line option or inconsistent combination of inputs. */
class ConfigError : public Error {
public:
  using Error::Error;
};

} // namespace ddlsim
