#include <doctest/doctest.h>

#include "http/llm_headers.hpp"
#include "http/response_decision.hpp"

using rlcheck::http::HeaderForms;
using rlcheck::http::HeaderList;
using rlcheck::http::headers_of_forms;
using rlcheck::http::parse_go_duration_ms;
using rlcheck::http::parse_llm_headers;

TEST_CASE("LLM gateways' resets are Go durations") {
  CHECK(parse_go_duration_ms("6m0s") == 360'000);
  CHECK(parse_go_duration_ms("1.5s") == 1500);
  CHECK(parse_go_duration_ms("20ms") == 20);
  CHECK(parse_go_duration_ms("1h2m3.5s") == 3'723'500);
  CHECK(parse_go_duration_ms("0s") == 0);
  CHECK(parse_go_duration_ms(" 2s ") == 2000);
  CHECK(parse_go_duration_ms("1500us") == 2);  // rounded up to the millisecond
  CHECK_FALSE(parse_go_duration_ms("6"));
  CHECK_FALSE(parse_go_duration_ms("s"));
  CHECK_FALSE(parse_go_duration_ms("6 minutes"));
  CHECK_FALSE(parse_go_duration_ms(""));
}

TEST_CASE("the requests and tokens pairs are read apart, any case") {
  const HeaderList headers{
      {"x-ratelimit-limit-requests", "60"},     {"X-RateLimit-Limit-Tokens", "150000"},
      {"x-ratelimit-remaining-requests", "59"}, {"x-ratelimit-remaining-tokens", " 149984 "},
      {"x-ratelimit-reset-requests", "1s"},     {"x-ratelimit-reset-tokens", "6m0s"}};
  const auto limits = parse_llm_headers(headers);
  CHECK(limits.requests.limit == 60);
  CHECK(limits.requests.remaining == 59);
  CHECK(limits.requests.reset_ms == 1000);
  CHECK(limits.tokens.limit == 150'000);
  CHECK(limits.tokens.remaining == 149'984);
  CHECK(limits.tokens.reset_ms == 360'000);
  CHECK(limits.problems.empty());
}

TEST_CASE("malformed LLM headers are problems, never fatal") {
  const auto limits = parse_llm_headers({{"x-ratelimit-remaining-tokens", "lots"},
                                         {"x-ratelimit-reset-tokens", "soon"},
                                         {"x-ratelimit-limit-requests", "5"},
                                         {"x-ratelimit-remaining-requests", "9"}});
  CHECK_FALSE(limits.tokens.remaining);
  CHECK(limits.problems.size() == 3);
  CHECK(limits.problems.back() == "x-ratelimit-remaining-requests 9 is above the limit 5");
}

TEST_CASE("--ratelimit-headers keeps one form's fields, and every other header") {
  const HeaderList headers{{"X-RateLimit-Limit", "10"},
                           {"RateLimit-Policy", "\"d\";q=10;w=60"},
                           {"x-ratelimit-remaining-tokens", "5"},
                           {"Content-Type", "text/plain"}};
  CHECK(headers_of_forms(headers, HeaderForms::automatic).size() == 4);
  const HeaderList x = headers_of_forms(headers, HeaderForms::x);
  REQUIRE(x.size() == 2);
  CHECK(x[0].first == "X-RateLimit-Limit");
  const HeaderList llm = headers_of_forms(headers, HeaderForms::llm);
  REQUIRE(llm.size() == 2);
  CHECK(llm[0].first == "x-ratelimit-remaining-tokens");
  CHECK(headers_of_forms(headers, HeaderForms::ietf)[0].first == "RateLimit-Policy");
}
