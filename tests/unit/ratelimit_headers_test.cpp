#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "http/ratelimit_headers.hpp"

using rlcheck::http::HeaderList;
using rlcheck::http::parse_ratelimit_headers;
using rlcheck::http::RateLimitInfo;

namespace {

constexpr int64_t k_now = 1'700'000'000;  // the response's Date, in Unix seconds

struct Values {
  std::optional<int64_t> limit;
  std::optional<int64_t> remaining;
  std::optional<int64_t> reset_s;
  std::optional<int64_t> window_s;
};

struct Case {
  std::string what;
  HeaderList headers;
  Values expected;
  std::string source;
  std::vector<std::string> problems;  // one substring per expected problem line, in order
};

void check_case(const Case& c) {
  CAPTURE(c.what);
  const RateLimitInfo info = parse_ratelimit_headers(c.headers, k_now);
  CHECK(info.limit == c.expected.limit);
  CHECK(info.remaining == c.expected.remaining);
  CHECK(info.reset_s == c.expected.reset_s);
  CHECK(info.window_s == c.expected.window_s);
  CHECK(info.source == c.source);
  CHECK(info.any() == !c.source.empty());
  REQUIRE(info.problems.size() == c.problems.size());
  for (size_t i = 0; i < c.problems.size(); ++i) {
    CAPTURE(info.problems[i]);
    CHECK(info.problems[i].find(c.problems[i]) != std::string::npos);
  }
}

const auto none = std::nullopt;

}  // namespace

TEST_CASE("parse_ratelimit_headers reads X-RateLimit-* as servers send them") {
  const std::vector<Case> cases{
      {"GitHub: Reset is a Unix timestamp, turned into a delta",
       {{"x-ratelimit-limit", "5000"},
        {"x-ratelimit-remaining", "4987"},
        {"x-ratelimit-reset", "1700000300"},
        {"x-ratelimit-used", "13"},
        {"x-ratelimit-resource", "core"}},
       {5000, 4987, 300, none},
       "x-ratelimit",
       {}},
      {"a timestamp already past means the window has reset",
       {{"X-RateLimit-Limit", "60"},
        {"X-RateLimit-Remaining", "0"},
        {"X-RateLimit-Reset", "1699999000"}},
       {60, 0, 0, none},
       "x-ratelimit",
       {}},
      {"a small Reset is a delta",
       {{"X-RateLimit-Reset", "60"}},
       {none, none, 60, none},
       "x-ratelimit",
       {}},
      {"10^9 exactly is still a delta",
       {{"X-RateLimit-Reset", "1000000000"}, {"X-RateLimit-Limit", "1"}},
       {1, none, 1'000'000'000, none},
       "x-ratelimit",
       {}},
      {"10^9 + 1 is a Unix timestamp (2001), long past",
       {{"X-RateLimit-Reset", "1000000001"}},
       {none, none, 0, none},
       "x-ratelimit",
       {}},
      {"a timestamp in milliseconds is reported, not believed",
       {{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Reset", "1700000000000"}},
       {100, none, none, none},
       "x-ratelimit",
       {"X-RateLimit-Reset: timestamp 1700000000000 is past the year 5000"}},
      {"header names match in any case; values are trimmed",
       {{"X-RATELIMIT-LIMIT", "  100\t"}, {"x-RateLimit-remaining", "\t7 "}},
       {100, 7, none, none},
       "x-ratelimit",
       {}},
      {"a field repeated verbatim is not a problem",
       {{"X-RateLimit-Limit", "100"}, {"x-ratelimit-limit", "100 "}},
       {100, none, none, none},
       "x-ratelimit",
       {}},
      {"a field repeated with another value: the first wins, reported",
       {{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Limit", "99"}},
       {100, none, none, none},
       "x-ratelimit",
       {"X-RateLimit-Limit: repeated with a different value '99' (kept '100')"}},
      {"no rate-limit fields at all",
       {{"Content-Type", "text/plain"}, {"Retry-After", "5"}, {"X-RateLimit", "10"}},
       {none, none, none, none},
       "",
       {}},
  };
  for (const Case& c : cases)
    check_case(c);
}

TEST_CASE("parse_ratelimit_headers reports malformed numbers and leaves them unset") {
  const std::vector<Case> cases{
      {"not a number",
       {{"X-RateLimit-Remaining", "ten"}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Remaining: not a number 'ten'"}},
      {"negative",
       {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "-1"}},
       {10, none, none, none},
       "x-ratelimit",
       {"X-RateLimit-Remaining: negative '-1'"}},
      {"a fractional epoch (Discord style)",
       {{"X-RateLimit-Reset", "1470173023.123"}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Reset: fraction '1470173023.123'"}},
      {"empty",
       {{"X-RateLimit-Limit", "   "}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Limit: empty"}},
      {"beyond int64",
       {{"X-RateLimit-Limit", "99999999999999999999"}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Limit: too large '99999999999999999999'"}},
      {"within int64 but absurd",
       {{"X-RateLimit-Remaining", "1000000000000000"}},
       {none, none, none, none},
       "",
       {"too large '1000000000000000'"}},
      {"a sign is not part of the grammar",
       {{"X-RateLimit-Limit", "+5"}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Limit: not a number '+5'"}},
      {"units are garbage",
       {{"X-RateLimit-Reset", "60s"}, {"X-RateLimit-Limit", "1e3"}},
       {none, none, none, none},
       "",
       {"X-RateLimit-Limit: not a number '1e3'", "X-RateLimit-Reset: not a number '60s'"}},
      {"two values folded into one",
       {{"RateLimit-Remaining", "5, 6"}},
       {none, none, none, none},
       "",
       {"RateLimit-Remaining: not a number '5, 6'"}},
      {"remaining above the limit is inconsistent",
       {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "11"}},
       {10, 11, none, none},
       "x-ratelimit",
       {"remaining 11 is above the limit 10"}},
  };
  for (const Case& c : cases)
    check_case(c);
}

TEST_CASE("parse_ratelimit_headers reads the draft-6 and draft-7 fields") {
  const std::vector<Case> cases{
      {"draft-6 as express-rate-limit sends it",
       {{"RateLimit-Policy", "100;w=900"},
        {"RateLimit-Limit", "100"},
        {"RateLimit-Remaining", "99"},
        {"RateLimit-Reset", "900"}},
       {100, 99, 900, 900},
       "draft-6",
       {}},
      {"draft-6 quota policies inside RateLimit-Limit: the window of the matching one",
       {{"ratelimit-limit", "10, 50;w=60, 10;w=1"}, {"ratelimit-remaining", "3"}},
       {10, 3, none, 1},
       "draft-6",
       {}},
      {"draft-6 tolerates spaces around parameters",
       {{"RateLimit-Limit", "10, 10; w=60"}},
       {10, none, none, 60},
       "draft-6",
       {}},
      {"draft-6 reset sent as a Unix timestamp is reported",
       {{"RateLimit-Limit", "10"}, {"RateLimit-Reset", "1700000050"}},
       {10, none, none, none},
       "draft-6",
       {"RateLimit-Reset: reset 1700000050 looks like a Unix timestamp"}},
      {"draft-7 dictionary with its policy",
       {{"RateLimit", "limit=10, remaining=9, reset=50"}, {"RateLimit-Policy", "10;w=60"}},
       {10, 9, 50, 60},
       "draft-7",
       {}},
      {"draft-7 without a policy has no window",
       {{"ratelimit", "limit=100, remaining=0, reset=12"}},
       {100, 0, 12, none},
       "draft-7",
       {}},
      {"draft-7 limit taken from the policy when the dictionary omits it",
       {{"RateLimit", "remaining=4, reset=10"}, {"RateLimit-Policy", "5;w=10"}},
       {5, 4, 10, 10},
       "draft-7",
       {}},
      {"draft-7 bad members are reported one by one",
       {{"RateLimit", "limit=10, remaining=-1, reset=2.5"}},
       {10, none, none, none},
       "draft-7",
       {"RateLimit: remaining: negative '-1'", "RateLimit: reset: fraction '2.5'"}},
      {"draft-7 repeated with another value",
       {{"RateLimit", "limit=10, remaining=9, reset=50"},
        {"RateLimit", "limit=10, remaining=8, reset=49"}},
       {10, 9, 50, none},
       "draft-7",
       {"RateLimit: repeated with a different value"}},
      {"a RateLimit that is not a structured field",
       {{"RateLimit", "limit=10,, remaining=9"}},
       {none, none, none, none},
       "",
       {"RateLimit: unreadable at character 10"}},
  };
  for (const Case& c : cases)
    check_case(c);
}

TEST_CASE("parse_ratelimit_headers reads the IETF structured fields") {
  const std::vector<Case> cases{
      {"one named policy (Cloudflare API style)",
       {{"ratelimit", "\"default\";r=1199;t=300"},
        {"ratelimit-policy", "\"default\";q=1200;w=300"}},
       {1200, 1199, 300, 300},
       "ietf",
       {}},
      {"the policy the RateLimit field names, not the first one",
       {{"RateLimit-Policy", "\"burst\";q=100;w=60, \"daily\";q=1000;w=86400"},
        {"RateLimit", "\"daily\";r=1;t=3600"}},
       {1000, 1, 3600, 86400},
       "ietf",
       {}},
      {"policies in repeated fields add up",
       {{"RateLimit-Policy", "\"burst\";q=100;w=1"},
        {"RateLimit-Policy", "\"default\";q=10;w=60"},
        {"RateLimit", "\"default\";r=9;t=50"}},
       {10, 9, 50, 60},
       "ietf",
       {}},
      {"several RateLimit members: the one with the fewest remaining is in force",
       {{"RateLimit-Policy", "\"burst\";q=100;w=1, \"daily\";q=1000;w=86400"},
        {"RateLimit", "\"burst\";r=50;t=1, \"daily\";r=3;t=3600"}},
       {1000, 3, 3600, 86400},
       "ietf",
       {}},
      {"tokens for names, and parameters the parser does not use",
       {{"RateLimit-Policy", "default;q=10;w=60;qu=\"requests\";pk=:cHJvamVjdDEyMw==:"},
        {"RateLimit", "default;r=9;t=50;pk=:cHJvamVjdDEyMw==:"}},
       {10, 9, 50, 60},
       "ietf",
       {}},
      {"policies alone give the limit of the first",
       {{"RateLimit-Policy", "\"a\";q=5;w=2, \"b\";q=50;w=60"}},
       {5, none, none, 2},
       "ietf",
       {}},
      {"a RateLimit naming an undefined policy falls back to the first",
       {{"RateLimit-Policy", "\"default\";q=10;w=60"}, {"RateLimit", "\"other\";r=9;t=50"}},
       {10, 9, 50, 60},
       "ietf",
       {"names policy \"other\" that RateLimit-Policy does not define"}},
      {"malformed parameters are reported and left unset",
       {{"RateLimit-Policy", "\"default\";w=60"}, {"RateLimit", "\"default\";r=ten;t=1700000050"}},
       {none, none, none, 60},
       "ietf",
       {"RateLimit: \"default\" r: not a number 'ten'",
        "RateLimit: reset 1700000050 looks like a Unix timestamp",
        "RateLimit-Policy: \"default\" has no q"}},
      {"a policy without r is reported",
       {{"RateLimit", "\"default\";t=5"}},
       {none, none, 5, none},
       "ietf",
       {"RateLimit: \"default\" has no r"}},
      {"a policy name defined twice differently",
       {{"RateLimit-Policy", "\"d\";q=10;w=60, \"d\";q=20;w=60"}},
       {10, none, none, 60},
       "ietf",
       {"RateLimit-Policy: \"d\" defined twice (first kept)"}},
      {"an unterminated string spoils only its field",
       {{"RateLimit-Policy", "\"default;q=10"}, {"X-RateLimit-Limit", "10"}},
       {10, none, none, none},
       "x-ratelimit",
       {"RateLimit-Policy: unreadable"}},
      {"a dictionary member is not a policy",
       {{"RateLimit-Policy", "q=10"}},
       {none, none, none, none},
       "",
       {"RateLimit-Policy: 'q' is not a policy"}},
  };
  for (const Case& c : cases)
    check_case(c);
}

TEST_CASE(
    "parse_ratelimit_headers prefers ietf > draft-7 > draft-6 > x-ratelimit, reporting "
    "disagreement") {
  const std::vector<Case> cases{
      {"all forms agree: no problem",
       {{"X-RateLimit-Limit", "10"},
        {"X-RateLimit-Remaining", "9"},
        {"X-RateLimit-Reset", "1700000051"},
        {"RateLimit-Policy", "\"default\";q=10;w=60"},
        {"RateLimit", "\"default\";r=9;t=50"}},
       {10, 9, 50, 60},
       "ietf",
       {}},
      {"ietf and x-ratelimit disagree: ietf wins, reported",
       {{"X-RateLimit-Remaining", "8"},
        {"X-RateLimit-Reset", "1700000100"},
        {"RateLimit-Policy", "\"default\";q=10;w=60"},
        {"RateLimit", "\"default\";r=9;t=50"}},
       {10, 9, 50, 60},
       "ietf",
       {"remaining: ietf says 9 but x-ratelimit says 8",
        "reset: ietf says 50 but x-ratelimit says 100"}},
      {"draft-7 over draft-6",
       {{"RateLimit", "limit=10, remaining=9, reset=50"}, {"RateLimit-Limit", "20"}},
       {10, 9, 50, none},
       "draft-7",
       {"limit: draft-7 says 10 but draft-6 says 20"}},
      {"a value missing from the preferred form comes from the next one",
       {{"RateLimit-Remaining", "4"}, {"X-RateLimit-Limit", "5"}, {"X-RateLimit-Remaining", "4"}},
       {5, 4, none, none},
       "draft-6",
       {}},
  };
  for (const Case& c : cases)
    check_case(c);
}

TEST_CASE("an X-RateLimit-Reset timestamp is marked as read against the reference second") {
  // Flask-Limiter: a 2 s window opened at 1700000000.4 ends at .4 past 1700000002; it sends
  // the second after, 1700000003, and a Date of 1700000000: read as 3.
  const RateLimitInfo flask = parse_ratelimit_headers({{"X-RateLimit-Limit", "5"},
                                                       {"X-RateLimit-Remaining", "4"},
                                                       {"X-RateLimit-Reset", "1700000003"}},
                                                      k_now);
  CHECK(flask.reset_s == 3);
  CHECK(flask.reset_from_timestamp);
  CHECK(flask.problems.empty());

  const RateLimitInfo delta =
      parse_ratelimit_headers({{"X-RateLimit-Limit", "5"}, {"X-RateLimit-Reset", "2"}}, k_now);
  CHECK(delta.reset_s == 2);
  CHECK_FALSE(delta.reset_from_timestamp);

  // A draft form's delta wins over the timestamp: the reset is not one read against Date.
  const RateLimitInfo both = parse_ratelimit_headers(
      {{"RateLimit", "limit=5, remaining=4, reset=2"}, {"X-RateLimit-Reset", "1700000003"}}, k_now);
  CHECK(both.reset_s == 2);
  CHECK_FALSE(both.reset_from_timestamp);
  CHECK(both.problems.empty());  // 2 s against 3: a timestamp read against Date may say so

  const RateLimitInfo apart = parse_ratelimit_headers(
      {{"RateLimit", "limit=5, remaining=4, reset=2"}, {"X-RateLimit-Reset", "1700000005"}}, k_now);
  REQUIRE(apart.problems.size() == 1);
  CHECK(apart.problems[0].find("reset: draft-7 says 2 but x-ratelimit says 5") !=
        std::string::npos);
}

TEST_CASE("parse_ratelimit_headers lists every distinct policy") {
  const RateLimitInfo info = parse_ratelimit_headers(
      {{"RateLimit-Policy", "\"burst\";q=100;w=1, \"daily\";q=1000;w=86400"},
       {"RateLimit-Policy", "\"burst\";q=100;w=1"},  // repeated verbatim: one policy
       {"RateLimit-Limit", "10, 10;w=60"}},
      k_now);
  REQUIRE(info.policies.size() == 3);
  CHECK(info.policies[0].name == "burst");
  CHECK(info.policies[0].quota == 100);
  CHECK(info.policies[0].window_s == 1);
  CHECK(info.policies[1].name == "daily");
  CHECK(info.policies[1].window_s == 86400);
  CHECK(info.policies[2].name.empty());
  CHECK(info.policies[2].quota == 10);
  CHECK(info.policies[2].window_s == 60);
  // Without a RateLimit field, ietf's policy in force is the first one, which draft-6 contradicts.
  REQUIRE(info.problems.size() == 2);
  CHECK(info.problems[0] == "limit: ietf says 100 but draft-6 says 10");
  CHECK(info.problems[1] == "window: ietf says 1 but draft-6 says 60");
}

TEST_CASE("parse_ratelimit_headers survives any value") {
  // Every prefix of well-formed values, and some hostile ones, under every field name: the
  // parser must stay within bounds (ASan builds check it) and keep its report lines short.
  const std::vector<std::string> names{"X-RateLimit-Limit", "X-RateLimit-Reset", "RateLimit-Limit",
                                       "RateLimit", "RateLimit-Policy"};
  const std::vector<std::string> values{
      "\"default\";q=10;w=60, \"b\\\"x\";q=1;pk=:YWJj:;flag, 10;w=1",
      "limit=10, remaining=9, reset=50",
      "\"a\\",
      "?1",
      "?2",
      ":abc",
      "-",
      "1.",
      "-.5",
      ";",
      ",",
      "\"\x01\"",
      "a=",
      "a;=1",
      std::string(100'000, '9'),
      std::string(10'000, ','),
      std::string("1\0002", 3)};
  for (const std::string& name : names) {
    for (const std::string& value : values) {
      for (size_t n = 0; n <= std::min<size_t>(value.size(), 80); ++n) {
        const RateLimitInfo info = parse_ratelimit_headers({{name, value.substr(0, n)}}, k_now);
        for (const std::string& line : info.problems)
          CHECK(line.size() < 200);
      }
    }
  }
  const RateLimitInfo huge = parse_ratelimit_headers({{"X-RateLimit-Limit", values[14]}}, k_now);
  CHECK_FALSE(huge.limit.has_value());
  REQUIRE(huge.problems.size() == 1);
  CHECK(huge.problems[0].find("too large") != std::string::npos);
}
