#include "http/llm_headers.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "http/field_text.hpp"

namespace rlcheck::http {
namespace {

bool name_starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

bool name_ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && iequals(text.substr(text.size() - suffix.size()), suffix);
}

std::optional<int64_t> llm_count(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

bool is_x_ratelimit_field(std::string_view name) {
  return iequals(name, "X-RateLimit-Limit") || iequals(name, "X-RateLimit-Remaining") ||
         iequals(name, "X-RateLimit-Reset");
}

bool is_ietf_field(std::string_view name) {
  return name_starts_with(name, "RateLimit");
}

// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, read for every header of every
// response: compared in place.
bool is_llm_field(std::string_view name) {
  constexpr std::string_view k_prefix = "x-ratelimit-";
  if (!name_starts_with(name, k_prefix))
    return false;
  name.remove_prefix(k_prefix.size());
  for (const std::string_view unit : {"-requests", "-tokens"}) {
    if (!name_ends_with(name, unit))
      continue;
    const std::string_view field = name.substr(0, name.size() - unit.size());
    return iequals(field, "limit") || iequals(field, "remaining") || iequals(field, "reset");
  }
  return false;
}

}  // namespace

std::optional<int64_t> parse_go_duration_ms(std::string_view text) {
  text = trim_ows(text);
  if (text.empty())
    return std::nullopt;
  double total_ms = 0;
  while (!text.empty()) {
    size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
      ++digits;
    if (digits == 0)
      return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + digits, value);
    if (error != std::errc() || end != text.data() + digits)
      return std::nullopt;
    text.remove_prefix(digits);
    size_t unit = 0;
    while (unit < text.size() && std::isalpha(static_cast<unsigned char>(text[unit])))
      ++unit;
    const std::string_view name = text.substr(0, unit);
    text.remove_prefix(unit);
    double scale = 0;
    if (name == "h")
      scale = 3'600'000;
    else if (name == "m")
      scale = 60'000;
    else if (name == "s")
      scale = 1000;
    else if (name == "ms")
      scale = 1;
    else if (name == "us" || name == "µs")
      scale = 0.001;
    else if (name == "ns")
      scale = 0.000001;
    else
      return std::nullopt;
    total_ms += value * scale;
  }
  if (total_ms > 1e15)
    return std::nullopt;
  return static_cast<int64_t>(std::ceil(total_ms - 1e-9));
}

LlmLimits parse_llm_headers(const HeaderList& headers) {
  LlmLimits limits;
  for (const auto& [name, raw] : headers) {
    if (!is_llm_field(name))
      continue;
    const std::string_view value = trim_ows(raw);
    const bool tokens = name_ends_with(name, "-tokens");
    LlmPair& pair = tokens ? limits.tokens : limits.requests;
    const bool reset = name_starts_with(name, "x-ratelimit-reset-");
    const std::optional<int64_t> read = reset ? parse_go_duration_ms(value) : llm_count(value);
    if (!read) {
      limits.problems.push_back(
          fmt::format("{}: not {} {}", name, reset ? "a duration" : "a count", quoted(value)));
      continue;
    }
    std::optional<int64_t>& field = reset                                          ? pair.reset_ms
                                    : name_starts_with(name, "x-ratelimit-limit-") ? pair.limit
                                                                                   : pair.remaining;
    field = *read;
  }
  for (const auto& [pair, unit] :
       {std::pair{&limits.requests, "requests"}, std::pair{&limits.tokens, "tokens"}}) {
    if (pair->limit && pair->remaining && *pair->remaining > *pair->limit) {
      limits.problems.push_back(fmt::format("x-ratelimit-remaining-{} {} is above the limit {}",
                                            unit, *pair->remaining, *pair->limit));
    }
  }
  return limits;
}

HeaderList headers_of_forms(const HeaderList& headers, HeaderForms forms) {
  if (forms == HeaderForms::automatic)
    return headers;
  HeaderList kept;
  for (const auto& header : headers) {
    const std::string_view name = header.first;
    const bool x = is_x_ratelimit_field(name), llm = is_llm_field(name), ietf = is_ietf_field(name);
    const bool other_form = (x && forms != HeaderForms::x) || (llm && forms != HeaderForms::llm) ||
                            (ietf && forms != HeaderForms::ietf);
    if (!other_form)
      kept.push_back(header);
  }
  return kept;
}

}  // namespace rlcheck::http
