// An --algorithm value parsed once: one algorithm, or algorithms chosen by message size ("rd<=8KiB,hd").
#include "collectives/algorithm_spec.hpp"

#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

namespace ddlsim::collectives {

AlgorithmId AlgorithmSpec::for_size(std::uint64_t bytes) const
{
  for (const auto& c : choices)
    if (bytes <= c.max_bytes)
      return c.id;
  return choices.back().id;
}

std::string AlgorithmSpec::label() const
{
  return text.empty() ? entry(choices.front().id).name : text;
}

bool AlgorithmSpec::uses(AlgorithmId id) const
{
  for (const auto& c : choices)
    if (c.id == id)
      return true;
  return false;
}

namespace {

AlgorithmId algorithm_named(const std::string& name)
{
  if (const auto* e = find_algorithm(name))
    return e->id;
  throw ConfigError(field("algorithm") + " must be one of: " + known_algorithms() + " (got '" + name + "')");
}

} // namespace

AlgorithmSpec parse_algorithm(const std::string& text)
{
  AlgorithmSpec spec;
  spec.text = text;
  if (text.find("<=") == std::string::npos) {
    spec.choices = {{AlgorithmSpec::Choice{}.max_bytes, algorithm_named(text)}};
    return spec;
  }
  const std::string where = field("algorithm") + " " + text;
  const auto parts = split(text, ',');
  spec.choices.clear();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto le = parts[i].find("<=");
    const bool last = i + 1 == parts.size();
    if (last != (le == std::string::npos))
      throw ConfigError(where + ": expected SMALL<=SIZE,...,LARGE (every part but the last has <=SIZE)");
    AlgorithmSpec::Choice c;
    c.id = algorithm_named(parts[i].substr(0, le));
    if (!last) {
      c.max_bytes = parse_bytes(parts[i].substr(le + 2), where);
      if (!spec.choices.empty() && c.max_bytes <= spec.choices.back().max_bytes)
        throw ConfigError(where + ": the sizes of a size switch must increase");
    }
    if (!entry(c.id).flat)
      throw ConfigError(where + ": a size switch chooses between flat algorithms (" + flat_algorithms() + ")");
    spec.choices.push_back(c);
  }
  return spec;
}

} // namespace ddlsim::collectives
