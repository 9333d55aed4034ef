#pragma once
// "Did you mean ...?" for mistyped flags, commands and scenario keys: the closest known name
// by edit distance, offered only when it is close enough to be the likely intent.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlcheck::cli {

// Optimal string alignment distance (Damerau-Levenshtein restricted to adjacent swaps):
// insertions, deletions, substitutions and transpositions each cost 1. Case-sensitive.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed` (compared without case), or nothing when even the nearest
// needs more than max(1, |typed| / 3) edits: "concurency" -> "concurrency", "reds" -> "redis",
// "bogus-flag" -> nothing. Ties go to the earlier candidate.
std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates);

// "; did you mean --concurrency?" (with `prefix` before the name), or "" without a match.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates,
                         std::string_view prefix = "");

}  // namespace rlcheck::cli
