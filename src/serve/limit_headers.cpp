#include "serve/limit_headers.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlcheck::serve {
namespace {

int64_t ceil_seconds(int64_t ms) {
  return std::max<int64_t>(0, (ms + 999) / 1000);
}

}  // namespace

Policy policy_of(config::Strategy strategy, int64_t limit, int64_t window_ms, int64_t burst,
                 const config::Rate& refill) {
  // A queue of B admits B + 1 at once (one leaves, B wait): a bucket of B + 1 as seen by
  // arrivals.
  if (strategy == config::Strategy::leaky_queue)
    burst += 1;
  if ((strategy == config::Strategy::token_bucket || strategy == config::Strategy::gcra ||
       strategy == config::Strategy::leaky_queue) &&
      refill.tokens > 0 && refill.period.count() > 0) {
    const double fill_s = static_cast<double>(burst) * static_cast<double>(refill.period.count()) /
                          static_cast<double>(refill.tokens) / 1e9;
    return {burst, std::max<int64_t>(1, std::llround(fill_s))};
  }
  return {limit, std::max<int64_t>(1, (window_ms + 999) / 1000)};
}

LimitResponse limit_response(const engine::Decision& decision, const Policy& policy) {
  LimitResponse response;
  const bool allowed = decision.outcome == engine::Outcome::allowed;
  response.status = allowed ? 200 : 429;
  const int64_t remaining = allowed ? std::max<int64_t>(0, decision.remaining.value_or(0)) : 0;
  // A denial's reset is its retry hint; an allowed request's is not known to the limiter.
  const bool has_reset = decision.retry_ms.has_value();
  const int64_t reset = has_reset ? ceil_seconds(*decision.retry_ms) : 0;

  auto& headers = response.headers;
  headers.emplace_back("Content-Type", "application/json");
  headers.emplace_back("RateLimit-Policy",
                       fmt::format("\"default\";q={};w={}", policy.limit, policy.window_s));
  if (decision.remaining || !allowed) {
    headers.emplace_back("RateLimit", has_reset
                                          ? fmt::format("\"default\";r={};t={}", remaining, reset)
                                          : fmt::format("\"default\";r={}", remaining));
  }
  headers.emplace_back("X-RateLimit-Limit", std::to_string(policy.limit));
  if (decision.remaining || !allowed) {
    headers.emplace_back("X-RateLimit-Remaining", std::to_string(remaining));
  }
  if (has_reset)
    headers.emplace_back("X-RateLimit-Reset", std::to_string(reset));
  if (!allowed && has_reset)
    headers.emplace_back("Retry-After", std::to_string(reset));

  nlohmann::json body = {{"allowed", allowed}};
  if (decision.remaining)
    body["remaining"] = remaining;
  if (!allowed) {
    body["error"] = "too_many_requests";
    if (has_reset)
      body["retry_after_s"] = reset;
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
