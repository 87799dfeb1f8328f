// The --cfg keys and values ddlsim refuses because SimGrid 3.32 crashes, aborts, hangs or silently ignores them.
#include "engine/config_policy.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <exception>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::engine {
namespace {

/** Keys whose value must be one of a list: each value tested with ddlsim (SimGrid aborts on unknown models and
 *  on network/model:Constant and ns-3 with ddlsim's platforms, and ignores an unknown context factory). */
const std::vector<std::pair<std::string, std::vector<std::string>>> kChoices = {
    {"network/model", {"CM02", "LV08", "SMPI", "IB"}},
    {"host/model", {"default", "compound", "ptask_L07"}},
    {"cpu/model", {"Cas01"}},
    {"contexts/factory", {"thread", "ucontext", "raw", "boost"}},
    {"contexts/nthreads", {"1"}},
};

[[noreturn]] void refuse(const std::string& cfg, const std::string& why)
{
  throw ConfigError(field("simgrid_cfg") + " '" + cfg + "': " + why);
}

/** `value` as a number in [low, high], or the refusal of `cfg` saying so (`what`: why the bounds). */
void check_range(const std::string& cfg, const std::string& key, const std::string& value, double low, double high,
                 const std::string& what)
{
  double v = -1;
  std::size_t used = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || !(v >= low && v <= high)) {
    std::ostringstream range;
    range << low << " and " << high;
    refuse(cfg, key + " must be a number between " + range.str() + " (" + what + ")");
  }
}

} // namespace

void check_config_safety(const std::string& cfg)
{
  const auto colon = cfg.find(':');
  const std::string key = cfg.substr(0, colon);
  const std::string value = cfg.substr(colon + 1);
  if (key == "tracing" || key.rfind("tracing/", 0) == 0)
    refuse(cfg, "SimGrid's tracing is not supported (some combinations abort); ddlsim writes its own timeline "
                "with --trace");
  for (const auto& [name, values] : kChoices)
    if (key == name) {
      for (const auto& v : values)
        if (v == value)
          return;
      refuse(cfg, key + " must be one of: " + join(values) +
                      (key == "contexts/nthreads" ? " (ddlsim's actors are not thread-safe)" : ""));
    }
  if (key == "maxmin/precision")
    check_range(cfg, key, value, kMinMaxminPrecision, kMaxMaxminPrecision,
                "below, SimGrid's max-min solver can abort on rounding; above, its rounding decides the shares; "
                "SimGrid's default is 1e-5");
  if (key == "surf/precision")
    check_range(cfg, key, value, kMinSurfPrecision, kMaxSurfPrecision,
                "seconds; 0 or less never ends the run, coarser rounds every simulated time by more than a hop's "
                "latency; SimGrid's default is 1e-9");
  if (key == "contexts/stack-size") {
    const bool digits =
        !value.empty() && value.size() <= 9 && value.find_first_not_of("0123456789") == std::string::npos;
    const long kib = digits ? std::stol(value) : -1;
    if (kib < kMinStackKiB || kib > kMaxStackKiB)
      refuse(cfg, "contexts/stack-size must be an integer number of KiB between " + std::to_string(kMinStackKiB) +
                      " and " + std::to_string(kMaxStackKiB));
  }
}

} // namespace ddlsim::engine
