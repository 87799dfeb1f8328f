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

const std::vector<AlgorithmSpec::Choice>& AlgorithmSpec::for_ranks(int ranks) const
{
  for (const auto& r : by_ranks)
    if (r.max_ranks == 0 || ranks <= r.max_ranks)
      return r.choices;
  return choices;
}

AlgorithmId AlgorithmSpec::for_size(std::uint64_t bytes, int ranks) const
{
  const auto& c = for_ranks(ranks);
  for (const auto& choice : c)
    if (bytes <= choice.max_bytes)
      return choice.id;
  return c.back().id;
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
  for (const auto& r : by_ranks)
    for (const auto& c : r.choices)
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

AlgorithmSpec rank_rules(const std::vector<std::pair<int, std::string>>& rules, const std::string& text)
{
  AlgorithmSpec spec;
  spec.text = text;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const auto& [max_ranks, algorithm] = rules[i];
    const bool last = i + 1 == rules.size();
    if (max_ranks < 0 || (max_ranks == 0) != last)
      throw ConfigError(field("algorithm") + " rule " + std::to_string(i + 1) +
                        ": max_ranks must be > 0, and 0 (any) only in the last rule (got " + std::to_string(max_ranks) +
                        ")");
    if (!spec.by_ranks.empty() && max_ranks != 0 && max_ranks <= spec.by_ranks.back().max_ranks)
      throw ConfigError(field("algorithm") + " rule " + std::to_string(i + 1) + ": max_ranks must increase (got " +
                        std::to_string(max_ranks) + " after " + std::to_string(spec.by_ranks.back().max_ranks) + ")");
    AlgorithmSpec one;
    try {
      one = parse_algorithm(algorithm);
    } catch (const ConfigError& e) {
      throw ConfigError("rule " + std::to_string(i + 1) + ": " + e.message_template());
    }
    for (const auto& c : one.choices)
      if (!entry(c.id).flat && c.id != AlgorithmId::Nccl && c.id != AlgorithmId::NcclRing &&
          c.id != AlgorithmId::NcclTree)
        throw ConfigError(field("algorithm") + " rule " + std::to_string(i + 1) + ": '" + algorithm +
                          "': a stack's rules choose between flat algorithms (" + flat_algorithms() +
                          ") or NCCL's (nccl, nccl-ring, nccl-tree)");
    spec.by_ranks.push_back({max_ranks, one.choices});
  }
  if (!spec.by_ranks.empty())
    spec.choices = spec.by_ranks.back().choices;
  return spec;
}

} // namespace ddlsim::collectives
