// Options and helpers that several subcommands share: rank selection, SimGrid settings, progress lines.
#pragma once

#include <boost/program_options.hpp>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief --ranks N and --hosts H0,H1,... bound to `ranks` and `hosts`. */
void add_rank_options(boost::program_options::options_description& d, int& ranks, std::string& hosts);

/** @brief The "SimGrid" group: repeatable --cfg KEY:VALUE bound to `cfg`. */
boost::program_options::options_description simgrid_options(std::vector<std::string>& cfg);

/** @brief --ranks as the unsigned count the engine takes; throws ConfigError when negative. */
unsigned checked_ranks(int ranks);

/** @brief Progress lines on stderr, each ending with the wall time since construction; silent when quiet. */
class ProgressLines {
public:
  ProgressLines(std::ostream& err, bool quiet)
      : err_(err)
      , quiet_(quiet)
  {
  }
  bool quiet() const { return quiet_; }
  /** Seconds of wall time since construction. */
  double wall_s() const;
  /** Prints "ddlsim: WHAT (wall X s)". */
  void print(const std::string& what) const;
  /** Prints like print(), at most once every `every_s` seconds of wall time (for progress inside long steps). */
  void print_every(const std::string& what, double every_s);

private:
  std::ostream& err_;
  bool quiet_;
  double last_s_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace ddlsim::cli
