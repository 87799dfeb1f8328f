// An --algorithm value parsed once: one algorithm, or algorithms chosen by message size ("rd<=8KiB,hd").
#pragma once

#include "collectives/options.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ddlsim::collectives {

/** @brief Which algorithm reduces a message of a given size: choices[i] for sizes up to choices[i].max_bytes
 *  (ascending), the last one for every size above. A plain name is one choice. */
struct AlgorithmSpec {
  struct Choice {
    std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
    AlgorithmId id = kDefaultAlgorithm;
  };
  /** @brief A library's choice for groups of up to `max_ranks` ranks (a stack profile's algorithm rules). */
  struct RankRule {
    int max_ranks = 0;
    std::vector<Choice> choices;
  };
  std::vector<Choice> choices{Choice{}}; ///< default: kDefaultAlgorithm for every size
  std::vector<RankRule> by_ranks;        ///< first rule with ranks <= max_ranks wins; none: `choices`
  std::string text;                      ///< as the user wrote it (reports record it verbatim)

  /** The algorithm that reduces `bytes` (the choices for any group size). */
  AlgorithmId for_size(std::uint64_t bytes) const;
  /** The algorithm that reduces `bytes` in a group of `ranks`. */
  AlgorithmId for_size(std::uint64_t bytes, int ranks) const;
  /** The size choices for a group of `ranks`. */
  const std::vector<Choice>& for_ranks(int ranks) const;
  /** True when one choice is a size switch between several algorithms. */
  bool switches() const { return choices.size() > 1 || !by_ranks.empty(); }
  /** The text as written, or the default algorithm's name for a default-constructed spec. */
  std::string label() const;
  /** True when some choice is `id`. */
  bool uses(AlgorithmId id) const;
};

/** @brief "ring", or "SMALL<=SIZE,...,LARGE" (flat algorithms only, sizes increasing); throws ConfigError naming
 *  the field `algorithm`. */
AlgorithmSpec parse_algorithm(const std::string& text);

/** @brief A stack profile's rules: (max_ranks, algorithm text) by ascending max_ranks, the last with max_ranks 0
 *  (any). Throws ConfigError naming the field `algorithm`. */
AlgorithmSpec rank_rules(const std::vector<std::pair<int, std::string>>& rules, const std::string& text);

} // namespace ddlsim::collectives
