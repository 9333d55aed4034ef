#pragma once
// Retry-After (RFC 9110 section 10.2.3) and HTTP-dates (section 5.6.7), as a 429 or 503 response
// carries them. Pure parsing: the caller supplies "now" so results do not depend on the clock.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace rlcheck::http {

struct RetryAfter {
  enum class Form { delay_seconds, http_date };
  Form form = Form::delay_seconds;
  int64_t seconds = 0;  // the delay; for an HTTP-date, date - reference, floored at 0 (a date in
                        // the past means "now")
};

// One Retry-After field value: delay-seconds = 1*DIGIT, or an HTTP-date in any of its three
// forms. Whitespace around the value is ignored; anything else that is not in the grammar is an
// error ("1.5", "-1", "+3", "60s", "1e3"). A delay above 10^15 seconds (the largest integer of
// RFC 8941, and far beyond any real retry) is rejected as too large. `reference_unix_s` is the
// response's Date header, or the local clock, in Unix seconds.
// On error: a short reason for a report line, e.g. "fraction '1.5'", "sign '-1'", "empty",
// "not a number or HTTP-date 'soon'", "too large '99999999999999999999'". The quoted text is
// cut at 64 characters and its control bytes shown as '?'.
std::expected<RetryAfter, std::string> parse_retry_after(std::string_view value,
                                                         int64_t reference_unix_s);

// An HTTP-date as Unix seconds (also for the Date header), or nullopt when it is not one:
//   IMF-fixdate  "Sun, 06 Nov 1994 08:49:37 GMT"
//   RFC 850      "Sunday, 06-Nov-94 08:49:37 GMT"
//   asctime      "Sun Nov  6 08:49:37 1994"
// Names are case-sensitive as RFC 9110 says; the day must exist in its month (leap years
// included), hour 0-23, minute 0-59, second 0-60 (a leap second counts as the next second).
// The weekday name must be a valid one but is not checked against the date: recipients only
// need the date, and a server with a wrong weekday still means that date.
// RFC 850 two-digit years use a fixed pivot, not the RFC 9110 "50 years in the future" rule,
// because there is no reference date here: 70-99 are 19xx, 00-69 are 20xx. The form is obsolete;
// the pivot stays right until 2070.
// Surrounding whitespace is ignored.
std::optional<int64_t> parse_http_date(std::string_view value);

}  // namespace rlcheck::http
