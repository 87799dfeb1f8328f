// `--framework NAME`: the choices a framework makes, as options applied before the user's own (docs/frameworks.md).
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <utility>
#include <vector>

namespace ddlsim::cli {

/** @brief One preset: a framework's choices written as `ddlsim run` options (name without "--", value). */
struct FrameworkPreset {
  const char* name;
  const char* summary; ///< one line for --help
  std::vector<std::pair<std::string, std::string>> options;
};

/** @brief The preset table, one row per framework (sources in docs/frameworks.md). */
const std::vector<FrameworkPreset>& framework_presets();

/** @brief "caffe-mpi, cntk, mxnet, tensorflow, horovod, pytorch-ddp". */
std::string framework_names();

/** @brief The row named `name`; ConfigError (one line, exit 2) for an unknown name. */
const FrameworkPreset& framework_preset(const std::string& name);

/** @brief The preset's options as command-line words, without those the user gave explicitly (`given`: the
 *  parse of the user's words) and without those the resulting run would not read: the server options when the
 *  algorithm (the user's or the preset's) uses no parameter server, --inter-algorithm without hier, --optimizer
 *  without --ps-update server, the fusion and bucket sizes with another schedule. Parsing these words followed by
 *  the user's gives the preset with every explicit choice overriding it. */
std::vector<std::string> preset_words(const FrameworkPreset& preset,
                                      const boost::program_options::variables_map& given);

} // namespace ddlsim::cli
