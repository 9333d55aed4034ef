#include "http/ratelimit_headers.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <expected>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "http/field_text.hpp"

namespace rlcheck::http {
namespace {

// RFC 8941's integer limit; no real limit, count or delay comes near it.
constexpr int64_t k_max_count = 999'999'999'999'999;
// An X-RateLimit-Reset above this is a Unix timestamp (2001-09-09), not a delay of 31 years.
constexpr int64_t k_timestamp_floor = 1'000'000'000;
// ...and one above this (year 5138) is most likely in milliseconds.
constexpr int64_t k_timestamp_ceiling = 100'000'000'000;

enum Field : size_t {
  x_limit,
  x_remaining,
  x_reset,
  d6_limit,
  d6_remaining,
  d6_reset,
  ratelimit,
  policy,
  k_field_count
};
constexpr std::array<std::string_view, k_field_count> k_field_names{
    "X-RateLimit-Limit",   "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Limit",
    "RateLimit-Remaining", "RateLimit-Reset",       "RateLimit",         "RateLimit-Policy"};

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// ---- The part of RFC 8941 these fields use: Lists and Dictionaries of Items with Parameters.
// Structure is checked strictly; numbers are kept as written so that "too large", "negative"
// and "fraction" can be told apart later rather than all failing as bad syntax. Whitespace
// around ';' is tolerated, as servers emit "10; w=60".

struct Item {
  enum class Kind { integer, decimal, string, token, boolean, bytes };
  Kind kind = Kind::token;
  std::string text;  // a number as written, a string unescaped, a token as is
};

struct Member {
  std::string key;  // dictionary key, lowercased; empty for a list member
  Item value;
  std::vector<std::pair<std::string, Item>> params;

  const Item* param(std::string_view name) const {
    for (const auto& [key, item] : params) {
      if (key == name)
        return &item;
    }
    return nullptr;
  }
};

class SfParser {
 public:
  explicit SfParser(std::string_view text) : text_(text) {}

  std::expected<std::vector<Member>, std::string> members() {
    std::vector<Member> out;
    for (take_while(is_ows); !at_end();) {
      Member& member = out.emplace_back();
      auto item = bare_item();
      if (item && item->kind == Item::Kind::token && accept('=')) {
        std::ranges::transform(item->text, std::back_inserter(member.key), to_lower);
        item = bare_item();
      }
      if (!item)
        return fail();
      member.value = std::move(*item);
      for (take_while(is_ows); accept(';'); take_while(is_ows)) {
        take_while(is_ows);
        std::string key(take_while([](char c) { return is_alpha(c) || c == '*'; }));
        key +=
            take_while([](char c) { return is_alpha(c) || is_digit(c) || is_one_of(c, "_-.*"); });
        std::ranges::transform(key, key.begin(), to_lower);
        auto value = accept('=') ? bare_item() : Item{Item::Kind::boolean, "1"};
        if (key.empty() || !value)
          return fail();
        member.params.emplace_back(std::move(key), std::move(*value));
      }
      if (!at_end() && (!accept(',') || (take_while(is_ows), at_end())))
        return fail();  // junk after a member, or a trailing comma
    }
    return out;
  }

 private:
  static bool is_one_of(char c, std::string_view set) { return c != '\0' && set.contains(c); }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool accept(char c) { return peek() == c && ++pos_; }
  std::string_view take_while(auto pred) {
    const size_t start = pos_;
    while (!at_end() && pred(text_[pos_]))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::unexpected<std::string> fail() const {
    return std::unexpected(
        fmt::format("unreadable at character {} of {}", pos_ + 1, quoted(text_)));
  }

  std::optional<Item> bare_item() {
    const size_t start = pos_;
    if (accept('"')) {
      Item item{Item::Kind::string, ""};
      bool closed = false;
      while (!at_end() && !(closed = accept('"'))) {
        const char c = text_[pos_++];
        if (c == '\\' && (accept('"') || accept('\\')))
          item.text.push_back(text_[pos_ - 1]);
        else if (c == '\\' || c < 0x20 || c == 0x7f)
          return std::nullopt;  // a bad escape, a control byte or non-ASCII
        else
          item.text.push_back(c);
      }
      return closed ? std::optional(item) : std::nullopt;
    }
    if (accept('-') || is_digit(peek())) {
      Item::Kind kind = Item::Kind::integer;
      if (take_while(is_digit).empty())
        return std::nullopt;
      if (accept('.') && (kind = Item::Kind::decimal, take_while(is_digit).empty()))
        return std::nullopt;
      return Item{kind, std::string(text_.substr(start, pos_ - start))};
    }
    if (is_alpha(peek()) || accept('*')) {
      take_while(
          [](char c) { return is_alpha(c) || is_digit(c) || is_one_of(c, "!#$%&'*+-.^_`|~:/"); });
      return Item{Item::Kind::token, std::string(text_.substr(start, pos_ - start))};
    }
    if (accept('?')) {
      const char c = peek();
      return accept('0') || accept('1')
                 ? std::optional(Item{Item::Kind::boolean, std::string(1, c)})
                 : std::nullopt;
    }
    if (accept(':')) {
      const std::string_view bytes = take_while([](char c) { return c != ':'; });
      return accept(':') ? std::optional(Item{Item::Kind::bytes, std::string(bytes)})
                         : std::nullopt;
    }
    return std::nullopt;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ---- Numbers: what each field carries is a non-negative integer.

std::expected<int64_t, std::string> count_of(const Item& item) {
  switch (item.kind) {
    case Item::Kind::integer: {
      if (item.text.starts_with('-'))
        return std::unexpected(fmt::format("negative {}", quoted(item.text)));
      int64_t value = 0;
      auto [end, ec] =
          std::from_chars(item.text.data(), item.text.data() + item.text.size(), value);
      if (ec != std::errc() || value > k_max_count)
        return std::unexpected(fmt::format("too large {}", quoted(item.text)));
      return value;
    }
    case Item::Kind::decimal:
      return std::unexpected(fmt::format("fraction {}", quoted(item.text)));
    default:
      return std::unexpected(fmt::format("not a number {}", quoted(item.text)));
  }
}

// A field whose whole value is one integer ("42").
std::expected<int64_t, std::string> plain_count(std::string_view text) {
  if (text.empty())
    return std::unexpected("empty");
  auto members = SfParser(text).members();
  if (!members || members->size() != 1 || !members->front().key.empty() ||
      !members->front().params.empty())
    return std::unexpected(fmt::format("not a number {}", quoted(text)));
  return count_of(members->front().value);
}

int64_t seconds_until(int64_t target, int64_t now) {
  int64_t delta = 0;
  if (__builtin_sub_overflow(target, now, &delta))
    return now < 0 ? std::numeric_limits<int64_t>::max() : 0;
  return std::max<int64_t>(delta, 0);
}

// What one form of the fields says.
struct FormValues {
  std::optional<int64_t> limit;
  std::optional<int64_t> remaining;
  std::optional<int64_t> reset;
  std::optional<int64_t> window;
  std::vector<RateLimitPolicy> policies;
  bool reset_from_timestamp = false;  // x-ratelimit: the reset was a Unix timestamp

  bool understood() const { return limit || remaining || reset || window || !policies.empty(); }

  // The draft-6/7 reading of policies: the window of the policy matching the limit.
  void apply_policies() {
    if (policies.empty())
      return;
    if (!limit)
      limit = policies.front().quota;
    auto match = std::ranges::find(policies, limit, &RateLimitPolicy::quota);
    window = (match != policies.end() ? *match : policies.front()).window_s;
  }
};

class Reader {
 public:
  Reader(const HeaderList& headers, int64_t now) : now_(now) {
    for (const auto& [raw_name, raw_value] : headers) {
      const std::string_view name = trim_ows(raw_name);
      for (size_t f = 0; f < k_field_count; ++f) {
        if (!iequals(name, k_field_names[f]))
          continue;
        auto& values = values_[f];
        const std::string_view value = trim_ows(raw_value);
        if (std::ranges::find(values, value) == values.end())
          values.emplace_back(value);
      }
    }
  }

  RateLimitInfo read();

 private:
  void problem(Field field, std::string_view reason) {
    problems_.push_back(fmt::format("{}: {}", k_field_names[field], reason));
  }

  // The value of a single-valued field; a second, different one is reported and ignored.
  std::optional<std::string_view> single(Field field) {
    const auto& values = values_[field];
    for (size_t i = 1; i < values.size(); ++i)
      problem(field, fmt::format("repeated with a different value {} (kept {})", quoted(values[i]),
                                 quoted(values[0])));
    return values.empty() ? std::nullopt : std::optional<std::string_view>(values[0]);
  }

  std::optional<int64_t> checked(Field field, std::expected<int64_t, std::string> count,
                                 std::string_view what = "") {
    if (!count)
      problem(field, fmt::format("{}{}", what, count.error()));
    return count ? std::optional(*count) : std::nullopt;
  }

  std::optional<int64_t> plain(Field field) {
    auto value = single(field);
    return value ? checked(field, plain_count(*value)) : std::nullopt;
  }

  // Draft resets are delta seconds; a timestamp there is a server bug worth naming.
  std::optional<int64_t> delta_reset(Field field, std::optional<int64_t> reset) {
    if (reset && *reset > k_timestamp_floor) {
      problem(field, fmt::format("reset {} looks like a Unix timestamp, not a delta", *reset));
      return std::nullopt;
    }
    return reset;
  }

  std::vector<Member> members(Field field, std::string_view value) {
    auto parsed = value.empty() ? std::unexpected("empty") : SfParser(value).members();
    if (!parsed)
      problem(field, parsed.error());
    return std::move(parsed).value_or(std::vector<Member>{});
  }

  RateLimitPolicy numeric_policy(Field field, const Member& member) {
    RateLimitPolicy out;
    out.quota = checked(field, count_of(member.value), "policy quota: ");
    const Item* window = member.param("w") ? member.param("w") : member.param("window");
    if (window)
      out.window_s = checked(field, count_of(*window), "policy w: ");
    return out;
  }

  FormValues read_x_ratelimit();
  FormValues read_draft6();
  bool read_ratelimit(FormValues& draft7, FormValues& ietf, std::string& ietf_name);
  void read_policies(FormValues& numeric, FormValues& ietf);

  int64_t now_;
  std::array<std::vector<std::string>, k_field_count> values_;
  std::vector<std::string> problems_;
};

FormValues Reader::read_x_ratelimit() {
  FormValues x;
  x.limit = plain(x_limit);
  x.remaining = plain(x_remaining);
  if (auto reset = plain(x_reset)) {
    if (*reset > k_timestamp_ceiling) {
      problem(x_reset, fmt::format("timestamp {} is past the year 5000 (milliseconds?)", *reset));
    } else {
      x.reset_from_timestamp = *reset > k_timestamp_floor;
      x.reset = x.reset_from_timestamp ? seconds_until(*reset, now_) : *reset;
    }
  }
  return x;
}

FormValues Reader::read_draft6() {
  FormValues d6;
  // "10, 10;w=60": the limit, then the quota policies behind it.
  const auto value = single(d6_limit);
  const std::vector<Member> list = value ? members(d6_limit, *value) : std::vector<Member>{};
  for (size_t i = 0; i < list.size(); ++i) {
    if (i == 0)
      d6.limit = checked(d6_limit, count_of(list[i].value));
    if (i > 0 || !list[i].params.empty())
      d6.policies.push_back(numeric_policy(d6_limit, list[i]));
  }
  d6.remaining = plain(d6_remaining);
  d6.reset = delta_reset(d6_reset, plain(d6_reset));
  return d6;
}

bool Reader::read_ratelimit(FormValues& draft7, FormValues& ietf, std::string& ietf_name) {
  const auto& values = values_[ratelimit];
  std::vector<Member> list = values.empty() ? std::vector<Member>{} : members(ratelimit, values[0]);
  if (std::ranges::any_of(list, [](const Member& m) { return !m.key.empty(); })) {
    // draft-7 dictionary: "limit=10, remaining=9, reset=50"; single-valued.
    single(ratelimit);
    for (const Member& m : list) {
      std::optional<int64_t>* slot = m.key == "limit"       ? &draft7.limit
                                     : m.key == "remaining" ? &draft7.remaining
                                     : m.key == "reset"     ? &draft7.reset
                                                            : nullptr;
      if (m.key.empty())
        problem(ratelimit, fmt::format("{} is not a key=value member", quoted(m.value.text)));
      else if (slot)
        *slot = checked(ratelimit, count_of(m.value), m.key + ": ");
    }
    draft7.reset = delta_reset(ratelimit, draft7.reset);
    return true;
  }
  // ietf list: one member per policy, and repeated fields add members.
  for (size_t i = 1; i < values.size(); ++i)
    std::ranges::move(members(ratelimit, values[i]), std::back_inserter(list));
  bool chosen = false;
  for (const Member& m : list) {
    if (m.value.kind != Item::Kind::string && m.value.kind != Item::Kind::token) {
      problem(ratelimit, fmt::format("{} is not a policy name", quoted(m.value.text)));
      continue;
    }
    const std::string what = fmt::format("\"{}\" ", m.value.text);
    const Item* r = m.param("r");
    const Item* t = m.param("t");
    auto remaining = r ? checked(ratelimit, count_of(*r), what + "r: ") : std::nullopt;
    if (!r)
      problem(ratelimit, what + "has no r");
    auto reset =
        t ? delta_reset(ratelimit, checked(ratelimit, count_of(*t), what + "t: ")) : std::nullopt;
    // The policy in force is the one that will refuse first.
    if (!chosen || (remaining && (!ietf.remaining || *remaining < *ietf.remaining))) {
      chosen = true;
      ietf_name = m.value.text;
      ietf.remaining = remaining;
      ietf.reset = reset;
    }
  }
  return false;
}

void Reader::read_policies(FormValues& numeric, FormValues& ietf) {
  for (const std::string& value : values_[policy]) {
    for (const Member& m : members(policy, value)) {
      const Item::Kind kind = m.value.kind;
      if (!m.key.empty()) {
        problem(policy, fmt::format("{} is not a policy", quoted(m.key)));
      } else if (kind == Item::Kind::integer || kind == Item::Kind::decimal) {
        numeric.policies.push_back(numeric_policy(policy, m));
      } else if (kind == Item::Kind::string || kind == Item::Kind::token) {
        const std::string what = fmt::format("\"{}\" ", m.value.text);
        RateLimitPolicy p{m.value.text, std::nullopt, std::nullopt};
        const Item* q = m.param("q");
        const Item* w = m.param("w");
        if (!q)
          problem(policy, what + "has no q");
        p.quota = q ? checked(policy, count_of(*q), what + "q: ") : std::nullopt;
        p.window_s = w ? checked(policy, count_of(*w), what + "w: ") : std::nullopt;
        auto same = std::ranges::find(ietf.policies, p.name, &RateLimitPolicy::name);
        if (same == ietf.policies.end())
          ietf.policies.push_back(std::move(p));
        else if (same->quota != p.quota || same->window_s != p.window_s)
          problem(policy, fmt::format("{}defined twice (first kept)", what));
      } else {
        problem(policy, fmt::format("{} is not a policy", quoted(m.value.text)));
      }
    }
  }
}

RateLimitInfo Reader::read() {
  FormValues x = read_x_ratelimit();
  FormValues d6 = read_draft6();
  FormValues d7;
  FormValues ietf;
  std::string ietf_name;
  const bool ratelimit_is_draft7 = read_ratelimit(d7, ietf, ietf_name);
  read_policies(ratelimit_is_draft7 ? d7 : d6, ietf);
  d6.apply_policies();
  d7.apply_policies();
  if (!ietf.policies.empty()) {
    auto named = std::ranges::find(ietf.policies, ietf_name, &RateLimitPolicy::name);
    if (named == ietf.policies.end()) {
      if (!ietf_name.empty())
        problem(ratelimit, fmt::format("names policy \"{}\" that RateLimit-Policy does not define",
                                       ietf_name));
      named = ietf.policies.begin();
    }
    ietf.limit = named->quota;
    ietf.window = named->window_s;
  }

  RateLimitInfo info;
  const std::array<std::pair<std::string_view, const FormValues*>, 4> forms{
      {{"ietf", &ietf}, {"draft-7", &d7}, {"draft-6", &d6}, {"x-ratelimit", &x}}};
  for (const auto& [name, form] : forms) {
    if (info.source.empty() && form->understood())
      info.source = name;
    for (const RateLimitPolicy& p : form->policies) {
      const bool known = std::ranges::any_of(info.policies, [&](const RateLimitPolicy& q) {
        return q.name == p.name && q.quota == p.quota && q.window_s == p.window_s;
      });
      if (!known)
        info.policies.push_back(p);
    }
  }
  // Each value from the best form that has it; any other form that disagrees is reported.
  auto pick = [&](std::optional<int64_t> FormValues::*member, std::string_view label,
                  int64_t tolerance) {
    std::optional<int64_t> chosen;
    std::string_view chosen_from;
    for (const auto& [name, form] : forms) {
      const std::optional<int64_t>& value = form->*member;
      if (value && !chosen) {
        chosen = value;
        chosen_from = name;
      } else if (value && std::abs(*value - *chosen) > tolerance) {
        problems_.push_back(fmt::format("{}: {} says {} but {} says {}", label, chosen_from,
                                        *chosen, name, *value));
      }
    }
    return chosen;
  };
  info.limit = pick(&FormValues::limit, "limit", 0);
  info.remaining = pick(&FormValues::remaining, "remaining", 0);
  info.reset_s = pick(&FormValues::reset, "reset", x.reset_from_timestamp ? 2 : 1);
  info.reset_from_timestamp =
      info.reset_s && !ietf.reset && !d7.reset && !d6.reset && x.reset_from_timestamp;
  info.window_s = pick(&FormValues::window, "window", 0);
  if (info.limit && info.remaining && *info.remaining > *info.limit)
    problems_.push_back(
        fmt::format("remaining {} is above the limit {}", *info.remaining, *info.limit));
  info.problems = std::move(problems_);
  return info;
}

}  // namespace

bool RateLimitInfo::any() const {
  return limit || remaining || reset_s || window_s || !policies.empty();
}

RateLimitInfo parse_ratelimit_headers(const HeaderList& headers, int64_t reference_unix_s) {
  return Reader(headers, reference_unix_s).read();
}

}  // namespace rlcheck::http
