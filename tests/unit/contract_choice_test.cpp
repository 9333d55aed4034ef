// The contract a test is judged by, chosen from the flags: the hint bound under costs.

#include <doctest/doctest.h>

#include "command_line_support.hpp"
#include "judging/contract_choice.hpp"

using rlcheck::judging::choose_contract;
using rlcheck::testing::parse_arguments;

namespace {

int64_t hint_bound_ms(std::vector<const char*> args) {
  const auto parsed = parse_arguments(std::move(args));
  return choose_contract(parsed.config, parsed.config.redis.strategy, parsed.config.checks.limit)
      .audit.max_retry_after_ms;
}

}  // namespace

TEST_CASE("under costs, a hint may be as long as the largest cost's honest wait") {
  // A sliding-window counter of 20 per 2 s: a request of 5 may wait for the next window and
  // 4/20 of it (its estimate below 16 there).
  CHECK(hint_bound_ms({"redis", "--strategy", "sliding-counter", "-l", "20", "-w", "2s"}) == 2000);
  CHECK(hint_bound_ms({"redis", "--strategy", "sliding-counter", "-l", "20", "-w", "2s",
                       "--cost-dist", "1:60,3:30,5:10"}) == 2400);
  // A bucket refilled 10 a second: 5 units, five intervals of 100 ms; never below the window.
  CHECK(hint_bound_ms({"redis", "--strategy", "token-bucket", "-l", "20", "-w", "300ms", "--burst",
                       "20", "--refill", "10/s", "--cost", "5"}) == 500);
  // A sliding log frees any cost within its window.
  CHECK(hint_bound_ms({"redis", "--strategy", "lua", "-l", "20", "-w", "2s", "--cost", "1-5"}) ==
        2000);
  // Given, the bound is the user's.
  CHECK(hint_bound_ms({"redis", "--strategy", "sliding-counter", "-l", "20", "-w", "2s", "--cost",
                       "5", "--max-retry-after", "1s"}) == 1000);
}
