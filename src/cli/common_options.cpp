// Options and helpers that several subcommands share: rank selection, SimGrid settings, progress lines.
#include "cli/common_options.hpp"

#include "cli/options.hpp"
#include "common/error.hpp"
#include "engine/simgrid_config.hpp"

#include <cstdio>

namespace po = boost::program_options;

namespace ddlsim::cli {

void add_rank_options(po::options_description& d, int& ranks, std::string& hosts)
{
  auto add_d = d.add_options();
  add_d("ranks", po::value(&ranks)->default_value(ranks)->value_name("N"),
        "number of GPUs; 0 = every GPU host of the platform");
  add_d("hosts", po::value(&hosts)->value_name("H0,H1,..."),
        "explicit host of rank 0, 1, ... (GPU hosts, comma separated)");
}

po::options_description simgrid_options(std::vector<std::string>& cfg)
{
  std::string defaults;
  for (const auto& c : engine::default_simgrid_config())
    defaults += (defaults.empty() ? "" : ", ") + c;
  po::options_description d("SimGrid", kHelpColumns, kHelpDescriptionColumns);
  auto add_d = d.add_options();
  add_d("cfg", po::value(&cfg)->composing()->value_name("KEY:VALUE"),
        ("SimGrid configuration, applied after ddlsim's exact alpha-beta defaults (" + defaults + "); repeatable")
            .c_str());
  return d;
}

unsigned checked_ranks(int ranks)
{
  if (ranks < 0)
    throw ConfigError("--ranks must be >= 0 (got " + std::to_string(ranks) + ")");
  return static_cast<unsigned>(ranks);
}

double ProgressLines::wall_s() const
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLines::print_every(const std::string& what, double every_s)
{
  const double now = wall_s();
  if (now - last_s_ < every_s)
    return;
  last_s_ = now;
  print(what);
}

void ProgressLines::print(const std::string& what) const
{
  if (quiet_)
    return;
  char wall[64];
  std::snprintf(wall, sizeof wall, " (wall %.2f s)\n", wall_s());
  err_ << "ddlsim: " << what << wall << std::flush;
}

} // namespace ddlsim::cli
