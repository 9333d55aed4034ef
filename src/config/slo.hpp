#pragma once
// --slo LIST: the latency objective --find-max holds each rate to. "p99<10ms,p50<2ms": each
// item a percentile (0 < p < 100) of the decided requests' latency and the bound it must stay
// under.

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.hpp"

namespace rlcheck::config {

struct SloBound {
  double percentile = 99;  // 0 < percentile < 100
  Nanos bound{0};          // > 0
};

// A comma list of 1 to 8 items "pNN<DURATION" (NN may have decimals: p99.9). On error: why,
// naming the bad item, in words that follow the flag name.
std::expected<std::vector<SloBound>, std::string> parse_slo(std::string_view text);

// One bound as reports name it, "p99<10ms"; the list as it parses again.
std::string format_slo_bound(const SloBound& bound);
std::string format_slo(const std::vector<SloBound>& slo);

}  // namespace rlcheck::config
