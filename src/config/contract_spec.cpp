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
    return "queue:5/s,10 (rate, depth) or queue:5/s,10,nodelay=4";
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

// "B,RATE" for a bucket, "RATE,B[,nodelay=K]" for a queue.
std::expected<void, std::string> read_bucket(ContractSpec& spec, std::string_view params) {
  if (const size_t at = params.find(",nodelay="); at != std::string_view::npos) {
    if (spec.name != "queue")
      return std::unexpected("only a queue has an undelayed part (nodelay=K)");
    const std::string_view text = params.substr(at + 9);
    const auto nodelay = whole_number(text);
    if (!nodelay)
      return std::unexpected(fmt::format("'{}' is not a count of undelayed requests", text));
    spec.nodelay = *nodelay;
    params = params.substr(0, at);
  }
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
  if (spec.nodelay && *spec.nodelay > *count) {
    return std::unexpected(
        fmt::format("nodelay={} is more than the queue's depth {}", *spec.nodelay, *count));
  }
  return {};
}

// "[KIND:]N/W,D[,MAX]" after "slow-down:": the window's kind defaults to sliding.
std::expected<ContractSpec, std::string> parse_slow_down_spec(ContractSpec spec,
                                                              std::string_view text) {
  const auto fail = [&](std::string_view why) {
    return std::unexpected(
        fmt::format("'{}': {}; e.g. slow-down:5/10s,100ms, slow-down:first-hit:5/10s,100ms,2s",
                    spec.text, why));
  };
  SlowDown slow;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    slow.kind = std::string(text.substr(0, colon));
    text.remove_prefix(colon + 1);
    if (slow.kind != "sliding" && slow.kind != "fixed" && slow.kind != "first-hit") {
      return fail(
          fmt::format("a slow-down's window is sliding, fixed or first-hit, not '{}'", slow.kind));
    }
  }
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos)
    return fail("needs how many pass at full speed, a window and the delay added per request");
  const auto rate = parse_rate(text.substr(0, comma));
  if (!rate || rate->tokens < 0)
    return fail(fmt::format("'{}' is not a count and a window", text.substr(0, comma)));
  slow.after = rate->tokens;
  slow.window = rate->period;
  std::string_view rest = text.substr(comma + 1);
  const size_t second = rest.find(',');
  const std::string_view step_text = rest.substr(0, second);
  const auto step = parse_duration(step_text);
  if (!step || step->count() <= 0)
    return fail(fmt::format("'{}' is not a delay", step_text));
  slow.step = *step;
  if (second != std::string_view::npos) {
    const std::string_view max_text = rest.substr(second + 1);
    const auto max = parse_duration(max_text);
    if (!max || max->count() <= 0)
      return fail(fmt::format("'{}' is not a longest delay", max_text));
    slow.max = *max;
  }
  spec.name = "slow-down";
  spec.limit = slow.after;
  spec.window = slow.window;
  spec.slow_down = std::move(slow);
  return spec;
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

std::string format_slow_down(const SlowDown& slow) {
  return fmt::format("slow-down:{}{}/{},{}{}", slow.kind == "sliding" ? "" : slow.kind + ":",
                     slow.after, format_duration(slow.window), format_duration(slow.step),
                     slow.max ? "," + format_duration(*slow.max) : std::string());
}

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
  if (text.starts_with("slow-down:")) {
    if (spec.per_group || spec.counts_requests)
      return std::unexpected(
          fmt::format("'{}': a slow-down is per identity and counts requests", spec.text));
    return parse_slow_down_spec(std::move(spec), text.substr(10));
  }
  if (text == "slow-down") {
    return std::unexpected(
        fmt::format("'{}': a slow-down gives its parameters: slow-down:5/10s,100ms", spec.text));
  }
  const size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (!known_contract(spec.name)) {
    return std::unexpected(fmt::format(
        "'{}': expected sliding, fixed, sliding-counter, token-bucket, gcra, queue, concurrency, "
        "ban or slow-down{}",
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
