// Shared Boost.Program_options plumbing: parse strictly, report errors as ConfigError.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief An output path that means standard output (progress stays on stderr). */
inline constexpr const char* kStandardOutput = "-";

/** @brief Width of --help output, and the columns kept for descriptions (so that no word is cut). */
inline constexpr unsigned kHelpColumns = 120;
inline constexpr unsigned kHelpDescriptionColumns = 70;

/** @brief Parses `args` against `desc`: unknown options and stray positional words are errors.
 *  Returns false when --help or --version was given (after printing the help or the version to `out`).
 *  `desc` must declare both. When `parsed` is given it receives the parsed values (to tell given from defaulted). */
bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                   const std::string& usage, std::ostream& out, const std::string& command,
                   boost::program_options::variables_map* parsed = nullptr);

/** @brief "a,b,c" -> {a, b, c}; an empty text gives no host; an empty name is a ConfigError naming `option`. */
std::vector<std::string> parse_host_list(const std::string& text, const std::string& option);

/** @brief Refuses, before any simulation, an output path whose directory is missing or that is a directory. */
void check_output_path(const std::string& path, const std::string& option);

/** @brief A path given to an option, for messages ("--report", "build/r.json"). */
struct NamedPath {
  std::string option;
  std::string path; ///< empty: not given
};

/** @brief Before anything is simulated or written: every output passes check_output_path(); none is the same file
 *  as an input or as another output (same path, or the same device and inode through another path: ConfigError,
 *  exit 2); and a temporary file can be created beside each (else WriteError, exit 4: `--report /proc/r.json`). */
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

} // namespace ddlsim::cli
