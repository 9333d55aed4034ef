#pragma once
// The test a worker runs, as the other workers compare it (many hosts): one "name=value" a
// line (requests, concurrency, runs, limit, target...). Workers that differ are not one test.

#include <optional>
#include <string>

namespace rlcheck::coord {

// The first setting two fingerprints disagree on, as "requests=300 there, requests=200 here"
// (a setting one lacks: "(unset)"); nullopt when they agree.
std::optional<std::string> first_difference(const std::string& theirs, const std::string& ours);

}  // namespace rlcheck::coord
