#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "config/contract_spec.hpp"

using rlcheck::config::parse_contract_spec;
using namespace std::chrono_literals;

TEST_CASE("a contract spec carries its own parameters, or takes the flags'") {
  const auto bare = parse_contract_spec("sliding");
  REQUIRE(bare);
  CHECK(bare->name == "sliding");
  CHECK_FALSE(bare->has_parameters());

  const auto sliding = parse_contract_spec("sliding:10/1s");
  REQUIRE(sliding);
  CHECK(sliding->limit == 10);
  CHECK(sliding->window == 1s);

  const auto daily = parse_contract_spec("fixed:1000/1d@first-hit");
  REQUIRE(daily);
  CHECK(daily->limit == 1000);
  CHECK(daily->window == 24h);
  CHECK(daily->anchor == "first-hit");

  const auto bucket = parse_contract_spec("token-bucket:20,10/s");
  REQUIRE(bucket);
  CHECK(bucket->burst == 20);
  CHECK(bucket->refill->tokens == 10);
  CHECK(bucket->refill->period == 1s);

  const auto queue = parse_contract_spec("queue:5/s,10");
  REQUIRE(queue);
  CHECK(queue->queue == 10);
  CHECK(queue->refill->tokens == 5);

  const auto group = parse_contract_spec("group:fixed:100/1m");
  REQUIRE(group);
  CHECK(group->per_group);
  CHECK(group->name == "fixed");
  CHECK(group->text == "group:fixed:100/1m");

  const auto requests = parse_contract_spec("requests:group:sliding:60/1m");
  REQUIRE(requests);
  CHECK(requests->counts_requests);
  CHECK(requests->per_group);
  CHECK(requests->limit == 60);
}

TEST_CASE("a malformed contract spec says what it needs, with an example") {
  CHECK(parse_contract_spec("sliding:10").error() ==
        "'sliding:10': needs a limit and a window; e.g. sliding:10/1s");
  CHECK(parse_contract_spec("token-bucket:20").error() ==
        "'token-bucket:20': needs a burst and a refill; e.g. token-bucket:20,10/s (burst, refill)");
  CHECK(parse_contract_spec("slidng:10/1s").error() ==
        "'slidng:10/1s': expected sliding, fixed, sliding-counter, token-bucket, gcra, queue, "
        "concurrency or ban, then ':' and its parameters");
  CHECK(parse_contract_spec("sliding:10/1s@first-hit").error().find("no anchor") !=
        std::string::npos);
  CHECK(parse_contract_spec("fixed:10/1m@noon").error().find("@clock or @first-hit") !=
        std::string::npos);
  CHECK_FALSE(parse_contract_spec("gcra:0,10/s"));
}

TEST_CASE("a ban spec wraps a window (sliding by default) and says how long it bans") {
  const auto plain = parse_contract_spec("ban:5/10s,60s");
  REQUIRE(plain);
  CHECK(plain->name == "sliding");
  CHECK(plain->limit == 5);
  CHECK(plain->window == 10s);
  CHECK(plain->ban == 60s);
  CHECK_FALSE(plain->ban_renews);
  CHECK(plain->text == "ban:5/10s,60s");

  const auto fixed = parse_contract_spec("ban:fixed:3/2s,3s,renew");
  REQUIRE(fixed);
  CHECK(fixed->name == "fixed");
  CHECK(fixed->limit == 3);
  CHECK(fixed->ban == 3s);
  CHECK(fixed->ban_renews);
  CHECK(fixed->anchor == "clock");

  CHECK(parse_contract_spec("ban:sliding:5/10s,1m")->ban == 60s);
  CHECK(parse_contract_spec("ban:5/10s").error().find("how long the ban lasts") !=
        std::string::npos);
  CHECK(parse_contract_spec("ban:gcra:5/10s,1m").error().find("sliding or fixed") !=
        std::string::npos);
  CHECK(parse_contract_spec("ban:fixed:5/10s@first-hit,1m").error().find("on the clock") !=
        std::string::npos);
  CHECK(parse_contract_spec("ban:5/10s,soon").error().find("not a duration") != std::string::npos);
  CHECK_FALSE(parse_contract_spec("group:ban:5/10s,1m"));
}
