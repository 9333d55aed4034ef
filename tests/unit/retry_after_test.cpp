#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "http/retry_after.hpp"

using rlcheck::http::parse_http_date;
using rlcheck::http::parse_retry_after;
using rlcheck::http::RetryAfter;

namespace {

constexpr int64_t k_rfc_example = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT

struct Accepted {
  std::string value;
  int64_t reference;
  RetryAfter::Form form;
  int64_t seconds;
};

struct Rejected {
  std::string value;
  std::string reason;  // the error must contain this
};

struct DateCase {
  std::string value;
  std::optional<int64_t> unix_s;
};

}  // namespace

TEST_CASE("parse_retry_after reads delay-seconds and HTTP-dates") {
  using enum RetryAfter::Form;
  const std::vector<Accepted> cases{
      {"120", 0, delay_seconds, 120},
      {"0", 0, delay_seconds, 0},
      {"1", 1'700'000'000, delay_seconds, 1},  // the reference plays no part in a delay
      {"  30\t", 0, delay_seconds, 30},        // optional whitespace around the field value
      {"007", 0, delay_seconds, 7},            // 1*DIGIT allows leading zeros
      {"86400", 0, delay_seconds, 86400},
      {"999999999999999", 0, delay_seconds, 999'999'999'999'999},  // the largest accepted
      {"00000000000000000000000000042", 0, delay_seconds, 42},     // long but small
      // The three HTTP-date forms of RFC 9110's example, 60 s after the reference.
      {"Sun, 06 Nov 1994 08:49:37 GMT", k_rfc_example - 60, http_date, 60},
      {"Sunday, 06-Nov-94 08:49:37 GMT", k_rfc_example - 60, http_date, 60},
      {"Sun Nov  6 08:49:37 1994", k_rfc_example - 60, http_date, 60},
      {" Sun, 06 Nov 1994 08:49:37 GMT ", k_rfc_example, http_date, 0},
      // A date in the past means "now", however far back.
      {"Sun, 06 Nov 1994 08:49:37 GMT", k_rfc_example + 3600, http_date, 0},
      {"Thu, 01 Jan 1970 00:00:00 GMT", 1'700'000'000, http_date, 0},
      // A typical 503 from a real server, against its own Date header.
      {"Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 3600, http_date, 3600},
      {"Tue, 19 Jan 2038 03:14:08 GMT", 2147483648 - 5, http_date, 5},  // past 32-bit time_t
  };
  for (const Accepted& c : cases) {
    CAPTURE(c.value);
    auto parsed = parse_retry_after(c.value, c.reference);
    REQUIRE(parsed.has_value());
    CHECK(parsed->form == c.form);
    CHECK(parsed->seconds == c.seconds);
  }
}

TEST_CASE("parse_retry_after rejects what the grammar does not allow, saying why") {
  const std::vector<Rejected> cases{
      {"", "empty"},
      {" ", "empty"},
      {"\t \t", "empty"},
      {"1.5", "fraction '1.5'"},
      {".5", "fraction '.5'"},
      {"-1", "sign '-1'"},
      {"+3", "sign '+3'"},
      {"-0.5", "sign '-0.5'"},
      {"60s", "not a number or HTTP-date '60s'"},
      {"1e3", "not a number or HTTP-date '1e3'"},
      {"0x10", "not a number or HTTP-date '0x10'"},
      {"soon", "not a number or HTTP-date 'soon'"},
      {"1 2", "not a number or HTTP-date '1 2'"},
      {"120, 120", "not a number or HTTP-date '120, 120'"},  // duplicates folded by a proxy
      {"1.", "fraction '1.'"},
      {"-", "not a number or HTTP-date '-'"},
      {"1000000000000000", "too large '1000000000000000'"},
      {"99999999999999999999", "too large '99999999999999999999'"},
      {"9223372036854775808", "too large '9223372036854775808'"},  // int64 max + 1
      {"Sun, 06 Nov 1994 08:49:37 UTC", "not a number or HTTP-date"},
      {"2024-01-15T10:30:00Z", "not a number or HTTP-date"},  // ISO 8601 is not an HTTP-date
  };
  for (const Rejected& c : cases) {
    CAPTURE(c.value);
    auto parsed = parse_retry_after(c.value, k_rfc_example);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().find(c.reason) != std::string::npos);
  }
}

TEST_CASE("parse_retry_after keeps report lines short and printable") {
  const std::string garbage = std::string(500, 'x') + "\r\nX-Injected: 1";
  auto parsed = parse_retry_after(garbage, 0);
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().size() < 120);
  CHECK(parsed.error().find("...'") != std::string::npos);
  auto control = parse_retry_after("1\n2", 0);
  REQUIRE_FALSE(control.has_value());
  CHECK(control.error() == "not a number or HTTP-date '1?2'");
}

TEST_CASE("parse_retry_after survives extreme references") {
  // date - reference would overflow int64; the answer saturates instead.
  auto past = parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MAX);
  REQUIRE(past.has_value());
  CHECK(past->seconds == 0);
  auto future = parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MIN);
  REQUIRE(future.has_value());
  CHECK(future->seconds == INT64_MAX);
}

TEST_CASE("parse_http_date reads the three forms and validates every part") {
  const std::vector<DateCase> cases{
      {"Sun, 06 Nov 1994 08:49:37 GMT", k_rfc_example},
      {"Sunday, 06-Nov-94 08:49:37 GMT", k_rfc_example},
      {"Sun Nov  6 08:49:37 1994", k_rfc_example},
      {"Sun Nov 06 08:49:37 1994", k_rfc_example},  // asctime's day may be 2DIGIT
      {"Thu, 01 Jan 1970 00:00:00 GMT", 0},
      {"Mon, 01 Jan 1900 00:00:00 GMT", -2208988800},  // before the epoch
      {"Fri, 31 Dec 9999 23:59:59 GMT", 253402300799},
      {"Mon, 15 Jan 2024 10:30:00 GMT", 1705314600},
      // Leap years: 2024 and 2000 have 29 February, 2023 and 1900 do not.
      {"Thu, 29 Feb 2024 00:00:00 GMT", 1709164800},
      {"Tue, 29 Feb 2000 12:00:00 GMT", 951825600},
      {"Wed, 29 Feb 2023 00:00:00 GMT", std::nullopt},
      {"Thu, 29 Feb 1900 00:00:00 GMT", std::nullopt},
      {"Thu, 31 Apr 2024 00:00:00 GMT", std::nullopt},
      {"Thu, 00 Jan 2024 00:00:00 GMT", std::nullopt},
      {"Thu, 32 Jan 2024 00:00:00 GMT", std::nullopt},
      // A leap second is the next second.
      {"Sat, 31 Dec 2016 23:59:60 GMT", 1483228799 + 1},
      {"Sat, 31 Dec 2016 23:59:61 GMT", std::nullopt},
      {"Sat, 31 Dec 2016 24:00:00 GMT", std::nullopt},
      {"Sat, 31 Dec 2016 23:60:00 GMT", std::nullopt},
      // RFC 850 two-digit years pivot at 70.
      {"Friday, 31-Dec-99 23:59:59 GMT", 946684799},
      {"Thursday, 01-Jan-70 00:00:00 GMT", 0},
      {"Tuesday, 01-Jan-69 00:00:00 GMT", 3124224000},
      // Names, zone and layout are exact (HTTP-date is case-sensitive).
      {"sun, 06 Nov 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 06 nov 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 06 Nox 1994 08:49:37 GMT", std::nullopt},
      {"Sux, 06 Nov 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 06 Nov 1994 08:49:37 UTC", std::nullopt},
      {"Sun, 06 Nov 1994 08:49:37", std::nullopt},
      {"Sun 06 Nov 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 6 Nov 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 06 Nov 94 08:49:37 GMT", std::nullopt},
      {"Sun, 06 Nov 1994 8:49:37 GMT", std::nullopt},
      {"Sun, 06 Nov 1994 08:49:37 GMT junk", std::nullopt},
      {"Sun, 06-Nov-94 08:49:37 GMT", std::nullopt},       // RFC 850 wants the long day name
      {"Sunday, 06 Nov 1994 08:49:37 GMT", std::nullopt},  // and IMF-fixdate the short one
      {"Sun Nov  6 08:49:37 1994 GMT", std::nullopt},
      {"Sun Nov 6 08:49:37 1994", std::nullopt},
      {"", std::nullopt},
      {"Sun, ", std::nullopt},
      {"Sun, 06 Nov 1994 08:49:3", std::nullopt},
  };
  for (const DateCase& c : cases) {
    CAPTURE(c.value);
    CHECK(parse_http_date(c.value) == c.unix_s);
  }
}

TEST_CASE("parse_http_date accepts surrounding whitespace, as a Date header may carry it") {
  CHECK(parse_http_date("\t Sun, 06 Nov 1994 08:49:37 GMT  ") == k_rfc_example);
  CHECK_FALSE(parse_http_date("Sun,  06 Nov 1994 08:49:37 GMT").has_value());
}
