// `ddlsim sweep`: the grid of runs, parsed from the command line (lists of option values, pure, no process).
#include "cli/sweep_grid.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

#include <algorithm>

namespace ddlsim::cli {
namespace {

/** Options whose one value holds commas: only '|' (or a repeated option) lists alternatives there. */
bool comma_is_part_of_value(const std::string& name)
{
  return name == "cluster" || name == "hosts" || name == "ps-hosts" || name == "algorithm";
}

bool is_generation_key(const std::string& name)
{
  const auto& keys = generation_keys();
  return std::find(keys.begin(), keys.end(), name) != keys.end();
}

/** "a|b,c" -> {a, b, c} (commas split unless `keep_commas`); an empty alternative is a ConfigError. */
std::vector<std::string> alternatives(const std::string& option, const std::string& value, bool keep_commas)
{
  std::vector<std::string> out;
  for (const auto& part : split(value, '|')) {
    const auto pieces = keep_commas ? std::vector<std::string>{part} : split(part, ',');
    for (const auto& v : pieces) {
      if (v.empty())
        throw ConfigError("sweep: --" + option + " '" + value + "': empty value in the list");
      out.push_back(v);
    }
  }
  return out;
}

void add_values(std::vector<SweepAxis>& axes, const std::string& key, const std::vector<std::string>& values)
{
  auto it = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == key; });
  if (it == axes.end())
    it = axes.insert(axes.end(), SweepAxis{key, {}});
  for (const auto& v : values) {
    if (std::find(it->values.begin(), it->values.end(), v) != it->values.end())
      throw ConfigError("sweep: " + key + " value '" + v + "' is listed twice");
    it->values.push_back(v);
  }
}

/** --cluster "nodes=4|8,inter=10gbe|ib100": one axis per key, named cluster.KEY, values split on '|'. */
std::vector<SweepAxis> cluster_axes(const std::string& value)
{
  std::vector<SweepAxis> axes;
  for (const auto& item : split(value, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("sweep: --cluster '" + value + "': expected KEY=VALUE items (got '" + item + "')");
    const std::string key = "cluster." + item.substr(0, eq);
    if (std::any_of(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == key; }))
      throw ConfigError("sweep: --cluster '" + value + "': key '" + item.substr(0, eq) + "' given twice");
    add_values(axes, key, alternatives("cluster", item.substr(eq + 1), true));
  }
  return axes;
}

std::size_t parse_count(const std::string& option, const std::string& text, std::size_t max)
{
  const auto n = parse_positive_int(text, "--" + option);
  if (n > max)
    throw ConfigError("--" + option + " must be at most " + std::to_string(max) + " (got " + text + ")");
  return static_cast<std::size_t>(n);
}

} // namespace

SweepSpec parse_sweep_args(const std::vector<std::string>& args)
{
  SweepSpec spec;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "-q" || word == "--quiet") {
      spec.quiet = true;
      continue;
    }
    if (word.rfind("--", 0) != 0 || word.size() == 2)
      throw ConfigError("sweep: unexpected word '" + word +
                        "' (every value belongs to an option; see 'ddlsim sweep "
                        "--help')");
    std::string name = word.substr(2);
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 && args[i + 1] != "-q") {
      value = args[++i];
      has_value = true;
    }
    const auto needs_value = [&]() {
      if (!has_value)
        throw ConfigError("sweep: --" + name + " needs a value");
    };
    const auto no_value = [&]() {
      if (has_value)
        throw ConfigError("sweep: --" + name + " takes no value (got '" + value + "')");
    };
    if (name == "collective") {
      no_value();
      spec.collective = true;
    } else if (name == "submit") {
      no_value();
      spec.submit = true;
    } else if (name == "csv") {
      needs_value();
      spec.csv = value;
    } else if (name == "jobs") {
      needs_value();
      spec.jobs = static_cast<int>(parse_count(name, value, 256));
    } else if (name == "slurm") {
      needs_value();
      spec.slurm_dir = value;
    } else if (name == "chunk") {
      needs_value();
      spec.chunk = parse_count(name, value, kMaxSweepPoints);
    } else if (name == "task") {
      needs_value();
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 9)
        throw ConfigError("--task must be an array task index >= 0 (got '" + value + "')");
      spec.task = std::stol(value);
    } else if (name == "collect") {
      needs_value();
      spec.collect_dir = value;
    } else if (name == "report" || name == "trace" || name == "dump-config" || name == "help" || name == "version") {
      throw ConfigError("sweep: --" + name +
                        " is not a sweep option (each point writes its own report; see 'ddlsim "
                        "sweep --help')");
    } else if (!has_value) { // a switch of run/collective (--analytical): every point gets it
      spec.fixed.push_back(word);
      spec.forwarded.push_back(word);
    } else if (name == "cfg") { // repeatable in run itself: every point gets every --cfg
      spec.fixed.push_back("--cfg");
      spec.fixed.push_back(value);
      spec.forwarded.insert(spec.forwarded.end(), {"--cfg", value});
    } else if (name == "cluster") {
      if (spec.cluster_axes)
        throw ConfigError("sweep: --cluster given twice (list a key's values inside one: nodes=4|8|16)");
      spec.cluster_first_axis = spec.axes.size(); // its keys are columns where --cluster stands
      const auto axes = cluster_axes(value);
      spec.cluster_axes = axes.size();
      spec.axes.insert(spec.axes.end(), axes.begin(), axes.end());
      spec.forwarded.insert(spec.forwarded.end(), {"--cluster", value});
    } else {
      if (is_generation_key(name))
        spec.generate = true;
      add_values(spec.axes, name, alternatives(name, value, comma_is_part_of_value(name)));
      spec.forwarded.insert(spec.forwarded.end(), {"--" + name, value});
    }
  }
  if (!spec.collect_dir.empty())
    return spec;
  const auto has = [&](const char* key) {
    return std::any_of(spec.axes.begin(), spec.axes.end(), [&](const SweepAxis& a) { return a.key == key; });
  };
  if (spec.generate) {
    if (spec.collective)
      throw ConfigError("sweep: --model, --gpu, --batch and --precision generate a workload; --collective runs none");
    if (has("workload"))
      throw ConfigError("sweep: give either --workload or the generator's --model/--gpu/--batch/--precision");
    for (const auto& key : generation_keys()) // the defaults of 'ddlsim workload'
      if (!has(key.c_str()))
        spec.axes.push_back({key,
                             {key == "model"   ? "resnet50"
                              : key == "gpu"   ? "P40"
                              : key == "batch" ? "32"
                                               : "fp32"}});
  }
  if (grid_size(spec) > kMaxSweepPoints)
    throw ConfigError("sweep: the grid has more than " + std::to_string(kMaxSweepPoints) + " points");
  return spec;
}

std::vector<std::string> swept_columns(const SweepSpec& spec)
{
  std::vector<std::string> columns;
  for (const auto& a : spec.axes)
    if (a.values.size() > 1)
      columns.push_back(a.key);
  return columns;
}

std::size_t grid_size(const SweepSpec& spec)
{
  std::size_t n = 1;
  for (const auto& a : spec.axes) {
    n *= a.values.size();
    if (n > kMaxSweepPoints)
      return kMaxSweepPoints + 1; // no overflow: the caller only compares
  }
  return n;
}

std::vector<SweepPoint> expand_grid(const SweepSpec& spec)
{
  const std::size_t n = grid_size(spec);
  std::vector<SweepPoint> points;
  points.reserve(n);
  for (std::size_t index = 0; index < n; ++index) {
    SweepPoint p;
    p.index = index;
    // digits of `index` in the mixed radix of the axes' sizes, the last axis varying fastest
    std::vector<std::size_t> digit(spec.axes.size());
    std::size_t rest = index;
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      digit[a] = rest % spec.axes[a].values.size();
      rest /= spec.axes[a].values.size();
    }
    std::string cluster;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepAxis& axis = spec.axes[a];
      const std::string& v = axis.values[digit[a]];
      if (axis.values.size() > 1)
        p.key.push_back(v);
      if (a >= spec.cluster_first_axis && a < spec.cluster_first_axis + spec.cluster_axes) {
        cluster += (cluster.empty() ? "" : ",") + axis.key.substr(8) + "=" + v; // drop "cluster."
      } else if (!(spec.generate && is_generation_key(axis.key))) {
        p.args.push_back("--" + axis.key);
        p.args.push_back(v);
      }
    }
    if (!cluster.empty())
      p.args.insert(p.args.end(), {"--cluster", cluster});
    p.args.insert(p.args.end(), spec.fixed.begin(), spec.fixed.end());
    if (spec.generate) { // order of generation_keys(): the axes were added in command-line order
      std::vector<std::string> ordered;
      for (const auto& key : generation_keys())
        for (std::size_t a = 0; a < spec.axes.size(); ++a)
          if (spec.axes[a].key == key)
            ordered.push_back(spec.axes[a].values[digit[a]]);
      p.generation = ordered;
      p.generation_id = join(ordered, "/");
    }
    points.push_back(std::move(p));
  }
  return points;
}

} // namespace ddlsim::cli
