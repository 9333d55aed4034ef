#include "serve/limit_headers.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlcheck::serve {
namespace {

int64_t ceil_seconds(int64_t ms) {
  return std::max<int64_t>(0, (ms + 999) / 1000);
}

}  // namespace

LimitResponse limit_response(const engine::Decision& decision, const Policy& policy) {
  LimitResponse response;
  const bool allowed = decision.outcome == engine::Outcome::allowed;
  response.status = allowed ? 200 : 429;
  const int64_t remaining = allowed ? std::max<int64_t>(0, decision.remaining.value_or(0)) : 0;
  const std::optional<int64_t> reset_s =
      decision.retry_ms ? std::optional<int64_t>(ceil_seconds(*decision.retry_ms)) : std::nullopt;

  auto& headers = response.headers;
  headers.emplace_back("Content-Type", "application/json");
  headers.emplace_back("RateLimit-Policy",
                       fmt::format("\"default\";q={};w={}", policy.limit, policy.window_s));
  if (decision.remaining || !allowed) {
    headers.emplace_back("RateLimit",
                         reset_s ? fmt::format("\"default\";r={};t={}", remaining, *reset_s)
                                 : fmt::format("\"default\";r={}", remaining));
  }
  headers.emplace_back("X-RateLimit-Limit", std::to_string(policy.limit));
  if (decision.remaining || !allowed) {
    headers.emplace_back("X-RateLimit-Remaining", std::to_string(remaining));
  }
  if (reset_s)
    headers.emplace_back("X-RateLimit-Reset", std::to_string(*reset_s));
  if (!allowed && reset_s)
    headers.emplace_back("Retry-After", std::to_string(*reset_s));

  nlohmann::json body = {{"allowed", allowed}};
  if (decision.remaining)
    body["remaining"] = remaining;
  if (!allowed) {
    body["error"] = "too_many_requests";
    if (reset_s)
      body["retry_after_s"] = *reset_s;
  }
  response.body = body.dump();
  return response;
}

LimitResponse outage_response(bool fail_open) {
  LimitResponse response;
  response.headers.emplace_back("Content-Type", "application/json");
  if (fail_open) {
    response.status = 200;
    response.body = R"({"allowed":true,"unchecked":"rate limiter unavailable"})";
  } else {
    response.status = 503;
    response.headers.emplace_back("Retry-After", "1");
    response.body = R"({"allowed":false,"error":"rate limiter unavailable"})";
  }
  return response;
}

}  // namespace rlcheck::serve
