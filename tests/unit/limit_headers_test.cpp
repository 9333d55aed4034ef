#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/ratelimit_headers.hpp"
#include "http/retry_after.hpp"
#include "serve/limit_headers.hpp"

using rlcheck::engine::Decision;
using rlcheck::engine::Outcome;
using rlcheck::http::HeaderList;
using rlcheck::http::parse_ratelimit_headers;
using rlcheck::http::parse_retry_after;
using rlcheck::serve::limit_response;
using rlcheck::serve::LimitResponse;
using rlcheck::serve::outage_response;
using rlcheck::serve::Policy;

namespace {

constexpr int64_t k_now = 1'700'000'000;

// The value of the one header called `name`; nullopt when absent. A second one fails the test.
std::optional<std::string> header(const LimitResponse& response, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [field, value] : response.headers) {
    if (field == name) {
      CHECK_MESSAGE(!found.has_value(), "header repeated: ", name);
      found = value;
    }
  }
  return found;
}

Decision allowed(std::optional<int64_t> remaining) {
  Decision d;
  d.outcome = Outcome::allowed;
  d.remaining = remaining;
  return d;
}

Decision denied(std::optional<int64_t> retry_ms) {
  Decision d;
  d.outcome = Outcome::denied;
  d.retry_ms = retry_ms;
  d.remaining = 0;
  return d;
}

nlohmann::json body_of(const LimitResponse& response) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  REQUIRE_FALSE(body.is_discarded());
  return body;
}

}  // namespace

TEST_CASE("limit_response for an allowed request: 200, the policy and what remains") {
  const LimitResponse r = limit_response(allowed(7), Policy{10, 60});
  CHECK(r.status == 200);
  CHECK(header(r, "Content-Type") == "application/json");
  CHECK(header(r, "RateLimit-Policy") == "\"default\";q=10;w=60");
  CHECK(header(r, "RateLimit") == "\"default\";r=7");
  CHECK(header(r, "X-RateLimit-Limit") == "10");
  CHECK(header(r, "X-RateLimit-Remaining") == "7");
  CHECK_FALSE(header(r, "Retry-After").has_value());
  CHECK_FALSE(header(r, "X-RateLimit-Reset").has_value());

  const nlohmann::json body = body_of(r);
  CHECK(body["allowed"] == true);
  CHECK(body["remaining"] == 7);
  CHECK_FALSE(body.contains("error"));
  CHECK_FALSE(body.contains("retry_after_s"));
}

TEST_CASE("limit_response spells the policy it is given") {
  const LimitResponse r = limit_response(allowed(999'999), Policy{1'000'000, 3600});
  CHECK(header(r, "RateLimit-Policy") == "\"default\";q=1000000;w=3600");
  CHECK(header(r, "X-RateLimit-Limit") == "1000000");
  CHECK(header(r, "X-RateLimit-Remaining") == "999999");
}

TEST_CASE("limit_response for an allowed request without a remaining count claims none") {
  const LimitResponse r = limit_response(allowed(std::nullopt), Policy{10, 60});
  CHECK(r.status == 200);
  CHECK(header(r, "RateLimit-Policy") == "\"default\";q=10;w=60");
  CHECK(header(r, "X-RateLimit-Limit") == "10");
  CHECK_FALSE(header(r, "RateLimit").has_value());
  CHECK_FALSE(header(r, "X-RateLimit-Remaining").has_value());
  CHECK_FALSE(header(r, "Retry-After").has_value());
  const nlohmann::json body = body_of(r);
  CHECK(body["allowed"] == true);
  CHECK_FALSE(body.contains("remaining"));
}

TEST_CASE("limit_response never advertises a negative remaining count") {
  const LimitResponse r = limit_response(allowed(-3), Policy{10, 60});
  CHECK(header(r, "X-RateLimit-Remaining") == "0");
  CHECK(header(r, "RateLimit") == "\"default\";r=0");
  CHECK(body_of(r)["remaining"] == 0);
}

TEST_CASE("limit_response for a denial: 429, Retry-After rounded up to whole seconds") {
  const std::vector<std::pair<int64_t, std::string>> cases{
      {1755, "2"}, {1000, "1"}, {1, "1"}, {999, "1"}, {1001, "2"}, {59'999, "60"}, {0, "0"}};
  for (const auto& [ms, seconds] : cases) {
    CAPTURE(ms);
    const LimitResponse r = limit_response(denied(ms), Policy{10, 60});
    CHECK(r.status == 429);
    CHECK(header(r, "Retry-After") == seconds);
    CHECK(header(r, "RateLimit") == "\"default\";r=0;t=" + seconds);
    CHECK(header(r, "X-RateLimit-Reset") == seconds);
    CHECK(header(r, "RateLimit-Policy") == "\"default\";q=10;w=60");
    CHECK(header(r, "X-RateLimit-Limit") == "10");
    CHECK(header(r, "X-RateLimit-Remaining") == "0");

    const nlohmann::json body = body_of(r);
    CHECK(body["allowed"] == false);
    CHECK(body["error"] == "too_many_requests");
    CHECK(body["retry_after_s"] == std::stoll(seconds));
    CHECK(body["remaining"] == 0);
  }
}

TEST_CASE("limit_response for a denial reports remaining 0 whatever the decision carried") {
  Decision d = denied(2000);
  d.remaining = 5;
  const LimitResponse r = limit_response(d, Policy{10, 60});
  CHECK(header(r, "X-RateLimit-Remaining") == "0");
  CHECK(header(r, "RateLimit") == "\"default\";r=0;t=2");
}

TEST_CASE("limit_response for a denial without a retry hint gives no Retry-After") {
  const LimitResponse r = limit_response(denied(std::nullopt), Policy{10, 60});
  CHECK(r.status == 429);
  CHECK_FALSE(header(r, "Retry-After").has_value());
  CHECK_FALSE(header(r, "X-RateLimit-Reset").has_value());
  CHECK(header(r, "RateLimit") == "\"default\";r=0");
  const nlohmann::json body = body_of(r);
  CHECK(body["allowed"] == false);
  CHECK(body["error"] == "too_many_requests");
  CHECK_FALSE(body.contains("retry_after_s"));
}

TEST_CASE("outage_response: fail-closed is 503 with Retry-After, fail-open is 200 unchecked") {
  const LimitResponse closed = outage_response(false);
  CHECK(closed.status == 503);
  CHECK(header(closed, "Retry-After") == "1");
  CHECK(header(closed, "Content-Type") == "application/json");
  const nlohmann::json closed_body = body_of(closed);
  CHECK(closed_body["allowed"] == false);
  CHECK(closed_body.contains("error"));

  const LimitResponse open = outage_response(true);
  CHECK(open.status == 200);
  CHECK_FALSE(header(open, "Retry-After").has_value());
  CHECK(header(open, "Content-Type") == "application/json");
  const nlohmann::json open_body = body_of(open);
  CHECK(open_body["allowed"] == true);
  CHECK(open_body.contains("unchecked"));
}

TEST_CASE("round trip: what limit_response sends, rlcheck http reads back") {
  struct Case {
    Decision decision;
    Policy policy;
    int64_t remaining;
    std::optional<int64_t> retry_s;
  };
  const std::vector<Case> cases{
      {allowed(7), Policy{10, 60}, 7, std::nullopt},
      {allowed(999'999), Policy{1'000'000, 1}, 999'999, std::nullopt},
      {denied(1755), Policy{10, 60}, 0, 2},
      {denied(1000), Policy{10, 60}, 0, 1},
      {denied(1), Policy{5, 1}, 0, 1},
      {denied(59'001), Policy{100, 60}, 0, 60},
  };
  for (const Case& c : cases) {
    CAPTURE(c.policy.limit);
    CAPTURE(c.remaining);
    const LimitResponse r = limit_response(c.decision, c.policy);
    const HeaderList headers(r.headers.begin(), r.headers.end());
    const auto info = parse_ratelimit_headers(headers, k_now);
    CHECK(info.problems.empty());
    CHECK(info.source == "ietf");
    CHECK(info.limit == c.policy.limit);
    CHECK(info.window_s == c.policy.window_s);
    CHECK(info.remaining == c.remaining);
    CHECK(info.reset_s == c.retry_s);

    const auto retry_after = header(r, "Retry-After");
    if (c.retry_s) {
      REQUIRE(retry_after.has_value());
      auto parsed = parse_retry_after(*retry_after, k_now);
      REQUIRE(parsed.has_value());
      CHECK(parsed->seconds == *c.retry_s);
    } else {
      CHECK_FALSE(retry_after.has_value());
    }
  }
}

TEST_CASE("each strategy's policy says what it keeps: windows q per w, buckets q=burst") {
  using rlcheck::config::Rate;
  using rlcheck::config::Strategy;
  using rlcheck::serve::policy_of;
  using namespace std::chrono_literals;
  const Rate five_per_s{5, 1s};
  for (const Strategy strategy :
       {Strategy::sliding_window, Strategy::fixed_window, Strategy::incr_expire, Strategy::naive}) {
    CAPTURE(static_cast<int>(strategy));
    const Policy policy = policy_of(strategy, 10, 60'000, 5, five_per_s);
    CHECK(policy.limit == 10);
    CHECK(policy.window_s == 60);
    // A window under a second is still advertised in whole seconds, rounded up.
    CHECK(policy_of(strategy, 3, 500, 5, five_per_s).window_s == 1);
  }
  for (const Strategy strategy : {Strategy::token_bucket, Strategy::gcra}) {
    CAPTURE(static_cast<int>(strategy));
    // --burst 5 --refill 5/s: a full bucket of 5 takes 1 s to refill: q=5;w=1 (5/s).
    const Policy policy = policy_of(strategy, 10, 60'000, 5, five_per_s);
    CHECK(policy.limit == 5);
    CHECK(policy.window_s == 1);
    // --burst 10 --refill 1/6s: 60 s.
    CHECK(policy_of(strategy, 10, 60'000, 10, Rate{1, 6s}).window_s == 60);
    // The default bucket (burst = limit, refill = limit per window): the window's own policy.
    const Policy defaults = policy_of(strategy, 10, 60'000, 10, Rate{10, 60s});
    CHECK(defaults.limit == 10);
    CHECK(defaults.window_s == 60);
  }
  // The headers carry it: q=5;w=1, and X-RateLimit-Limit 5.
  const LimitResponse response =
      limit_response(allowed(4), policy_of(Strategy::token_bucket, 10, 60'000, 5, five_per_s));
  CHECK(header(response, "RateLimit-Policy") == "\"default\";q=5;w=1");
  CHECK(header(response, "X-RateLimit-Limit") == "5");
}
