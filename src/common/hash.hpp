// FNV-1a, the 64-bit hash the memos file their keys under (plan shapes, tagged shares, unit steps' rates).
#pragma once

#include <cstdint>

namespace ddlsim {

/** FNV-1a's 64-bit offset basis: the hash of nothing. */
constexpr std::uint64_t kFnv1aBasis = 1469598103934665603ULL;

/** One FNV-1a step: `hash` with `word` folded in (xor, then times the 64-bit FNV prime). */
constexpr std::uint64_t fnv1a(std::uint64_t hash, std::uint64_t word)
{
  return (hash ^ word) * 1099511628211ULL;
}

} // namespace ddlsim
