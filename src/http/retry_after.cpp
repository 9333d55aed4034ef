#include "http/retry_after.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "http/field_text.hpp"

namespace rlcheck::http {
namespace {

// RFC 8941's integer limit: any real delay is far below it, and it keeps a caller's
// seconds-to-milliseconds conversion away from int64 overflow.
constexpr int64_t k_max_delay_s = 999'999'999'999'999;

constexpr std::array<std::string_view, 7> k_day_names{"Mon", "Tue", "Wed", "Thu",
                                                      "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> k_long_day_names{
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> k_month_names{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Reads the fixed-layout date forms left to right; every step fails softly.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool literal(std::string_view expected) {
    if (!text_.substr(pos_).starts_with(expected))
      return false;
    pos_ += expected.size();
    return true;
  }

  // Exactly `count` digits.
  std::optional<int> digits(size_t count) {
    if (pos_ + count > text_.size())
      return std::nullopt;
    int value = 0;
    for (size_t i = 0; i < count; ++i) {
      const char c = text_[pos_ + i];
      if (!is_digit(c))
        return std::nullopt;
      value = value * 10 + (c - '0');
    }
    pos_ += count;
    return value;
  }

  // Index of the name at the cursor. Names within one table never prefix each other.
  template <size_t N>
  std::optional<int> one_of(const std::array<std::string_view, N>& names) {
    for (size_t i = 0; i < N; ++i) {
      if (literal(names[i]))
        return static_cast<int>(i);
    }
    return std::nullopt;
  }

  bool done() const { return pos_ == text_.size(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct Civil {
  int year = 0;
  int month = 0;  // 1-12
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  constexpr std::array<int, 12> k_days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : k_days[static_cast<size_t>(month - 1)];
}

// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil);
// no timegm, which depends on the C library and on time_t's width.
int64_t days_from_civil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

std::optional<int64_t> to_unix(const Civil& t) {
  if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > days_in_month(t.year, t.month) ||
      t.hour > 23 || t.minute > 59 || t.second > 60) {
    return std::nullopt;
  }
  return days_from_civil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}

// time-of-day = hour ":" minute ":" second, two digits each.
bool read_time(Cursor& in, Civil& t) {
  auto hour = in.digits(2);
  if (!hour || !in.literal(":"))
    return false;
  auto minute = in.digits(2);
  if (!minute || !in.literal(":"))
    return false;
  auto second = in.digits(2);
  if (!second)
    return false;
  t.hour = *hour;
  t.minute = *minute;
  t.second = *second;
  return true;
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<int64_t> parse_imf_fixdate(std::string_view text) {
  Cursor in(text);
  Civil t;
  if (!in.one_of(k_day_names) || !in.literal(", "))
    return std::nullopt;
  auto day = in.digits(2);
  if (!day || !in.literal(" "))
    return std::nullopt;
  auto month = in.one_of(k_month_names);
  if (!month || !in.literal(" "))
    return std::nullopt;
  auto year = in.digits(4);
  if (!year || !in.literal(" ") || !read_time(in, t) || !in.literal(" GMT") || !in.done())
    return std::nullopt;
  t.day = *day;
  t.month = *month + 1;
  t.year = *year;
  return to_unix(t);
}

// "Sunday, 06-Nov-94 08:49:37 GMT"
std::optional<int64_t> parse_rfc850(std::string_view text) {
  Cursor in(text);
  Civil t;
  if (!in.one_of(k_long_day_names) || !in.literal(", "))
    return std::nullopt;
  auto day = in.digits(2);
  if (!day || !in.literal("-"))
    return std::nullopt;
  auto month = in.one_of(k_month_names);
  if (!month || !in.literal("-"))
    return std::nullopt;
  auto year = in.digits(2);
  if (!year || !in.literal(" ") || !read_time(in, t) || !in.literal(" GMT") || !in.done())
    return std::nullopt;
  t.day = *day;
  t.month = *month + 1;
  t.year = *year + (*year >= 70 ? 1900 : 2000);  // fixed pivot; see the header
  return to_unix(t);
}

// "Sun Nov  6 08:49:37 1994": the day is two digits or a space and one digit.
std::optional<int64_t> parse_asctime(std::string_view text) {
  Cursor in(text);
  Civil t;
  if (!in.one_of(k_day_names) || !in.literal(" "))
    return std::nullopt;
  auto month = in.one_of(k_month_names);
  if (!month || !in.literal(" "))
    return std::nullopt;
  auto day = in.literal(" ") ? in.digits(1) : in.digits(2);
  if (!day || !in.literal(" ") || !read_time(in, t) || !in.literal(" "))
    return std::nullopt;
  auto year = in.digits(4);
  if (!year || !in.done())
    return std::nullopt;
  t.day = *day;
  t.month = *month + 1;
  t.year = *year;
  return to_unix(t);
}

// target - now, floored at 0 and safe for any reference the caller passes.
int64_t seconds_until(int64_t target, int64_t now) {
  int64_t delta = 0;
  if (__builtin_sub_overflow(target, now, &delta))
    return now < 0 ? std::numeric_limits<int64_t>::max() : 0;
  return std::max<int64_t>(delta, 0);
}

}  // namespace

std::optional<int64_t> parse_http_date(std::string_view value) {
  const std::string_view text = trim_ows(value);
  if (auto t = parse_imf_fixdate(text))
    return t;
  if (auto t = parse_rfc850(text))
    return t;
  return parse_asctime(text);
}

std::expected<RetryAfter, std::string> parse_retry_after(std::string_view value,
                                                         int64_t reference_unix_s) {
  const std::string_view text = trim_ows(value);
  if (text.empty())
    return std::unexpected("empty");

  if (std::all_of(text.begin(), text.end(), is_digit)) {
    int64_t seconds = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size() || seconds > k_max_delay_s)
      return std::unexpected(fmt::format("too large {}", quoted(text)));
    return RetryAfter{RetryAfter::Form::delay_seconds, seconds};
  }
  if (auto date = parse_http_date(text))
    return RetryAfter{RetryAfter::Form::http_date, seconds_until(*date, reference_unix_s)};

  // Name the near misses of delay-seconds, which a reader fixes differently from garbage.
  const bool has_sign = text.front() == '-' || text.front() == '+';
  const std::string_view unsigned_part = has_sign ? text.substr(1) : text;
  const auto dot = unsigned_part.find('.');
  const bool numeric = !unsigned_part.empty() &&
                       std::all_of(unsigned_part.begin(), unsigned_part.end(),
                                   [](char c) { return is_digit(c) || c == '.'; }) &&
                       std::count(unsigned_part.begin(), unsigned_part.end(), '.') <= 1 &&
                       unsigned_part.size() > (dot == std::string_view::npos ? 0u : 1u);
  if (numeric && has_sign)
    return std::unexpected(fmt::format("sign {}", quoted(text)));
  if (numeric)
    return std::unexpected(fmt::format("fraction {}", quoted(text)));
  return std::unexpected(fmt::format("not a number or HTTP-date {}", quoted(text)));
}

}  // namespace rlcheck::http
