#include "config/contract_spec.hpp"

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

constexpr std::array<std::string_view, 7> k_contracts{
    "sliding", "fixed", "sliding-counter", "token-bucket", "gcra", "queue", "concurrency"};

// How a contract's parameters are written, for errors.
std::string_view example_of(std::string_view name) {
  if (name == "fixed")
    return "fixed:100/1m or fixed:1000/1d@first-hit";
  if (name == "sliding-counter")
    return "sliding-counter:50/1m";
  if (name == "token-bucket")
    return "token-bucket:20,10/s (burst, refill)";
  if (name == "gcra")
    return "gcra:20,10/s (burst, refill)";
  if (name == "queue")
    return "queue:5/s,10 (rate, depth)";
  if (name == "concurrency")
    return "concurrency:2 (requests in progress at once)";
  return "sliding:10/1s";
}

std::optional<int64_t> whole_number(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

// "L/DUR", with an anchor after '@' for windows that have one.
std::expected<void, std::string> read_window(ContractSpec& spec, std::string_view params) {
  if (const size_t at = params.find('@'); at != std::string_view::npos) {
    const std::string_view anchor = params.substr(at + 1);
    if (anchor != "clock" && anchor != "first-hit")
      return std::unexpected(fmt::format("anchor '@{}': expected @clock or @first-hit", anchor));
    if (spec.name == "sliding")
      return std::unexpected("a sliding window has no anchor");
    spec.anchor = std::string(anchor);
    params = params.substr(0, at);
  }
  const auto rate = parse_rate(params);
  if (!rate || rate->tokens < 1)
    return std::unexpected("needs a limit and a window");
  spec.limit = rate->tokens;
  spec.window = rate->period;
  return {};
}

// "B,RATE" for a bucket, "RATE,B" for a queue.
std::expected<void, std::string> read_bucket(ContractSpec& spec, std::string_view params) {
  const size_t comma = params.find(',');
  if (comma == std::string_view::npos)
    return std::unexpected(spec.name == "queue" ? "needs a rate and a depth"
                                                : "needs a burst and a refill");
  const bool queue = spec.name == "queue";
  const std::string_view count_text = queue ? params.substr(comma + 1) : params.substr(0, comma);
  const std::string_view rate_text = queue ? params.substr(0, comma) : params.substr(comma + 1);
  const auto count = whole_number(count_text);
  // Only a token bucket may refill in steps: "token-bucket:20,5/1s,steps".
  const auto rate = spec.name == "token-bucket" ? parse_refill(rate_text) : parse_rate(rate_text);
  if (!count || (!queue && *count < 1))
    return std::unexpected(fmt::format("'{}' is not a {}", count_text,
                                       queue ? "depth (0 or more)" : "burst (1 or more)"));
  if (!rate || rate->tokens < 1)
    return std::unexpected(fmt::format("'{}' is not a rate", rate_text));
  (queue ? spec.queue : spec.burst) = *count;
  spec.refill = *rate;
  return {};
}

// "[KIND:]L/W[@ANCHOR],B[,renew]" after "ban:": the window's kind defaults to sliding.
std::expected<ContractSpec, std::string> parse_ban_spec(ContractSpec spec, std::string_view text) {
  const auto fail = [&](std::string_view why) {
    return std::unexpected(fmt::format(
        "'{}': {}; e.g. ban:5/10s,60s, ban:fixed:5/10s,60s or ban:sliding:5/10s,60s,renew",
        spec.text, why));
  };
  spec.name = "sliding";
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    spec.name = std::string(text.substr(0, colon));
    text.remove_prefix(colon + 1);
    if (spec.name != "sliding" && spec.name != "fixed")
      return fail(fmt::format("a ban's window is sliding or fixed, not '{}'", spec.name));
  }
  if (text.ends_with(",renew")) {
    spec.ban_renews = true;
    text.remove_suffix(6);
  }
  const size_t comma = text.rfind(',');
  if (comma == std::string_view::npos)
    return fail("needs a limit, a window and how long the ban lasts");
  const auto ban = parse_duration(text.substr(comma + 1));
  if (!ban || ban->count() <= 0)
    return fail(fmt::format("'{}' is not a duration", text.substr(comma + 1)));
  spec.ban = *ban;
  if (const auto read = read_window(spec, text.substr(0, comma)); !read)
    return fail(read.error());
  if (spec.anchor == "first-hit")
    return fail("a ban's fixed windows are on the clock (@first-hit is not audited)");
  if (spec.name == "fixed")
    spec.anchor = "clock";
  return spec;
}

// "C": at most C in progress at once.
std::expected<void, std::string> read_cap(ContractSpec& spec, std::string_view params) {
  const auto cap = whole_number(params);
  if (!cap || *cap < 1)
    return std::unexpected(fmt::format("'{}' is not a cap (1 or more)", params));
  spec.limit = *cap;
  return {};
}

}  // namespace

bool known_contract(std::string_view name) {
  for (const std::string_view known : k_contracts) {
    if (name == known)
      return true;
  }
  return false;
}

std::expected<ContractSpec, std::string> parse_contract_spec(std::string_view text) {
  ContractSpec spec;
  spec.text = std::string(text);
  for (bool prefixed = true; prefixed;) {
    prefixed = false;
    if (text.starts_with("group:") && !spec.per_group) {
      spec.per_group = prefixed = true;
      text.remove_prefix(6);
    }
    if (text.starts_with("requests:") && !spec.counts_requests) {
      spec.counts_requests = prefixed = true;
      text.remove_prefix(9);
    }
  }
  if (text.starts_with("ban:")) {
    if (spec.per_group || spec.counts_requests)
      return std::unexpected(
          fmt::format("'{}': a ban is per identity and counts requests", spec.text));
    return parse_ban_spec(std::move(spec), text.substr(4));
  }
  const size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (!known_contract(spec.name)) {
    return std::unexpected(fmt::format(
        "'{}': expected sliding, fixed, sliding-counter, token-bucket, gcra, queue, concurrency "
        "or ban{}",
        spec.text, colon == std::string_view::npos ? "" : ", then ':' and its parameters"));
  }
  if (colon == std::string_view::npos)
    return spec;
  const std::string_view params = text.substr(colon + 1);
  const bool windowed =
      spec.name == "sliding" || spec.name == "fixed" || spec.name == "sliding-counter";
  const auto read = windowed                     ? read_window(spec, params)
                    : spec.name == "concurrency" ? read_cap(spec, params)
                                                 : read_bucket(spec, params);
  if (!read) {
    return std::unexpected(
        fmt::format("'{}': {}; e.g. {}", spec.text, read.error(), example_of(spec.name)));
  }
  return spec;
}

}  // namespace rlcheck::config
