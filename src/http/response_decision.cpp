#include "http/response_decision.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "http/field_text.hpp"
#include "http/retry_after.hpp"

namespace rlcheck::http {

int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t response_clock_s(const engine::RequestClock& clock) {
  if (clock.virtual_unix_ns == 0)
    return unix_now_s();
  return engine::floor_div(clock.read_ns(), 1'000'000'000);
}

engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 const engine::RequestClock& clock) {
  return decide_response(status, headers, rules, response_clock_s(clock),
                         clock.virtual_unix_ns != 0);
}

namespace {

const std::string* find_header(const HeaderList& headers, std::string_view name) {
  for (const auto& [field, value] : headers) {
    if (iequals(field, name))
      return &value;
  }
  return nullptr;
}

}  // namespace

engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 int64_t local_unix_s, bool told_instant) {
  engine::Decision decision;
  decision.status = static_cast<uint16_t>(std::clamp(status, 0, 999));
  // Both hints a response can carry, Retry-After (delay-seconds or an HTTP-date) and the
  // RateLimit reset / t, count whole seconds.
  decision.hint_resolution_ms = 1000;
  int64_t reference = local_unix_s;
  if (const std::string* date = told_instant ? nullptr : find_header(headers, "Date")) {
    reference = parse_http_date(*date).value_or(local_unix_s);
  }

  const HeaderList read = headers_of_forms(headers, rules.header_forms);
  const RateLimitInfo advertised = parse_ratelimit_headers(read, reference);
  decision.advertised_limit = advertised.limit;
  decision.remaining = advertised.remaining;
  decision.advertised_reset_s = advertised.reset_s;
  decision.reset_from_date = advertised.reset_from_timestamp;
  decision.advertised_window_s = advertised.window_s;
  if (advertised.policies.size() >= 2) {
    for (const RateLimitPolicy& policy : advertised.policies) {
      if (policy.quota && policy.window_s && *policy.window_s > 0)
        decision.policies.emplace_back(*policy.quota, *policy.window_s);
    }
    if (decision.policies.size() < 2)
      decision.policies.clear();
  }
  if (!advertised.problems.empty()) {
    decision.header_problem = true;
    decision.header_note = advertised.problems.front();
  }
  // LLM gateways: the requests pair stands where the other forms' one limit does, when none
  // of them spoke; the tokens pair's remaining is the units left (--cost).
  const LlmLimits llm = parse_llm_headers(read);
  if (advertised.source.empty()) {
    decision.advertised_limit = llm.requests.limit;
    decision.remaining = llm.requests.remaining;
  }
  decision.remaining_units = llm.tokens.remaining;
  if (!llm.problems.empty() && !decision.header_problem) {
    decision.header_problem = true;
    decision.header_note = llm.problems.front();
  }

  if (rules.allowed.contains(status)) {
    decision.outcome = engine::Outcome::allowed;
    return decision;
  }
  if (!rules.denied.contains(status)) {
    decision.outcome = engine::Outcome::error;
    decision.error = engine::ErrorKind::status;
    decision.error_message = fmt::format("status {}", status);
    // Kept to say the status reads as a denial (a 503 with Retry-After: nginx's default).
    if (const std::string* value = find_header(headers, "Retry-After")) {
      if (auto retry_after = parse_retry_after(*value, reference))
        decision.retry_ms = retry_after->seconds * 1000;
    }
    return decision;
  }
  decision.outcome = engine::Outcome::denied;
  decision.hint_expected = rules.require_retry_after;
  if (const std::string* value = find_header(headers, "Retry-After")) {
    auto retry_after = parse_retry_after(*value, reference);
    if (retry_after) {
      decision.retry_ms = retry_after->seconds * 1000;
      decision.retry_from_date = retry_after->form == RetryAfter::Form::http_date;
    } else {
      decision.hint_invalid = true;
      decision.hint_note = fmt::format("Retry-After: {}", retry_after.error());
    }
  }
  return decision;
}

}  // namespace rlcheck::http
