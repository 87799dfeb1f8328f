// Error types of ddlsim: library code throws these, only main() turns them into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace ddlsim {

/** @brief `message` on one line: a line break or another control character (from a value the message quotes, such
 *  as a word of an input file) is written as an escape, `\n` or `\xNN`; field() marks are kept. */
inline std::string one_line(const std::string& message)
{
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (char c : message) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if ((b < 0x20 && c != '\t' && c != '\x1e' && c != '\x1f') || b == 0x7F)
      out += std::string("\\x") + kHex[b >> 4] + kHex[b & 15];
    else
      out += c;
  }
  return out;
}

/** @brief Base of every error ddlsim reports to a user. The message is complete and one line (one_line()). */
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message)
      : std::runtime_error(one_line(message))
  {
  }
};

/** @brief Bad input file or value in it: the message names the file, the field and the bad value. */
class InputError : public Error {
public:
  using Error::Error;
};

/** @brief Marks `name`, a field of a library input struct ("ranks", "ps_servers"), inside an error message. The
 *  library's message shows the field name; the command line shows the flag that sets it (cli/flags.hpp). */
std::string field(const std::string& name);

/** @brief Bad option or inconsistent combination of inputs. The message may name fields with field(): what()
 *  shows them as field names, template() keeps the marks for a front end to render its own way. */
class ConfigError : public Error {
public:
  explicit ConfigError(const std::string& message);
  /** The message with field() marks intact. */
  const std::string& message_template() const { return template_; }

private:
  std::string template_;
};

/** @brief An output could not be written (disk full, permission, vanished directory): its own exit code. */
class WriteError : public Error {
public:
  using Error::Error;
};

/** @brief Replaces every field() mark of `message` by `render(name)`. */
template <class Render>
std::string render_fields(const std::string& message, Render render)
{
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const auto open = message.find('\x1e', pos);
    const auto close = open == std::string::npos ? open : message.find('\x1f', open);
    if (close == std::string::npos) {
      out += message.substr(pos);
      return out;
    }
    out += message.substr(pos, open - pos);
    out += render(message.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
}

inline std::string field(const std::string& name)
{
  return "\x1e" + name + "\x1f";
}

inline ConfigError::ConfigError(const std::string& message)
    : Error(render_fields(message, [](const std::string& name) { return name; }))
    , template_(one_line(message))
{
}

} // namespace ddlsim
