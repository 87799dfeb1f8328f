// Validation of a parsed workload: every rule names the source, the field and the bad value.
#include "workload/workload.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"

#include <cmath>
#include <unordered_set>

namespace ddlsim::workload {
namespace {

/** Upper bounds that keep sums exact and SimGrid's clock meaningful: 11.6 days per task, 1 PiB per layer. */
constexpr double kMaxTimeS = 1e6;
constexpr std::int64_t kMaxGradientBytes = std::int64_t(1) << 50;

void check_time(double value, const std::string& source, const std::string& where)
{
  if (!std::isfinite(value))
    throw InputError(source + ": " + where + " must be a finite number of seconds (got " + format_double(value) + ")");
  if (value < 0)
    throw InputError(source + ": " + where + " must be >= 0 (got " + format_double(value) + ")");
  if (value > kMaxTimeS) // SimGrid's clock cannot add much larger times to small ones
    throw InputError(source + ": " + where + " must be <= 1e6 s (got " + format_double(value) + ")");
}

} // namespace

void validate_workload(const proto::Workload& w, const std::string& source)
{
  if (w.schema_version() != kSchemaVersion)
    throw InputError(source + ": schema_version must be " + std::to_string(kSchemaVersion) + " (got " +
                     std::to_string(w.schema_version()) + ")");
  if (w.model().empty())
    throw InputError(source + ": model: missing model name");
  if (w.batch_size_per_gpu() == 0)
    throw InputError(source + ": batch_size_per_gpu must be > 0 (got 0)");
  if (w.reference_gpu().empty())
    throw InputError(source + ": reference_gpu: missing name of the GPU the times were taken on");
  if (platform::find_gpu(w.reference_gpu()) == nullptr) // times are replayed relative to its catalogue peak
    throw InputError(source + ": reference_gpu '" + w.reference_gpu() +
                     "' is not in the GPU catalogue (known: " + platform::known_gpus() + ")");
  check_time(w.io_s(), source, "io_s");
  check_time(w.h2d_s(), source, "h2d_s");
  check_time(w.update_s(), source, "update_s");
  if (w.layers_size() == 0)
    throw InputError(source + ": layers: a workload needs at least one layer (got 0)");

  std::unordered_set<std::string> names;
  for (int i = 0; i < w.layers_size(); ++i) {
    const auto& layer = w.layers(i);
    const std::string where = "layer " + std::to_string(i);
    if (layer.name().empty())
      throw InputError(source + ": " + where + ": missing name");
    const std::string named = "layer '" + layer.name() + "'";
    if (!names.insert(layer.name()).second)
      throw InputError(source + ": " + named + ": duplicate layer name (layer " + std::to_string(i) + ")");
    check_time(layer.forward_s(), source, named + ": forward_s");
    check_time(layer.backward_s(), source, named + ": backward_s");
    if (layer.gradient_bytes() < 0)
      throw InputError(source + ": " + named + ": gradient_bytes must be >= 0 (got " +
                       std::to_string(layer.gradient_bytes()) + ")");
    if (layer.gradient_bytes() > kMaxGradientBytes)
      throw InputError(source + ": " + named + ": gradient_bytes must be <= 2^50 (1 PiB) (got " +
                       std::to_string(layer.gradient_bytes()) + ")");
  }
  if (w.layers_size() > kMaxLayers)
    throw InputError(source + ": layers: at most " + std::to_string(kMaxLayers) + " layers (got " +
                     std::to_string(w.layers_size()) + ")");
}

} // namespace ddlsim::workload
