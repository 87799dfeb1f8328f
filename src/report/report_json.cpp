// Reading back a run's JSON report (what `ddlsim run --report` writes), for `ddlsim report`.
#include "report/report_json.hpp"

#include "common/error.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <set>
#include <vector>

namespace ddlsim::report {
namespace {

namespace gp = google::protobuf;

// The keys a page reads, per object. ddlsim prints every field (zeros too), so each is in every report it wrote.
const std::vector<std::string> kTopKeys = {"schema_version",
                                           "config",
                                           "model",
                                           "gpu",
                                           "gpus",
                                           "batch_size_per_gpu",
                                           "iteration_time_s",
                                           "throughput_samples_per_s",
                                           "single_gpu_iteration_time_s",
                                           "single_gpu_throughput_samples_per_s",
                                           "speedup",
                                           "scaling_efficiency",
                                           "breakdown",
                                           "gradient_bytes",
                                           "bytes_sent_per_iteration",
                                           "aggregations_per_iteration",
                                           "measured_iterations",
                                           "ddlsim_version",
                                           "simgrid_version",
                                           "layers",
                                           "aggregations",
                                           "links"};
const std::vector<std::string> kConfigKeys = {"platform_file", "workload_file", "algorithm", "schedule", "iterations"};
const std::vector<std::string> kBreakdownKeys = {
    "io_s",           "h2d_s", "forward_s", "backward_s", "update_s", "communication_s", "exposed_communication_s",
    "exposed_input_s"};
const std::vector<std::string> kLayerKeys = {"name", "forward_s", "backward_s", "gradient_bytes"};
const std::vector<std::string> kAggregationKeys = {"layers", "bytes", "start_s", "time_s", "exposed_s"};
const std::vector<std::string> kLinkKeys = {
    "name", "link_class", "bandwidth_bytes_per_s", "bytes_per_iteration", "busy_s_per_iteration", "utilisation"};

[[noreturn]] void fail(const std::string& source, const std::string& where, const std::string& why)
{
  throw InputError(source + ": " + where + ": " + why);
}

/** The object under `where`, with every key of `keys`. */
const gp::Struct& object(const gp::Value& v, const std::string& source, const std::string& where,
                         const std::vector<std::string>& keys)
{
  if (v.kind_case() != gp::Value::kStructValue)
    fail(source, where.empty() ? "top level" : where, "expected an object (not a ddlsim report)");
  const auto& fields = v.struct_value().fields();
  for (const auto& key : keys)
    if (fields.find(key) == fields.end())
      fail(source, (where.empty() ? "" : where + ".") + key,
           "missing (not a ddlsim run report, or one from an older ddlsim)");
  return v.struct_value();
}

/** Every element of the array `key` of `parent` is an object with `keys`. */
void objects(const gp::Struct& parent, const std::string& key, const std::string& source,
             const std::vector<std::string>& keys)
{
  const gp::Value& v = parent.fields().at(key);
  if (v.kind_case() != gp::Value::kListValue)
    fail(source, key, "expected an array");
  for (int i = 0; i < v.list_value().values_size(); ++i)
    object(v.list_value().values(i), source, key + "[" + std::to_string(i) + "]", keys);
}

void check_amount(double value, const std::string& source, const std::string& where)
{
  if (!std::isfinite(value) || value < 0)
    fail(source, where, "expected a finite number >= 0 (got " + format_double(value) + ")");
}

} // namespace

proto::Report parse_report_json(const std::string& raw, const std::string& source)
{
  const std::string text = checked_utf8(raw, source, key_at_column);
  check_json_keys(text, source, "");
  gp::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  gp::Value tree; // the keys as written: protobuf's parser cannot tell a missing field from a zero
  if (const auto status = gp::util::JsonStringToMessage(text, &tree, options); !status.ok()) {
    const std::string message(status.message());
    fail(source, "malformed JSON", message.substr(0, message.find('\n')));
  }
  const gp::Struct& top = object(tree, source, "", kTopKeys);
  object(top.fields().at("config"), source, "config", kConfigKeys);
  object(top.fields().at("breakdown"), source, "breakdown", kBreakdownKeys);
  objects(top, "layers", source, kLayerKeys);
  objects(top, "aggregations", source, kAggregationKeys);
  objects(top, "links", source, kLinkKeys);

  proto::Report r;
  if (const auto status = gp::util::JsonStringToMessage(text, &r, options); !status.ok()) {
    const std::string message(status.message());
    fail(source, "not a ddlsim report", message.substr(0, message.find('\n')));
  }
  if (r.schema_version() != 1)
    fail(source, "schema_version", "expected 1 (got " + std::to_string(r.schema_version()) + ")");
  check_amount(r.iteration_time_s(), source, "iteration_time_s");
  check_amount(r.throughput_samples_per_s(), source, "throughput_samples_per_s");
  check_amount(r.single_gpu_iteration_time_s(), source, "single_gpu_iteration_time_s");
  check_amount(r.single_gpu_throughput_samples_per_s(), source, "single_gpu_throughput_samples_per_s");
  check_amount(r.speedup(), source, "speedup");
  check_amount(r.scaling_efficiency(), source, "scaling_efficiency");
  const auto& b = r.breakdown();
  const std::vector<std::pair<const char*, double>> parts = {{"io_s", b.io_s()},
                                                             {"h2d_s", b.h2d_s()},
                                                             {"forward_s", b.forward_s()},
                                                             {"backward_s", b.backward_s()},
                                                             {"update_s", b.update_s()},
                                                             {"communication_s", b.communication_s()},
                                                             {"exposed_communication_s", b.exposed_communication_s()},
                                                             {"exposed_input_s", b.exposed_input_s()}};
  for (const auto& [name, value] : parts)
    check_amount(value, source, std::string("breakdown.") + name);
  std::set<std::string> layer_names;
  for (int i = 0; i < r.layers_size(); ++i) {
    const std::string at = "layers[" + std::to_string(i) + "].";
    check_amount(r.layers(i).forward_s(), source, at + "forward_s");
    check_amount(r.layers(i).backward_s(), source, at + "backward_s");
    layer_names.insert(r.layers(i).name());
  }
  for (int i = 0; i < r.aggregations_size(); ++i) {
    const auto& a = r.aggregations(i);
    const std::string at = "aggregations[" + std::to_string(i) + "].";
    check_amount(a.start_s(), source, at + "start_s");
    check_amount(a.time_s(), source, at + "time_s");
    check_amount(a.exposed_s(), source, at + "exposed_s");
    if (a.exposed_s() > a.time_s())
      fail(source, at + "exposed_s",
           format_double(a.exposed_s()) + " s is more than its time_s " + format_double(a.time_s()) + " s");
    if (a.layers_size() == 0)
      fail(source, at + "layers", "empty (an aggregation carries the gradient of at least one layer)");
    for (const auto& name : a.layers())
      if (layer_names.count(name) == 0)
        fail(source, at + "layers", "'" + name + "' is not a layer of the report");
  }
  for (int i = 0; i < r.links_size(); ++i) {
    const auto& l = r.links(i);
    const std::string at = "links[" + std::to_string(i) + "].";
    check_amount(l.bandwidth_bytes_per_s(), source, at + "bandwidth_bytes_per_s");
    check_amount(l.busy_s_per_iteration(), source, at + "busy_s_per_iteration");
    check_amount(l.utilisation(), source, at + "utilisation");
  }
  return r;
}

proto::Report load_report_json(const std::string& path)
{
  return parse_report_json(read_file(path), path);
}

} // namespace ddlsim::report
