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
  // --refill K/I,steps: all `tokens` at once at each tick of `period`, none between (a
  // token bucket counted in quanta, as Symfony's); else smoothly, one every period / tokens.
  bool steps = false;
};

// "<count>/<duration>", where a duration without a number ("s", "m") means one of that unit.
std::expected<Rate, std::string> parse_rate(std::string_view text);
// parse_rate, and an optional ",steps" after it (a token bucket's --refill).
std::expected<Rate, std::string> parse_refill(std::string_view text);
// "5/s"; a stepped refill "5/s,steps".
std::string format_rate(const Rate& rate);

}  // namespace rlcheck::config
