#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "http/response_decision.hpp"

using rlcheck::engine::Decision;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::http::decide_response;
using rlcheck::http::HeaderList;
using rlcheck::http::ResponseRules;
using rlcheck::http::StatusSet;

namespace {

constexpr int64_t k_local = 1'700'000'000;      // the local clock, in Unix seconds
constexpr int64_t k_rfc_example = 784'111'777;  // Sun, 06 Nov 1994 08:49:37 GMT
constexpr const char* k_rfc_date = "Sun, 06 Nov 1994 08:49:37 GMT";

StatusSet statuses(std::string_view text) {
  auto set = StatusSet::parse(text);
  REQUIRE(set.has_value());
  return *set;
}

// The defaults of the command line: --allowed-status 200-299 --denied-status 429.
ResponseRules default_rules(bool require_retry_after = true) {
  return ResponseRules{statuses("200-299"), statuses("429"), require_retry_after};
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("decide_response: an allowed status is allowed, whatever its headers") {
  for (int status : {200, 204, 299}) {
    CAPTURE(status);
    const Decision d = decide_response(status, {{"Retry-After", "30"}}, default_rules(), k_local);
    CHECK(d.outcome == Outcome::allowed);
    CHECK(d.error == ErrorKind::none);
    CHECK(d.status == status);
    CHECK_FALSE(d.retry_ms.has_value());  // a hint on an allowed response is not a retry hint
    CHECK_FALSE(d.hint_expected);
    CHECK_FALSE(d.hint_invalid);
    CHECK_FALSE(d.header_problem);
  }
}

TEST_CASE("decide_response: a denied status is a denial") {
  const Decision d = decide_response(429, {{"Retry-After", "30"}}, default_rules(), k_local);
  CHECK(d.outcome == Outcome::denied);
  CHECK(d.error == ErrorKind::none);
  CHECK(d.status == 429);
  CHECK(d.error_message.empty());
}

TEST_CASE("decide_response: a status neither allowed nor denied is an error of kind status") {
  for (int status : {100, 300, 304, 400, 404, 428, 430, 500, 503, 599}) {
    CAPTURE(status);
    const Decision d = decide_response(status, {{"Retry-After", "30"}}, default_rules(), k_local);
    CHECK(d.outcome == Outcome::error);
    CHECK(d.error == ErrorKind::status);
    CHECK(d.status == status);
    CHECK(d.error_message == "status " + std::to_string(status));
    // Kept, never judged (only denials' hints are): it says the status reads as a denial.
    CHECK(d.retry_ms == 30'000);
  }
  CHECK_FALSE(decide_response(503, {}, default_rules(), k_local).retry_ms.has_value());
}

TEST_CASE("decide_response follows the rules it is given, not fixed statuses") {
  const ResponseRules rules{statuses("200,304"), statuses("429,503"), true};
  CHECK(decide_response(304, {}, rules, k_local).outcome == Outcome::allowed);
  CHECK(decide_response(503, {}, rules, k_local).outcome == Outcome::denied);
  CHECK(decide_response(429, {}, rules, k_local).outcome == Outcome::denied);
  const Decision d = decide_response(201, {}, rules, k_local);
  CHECK(d.outcome == Outcome::error);
  CHECK(d.error == ErrorKind::status);
  CHECK(d.error_message == "status 201");
}

TEST_CASE("decide_response: a valid delay-seconds Retry-After becomes retry_ms") {
  const std::vector<std::pair<std::string, int64_t>> cases{
      {"30", 30'000}, {"0", 0}, {"1", 1'000}, {" 7 ", 7'000}, {"86400", 86'400'000}};
  for (const auto& [value, ms] : cases) {
    CAPTURE(value);
    const Decision d = decide_response(429, {{"Retry-After", value}}, default_rules(), k_local);
    CHECK(d.outcome == Outcome::denied);
    REQUIRE(d.retry_ms.has_value());
    CHECK(*d.retry_ms == ms);
    CHECK(d.hint_expected);
    CHECK_FALSE(d.hint_invalid);
    CHECK(d.hint_note.empty());
  }
}

TEST_CASE("decide_response: every hint a response carries counts whole seconds") {
  const Decision delay = decide_response(429, {{"Retry-After", "3"}}, default_rules(), k_local);
  CHECK(delay.hint_resolution_ms == 1000);
  const HeaderList date{{"Date", k_rfc_date}, {"Retry-After", "Sun, 06 Nov 1994 08:50:37 GMT"}};
  CHECK(decide_response(429, date, default_rules(), k_local).hint_resolution_ms == 1000);
  const HeaderList reset{{"RateLimit", "limit=10, remaining=0, reset=5"}};
  const Decision advertised = decide_response(429, reset, default_rules(), k_local);
  CHECK(advertised.advertised_reset_s == 5);
  CHECK(advertised.hint_resolution_ms == 1000);
  // A Redis limiter's decision keeps the default: a script's retry_ms counts milliseconds.
  CHECK(Decision{}.hint_resolution_ms == 1);
}

TEST_CASE("decide_response marks what it read against Date: timestamps, not delays") {
  constexpr const char* k_date = "Tue, 14 Nov 2023 22:13:20 GMT";  // 1700000000
  const HeaderList flask{{"Date", k_date},
                         {"X-RateLimit-Limit", "5"},
                         {"X-RateLimit-Remaining", "0"},
                         {"X-RateLimit-Reset", "1700000003"},
                         {"Retry-After", "2"}};
  const Decision denied = decide_response(429, flask, default_rules(), k_local + 100);
  CHECK(denied.advertised_reset_s == 3);
  CHECK(denied.reset_from_date);
  CHECK(denied.retry_ms == 2000);
  CHECK_FALSE(denied.retry_from_date);

  const HeaderList dated{{"Date", k_date}, {"Retry-After", "Tue, 14 Nov 2023 22:13:22 GMT"}};
  const Decision by_date = decide_response(429, dated, default_rules(), k_local + 100);
  CHECK(by_date.retry_ms == 2000);
  CHECK(by_date.retry_from_date);
  CHECK_FALSE(by_date.reset_from_date);

  const HeaderList delta{{"RateLimit", "limit=5, remaining=0, reset=3"}};
  CHECK_FALSE(decide_response(429, delta, default_rules(), k_local).reset_from_date);
}

TEST_CASE("decide_response finds Retry-After whatever the case of its name") {
  for (const char* name : {"retry-after", "RETRY-AFTER", "Retry-after"}) {
    CAPTURE(name);
    const Decision d = decide_response(429, {{name, "12"}}, default_rules(), k_local);
    REQUIRE(d.retry_ms.has_value());
    CHECK(*d.retry_ms == 12'000);
  }
}

TEST_CASE("decide_response: a malformed Retry-After is an invalid hint with a note") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"1.5", "fraction '1.5'"},
      {"-1", "sign '-1'"},
      {"soon", "not a number or HTTP-date 'soon'"},
      {"", "empty"},
  };
  for (const auto& [value, reason] : cases) {
    CAPTURE(value);
    const Decision d = decide_response(429, {{"Retry-After", value}}, default_rules(), k_local);
    CHECK(d.outcome == Outcome::denied);
    CHECK_FALSE(d.retry_ms.has_value());
    CHECK(d.hint_invalid);
    CHECK(d.hint_expected);
    CAPTURE(d.hint_note);
    CHECK(contains(d.hint_note, "Retry-After"));
    CHECK(contains(d.hint_note, reason));
  }
}

TEST_CASE("decide_response: a denial without Retry-After has no hint; expected as the rules say") {
  SUBCASE("required") {
    const Decision d = decide_response(429, {}, default_rules(true), k_local);
    CHECK(d.outcome == Outcome::denied);
    CHECK_FALSE(d.retry_ms.has_value());
    CHECK(d.hint_expected);
    CHECK_FALSE(d.hint_invalid);
    CHECK(d.hint_note.empty());
  }
  SUBCASE("not required") {
    const Decision d = decide_response(429, {}, default_rules(false), k_local);
    CHECK(d.outcome == Outcome::denied);
    CHECK_FALSE(d.retry_ms.has_value());
    CHECK_FALSE(d.hint_expected);
    CHECK_FALSE(d.hint_invalid);
  }
}

TEST_CASE("decide_response measures an HTTP-date Retry-After from the response's Date") {
  // The server's clock is 1994; the local clock (2023) must play no part.
  const HeaderList headers{{"Date", k_rfc_date}, {"Retry-After", "Sun, 06 Nov 1994 08:50:37 GMT"}};
  const Decision d = decide_response(429, headers, default_rules(), k_local);
  CHECK(d.outcome == Outcome::denied);
  REQUIRE(d.retry_ms.has_value());
  CHECK(*d.retry_ms == 60'000);
  CHECK_FALSE(d.hint_invalid);
}

TEST_CASE("decide_response reads the Date header in any case and any HTTP-date form") {
  const HeaderList headers{{"date", "Sunday, 06-Nov-94 08:49:37 GMT"},
                           {"retry-after", "Sun Nov  6 08:49:47 1994"}};
  const Decision d = decide_response(429, headers, default_rules(), k_local);
  REQUIRE(d.retry_ms.has_value());
  CHECK(*d.retry_ms == 10'000);
}

TEST_CASE("decide_response measures an HTTP-date Retry-After from the local clock without Date") {
  SUBCASE("no Date header") {
    const HeaderList headers{{"Retry-After", k_rfc_date}};
    const Decision d = decide_response(429, headers, default_rules(), k_rfc_example - 90);
    REQUIRE(d.retry_ms.has_value());
    CHECK(*d.retry_ms == 90'000);
  }
  SUBCASE("a Date header that is not a date") {
    const HeaderList headers{{"Date", "yesterday"}, {"Retry-After", k_rfc_date}};
    const Decision d = decide_response(429, headers, default_rules(), k_rfc_example - 90);
    REQUIRE(d.retry_ms.has_value());
    CHECK(*d.retry_ms == 90'000);
  }
  SUBCASE("a date in the past means now") {
    const HeaderList headers{{"Retry-After", k_rfc_date}};
    const Decision d = decide_response(429, headers, default_rules(), k_local);
    REQUIRE(d.retry_ms.has_value());
    CHECK(*d.retry_ms == 0);
  }
}

TEST_CASE("decide_response reports the limit, remaining and reset the response advertised") {
  SUBCASE("IETF RateLimit and RateLimit-Policy, on an allowed response") {
    const HeaderList headers{{"RateLimit-Policy", "\"default\";q=100;w=60"},
                             {"RateLimit", "\"default\";r=42;t=17"}};
    const Decision d = decide_response(200, headers, default_rules(), k_local);
    CHECK(d.outcome == Outcome::allowed);
    CHECK(d.advertised_limit == 100);
    CHECK(d.remaining == 42);
    CHECK(d.advertised_reset_s == 17);
    CHECK_FALSE(d.header_problem);
    CHECK(d.header_note.empty());
  }
  SUBCASE("draft-7 RateLimit on a denial") {
    const HeaderList headers{{"RateLimit", "limit=10, remaining=0, reset=5"}, {"Retry-After", "5"}};
    const Decision d = decide_response(429, headers, default_rules(), k_local);
    CHECK(d.outcome == Outcome::denied);
    CHECK(d.advertised_limit == 10);
    CHECK(d.remaining == 0);
    CHECK(d.advertised_reset_s == 5);
    CHECK(d.retry_ms == 5'000);
    CHECK_FALSE(d.header_problem);
  }
  SUBCASE("X-RateLimit-Reset as a timestamp, measured from the Date header") {
    // The local clock is 5000 s ahead of the server's Date; the delta must use the Date.
    const HeaderList headers{{"Date", "Tue, 14 Nov 2023 22:13:20 GMT"},  // 1'700'000'000
                             {"X-RateLimit-Limit", "5000"},
                             {"X-RateLimit-Remaining", "4999"},
                             {"X-RateLimit-Reset", "1700000300"}};
    const Decision d = decide_response(200, headers, default_rules(), k_local + 5000);
    CHECK(d.advertised_limit == 5000);
    CHECK(d.remaining == 4999);
    CHECK(d.advertised_reset_s == 300);
    CHECK_FALSE(d.header_problem);
  }
  SUBCASE("X-RateLimit-Reset as a timestamp, from the local clock without Date") {
    const HeaderList headers{{"X-RateLimit-Reset", "1700000300"}};
    const Decision d = decide_response(200, headers, default_rules(), k_local + 100);
    CHECK(d.advertised_reset_s == 200);
  }
  SUBCASE("on an error status too") {
    const HeaderList headers{{"X-RateLimit-Limit", "7"}, {"X-RateLimit-Remaining", "3"}};
    const Decision d = decide_response(500, headers, default_rules(), k_local);
    CHECK(d.outcome == Outcome::error);
    CHECK(d.advertised_limit == 7);
    CHECK(d.remaining == 3);
  }
  SUBCASE("none advertised") {
    const Decision d =
        decide_response(200, {{"Content-Type", "text/plain"}}, default_rules(), k_local);
    CHECK_FALSE(d.advertised_limit.has_value());
    CHECK_FALSE(d.remaining.has_value());
    CHECK_FALSE(d.advertised_reset_s.has_value());
    CHECK_FALSE(d.header_problem);
  }
}

TEST_CASE("decide_response: a malformed rate-limit header sets header_problem with a note") {
  const std::vector<std::pair<HeaderList, std::string>> cases{
      {{{"X-RateLimit-Remaining", "ten"}}, "X-RateLimit-Remaining"},
      {{{"X-RateLimit-Limit", "1.5"}}, "X-RateLimit-Limit"},
      {{{"RateLimit", "\"default\";r=-1"}}, "RateLimit"},
      {{{"RateLimit-Policy", "\"default\";w=60"}}, "has no q"},
      {{{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "11"}}, "above the limit"},
  };
  for (const auto& [headers, note] : cases) {
    CAPTURE(note);
    const Decision d = decide_response(200, headers, default_rules(), k_local);
    CHECK(d.outcome == Outcome::allowed);  // a header problem does not change the outcome
    CHECK(d.header_problem);
    CAPTURE(d.header_note);
    CHECK(contains(d.header_note, note));
  }
}

TEST_CASE("decide_response: an epoch reset counts from the instant the request told the server") {
  // The server decided at the virtual instant 1 800 000 000 s (January 2027) and resets 30 s
  // later; its Date header is its real clock, weeks before.
  const rlcheck::http::HeaderList headers{{"X-RateLimit-Reset", "1800000030"},
                                          {"Date", "Wed, 02 Dec 2026 12:00:00 GMT"}};
  const Decision told = decide_response(429, headers, default_rules(), 1'800'000'000, true);
  REQUIRE(told.advertised_reset_s.has_value());
  CHECK(*told.advertised_reset_s == 30);
  const Decision dated = decide_response(429, headers, default_rules(), 1'800'000'000);
  CHECK(dated.advertised_reset_s != told.advertised_reset_s);
  rlcheck::engine::RequestClock clock{1'000'000'500'000'000, -1'000'000'000};
  CHECK(rlcheck::http::response_clock_s(clock) == 999'999);
}
