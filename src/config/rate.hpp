#pragma once
// Refill rates as the command line spells them: "5/s", "10/60s", "100/m", "1/500ms".

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "config/duration.hpp"

namespace rlcheck::config {

struct Rate {
  int64_t tokens = 0;  // tokens added...
  Nanos period{0};     // ...every period
};

// "<count>/<duration>", where a duration without a number ("s", "m") means one of that unit.
std::expected<Rate, std::string> parse_rate(std::string_view text);
std::string format_rate(const Rate& rate);

}  // namespace rlcheck::config
