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
        "concurrency, ban or slow-down, then ':' and its parameters");
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

TEST_CASE("a queue spec may give its undelayed part, at most its depth") {
  const auto two_stage = parse_contract_spec("queue:10/s,8,nodelay=3");
  REQUIRE(two_stage);
  CHECK(two_stage->name == "queue");
  CHECK(two_stage->queue == 8);
  CHECK(two_stage->nodelay == 3);
  CHECK(two_stage->refill->tokens == 10);
  CHECK_FALSE(parse_contract_spec("queue:10/s,8")->nodelay);
  CHECK(parse_contract_spec("queue:10/s,8,nodelay=9").error().find("more than the queue's depth") !=
        std::string::npos);
  CHECK(parse_contract_spec("queue:10/s,8,nodelay=x").error().find("undelayed") !=
        std::string::npos);
  CHECK(parse_contract_spec("token-bucket:5,10/s,nodelay=3").error().find("only a queue") !=
        std::string::npos);
}

TEST_CASE("a slow-down spec: after N in W, D more a request, up to max; sliding by default") {
  const auto plain = parse_contract_spec("slow-down:5/10s,100ms");
  REQUIRE(plain);
  CHECK(plain->name == "slow-down");
  REQUIRE(plain->slow_down);
  CHECK(plain->slow_down->after == 5);
  CHECK(plain->slow_down->window == 10s);
  CHECK(plain->slow_down->step == 100ms);
  CHECK_FALSE(plain->slow_down->max);
  CHECK(plain->slow_down->kind == "sliding");
  CHECK(plain->limit == 5);
  CHECK(rlcheck::config::format_slow_down(*plain->slow_down) == "slow-down:5/10s,100ms");
  const auto capped = parse_contract_spec("slow-down:first-hit:3/3s,100ms,1s");
  REQUIRE(capped);
  CHECK(capped->slow_down->kind == "first-hit");
  CHECK(capped->slow_down->max == 1s);
  CHECK(rlcheck::config::format_slow_down(*capped->slow_down) ==
        "slow-down:first-hit:3/3s,100ms,1s");
  CHECK(parse_contract_spec("slow-down:fixed:3/3s,100ms")->slow_down->kind == "fixed");
  CHECK(parse_contract_spec("slow-down:gcra:3/3s,1s").error().find("sliding, fixed or first-hit") !=
        std::string::npos);
  CHECK(parse_contract_spec("slow-down:3/3s").error().find("the delay added") != std::string::npos);
  CHECK(parse_contract_spec("slow-down:3/3s,soon").error().find("not a delay") !=
        std::string::npos);
  CHECK(parse_contract_spec("slow-down:3/3s,1s,never").error().find("not a longest delay") !=
        std::string::npos);
  CHECK(parse_contract_spec("slow-down").error().find("gives its parameters") != std::string::npos);
  CHECK_FALSE(parse_contract_spec("group:slow-down:3/3s,1s"));
}
