#pragma once
// --identity-dist: how requests spread over the --identities. "uniform" (request i speaks for
// identity i mod K, the default), "zipf:S" (identity k, counted from 0, with a share
// proportional to 1/(k+1)^S) or "hot:P" (identity 0 takes the share P, the others split the
// rest evenly).

#include <expected>
#include <string>
#include <string_view>

namespace rlcheck::config {

enum class IdentityShape { uniform, zipf, hot };

struct IdentityDist {
  IdentityShape shape = IdentityShape::uniform;
  double parameter = 0;  // zipf: the exponent S, in (0, 10]; hot: the share P, in (0, 1)

  bool uniform() const { return shape == IdentityShape::uniform; }
  bool operator==(const IdentityDist&) const = default;
};

// The largest zipf exponent: past it identity 0 takes all but a rounding error of the load.
inline constexpr double k_max_zipf_exponent = 10;

// "uniform", "zipf:S" or "hot:P", S and P plain decimals ("1.1", "0.25"). On error: why, in
// words that follow the flag name.
std::expected<IdentityDist, std::string> parse_identity_dist(std::string_view text);

// As it parses again: "uniform", "zipf:1.1", "hot:0.3".
std::string format_identity_dist(const IdentityDist& dist);

}  // namespace rlcheck::config
