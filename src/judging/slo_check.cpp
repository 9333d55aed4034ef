#include "judging/slo_check.hpp"

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace rlcheck::judging {
namespace {

std::string rate_text(int64_t per_s) {
  return fmt::format("{}/s", per_s);
}

}  // namespace

checks::CheckResult slo_check(const report::FindMax& search) {
  using checks::Status;
  if (search.steps.empty())
    return {"slo", Status::skip, "no step of the search ran"};
  if (search.max_rate) {
    std::string detail = fmt::format("max {} within {}", rate_text(*search.max_rate), search.slo);
    if (search.client_bound) {
      detail = fmt::format("at least {} within {}: {}", rate_text(*search.max_rate), search.slo,
                           report::send_limit_text(search));
    } else if (search.ceiling) {
      detail += fmt::format(" (every step held: the target may serve more than {})",
                            rate_text(search.steps.back().rate_per_s));
    } else if (search.steps.size() > 0) {
      detail += fmt::format("; {} missed", rate_text(search.steps.back().rate_per_s));
    }
    return {"slo", Status::pass, detail};
  }
  const report::FindMaxStep& first = search.steps.front();
  if (first.pool_bound) {
    return {"slo", Status::skip,
            fmt::format("{} could not be offered (lateness p99 {:.1f}ms): {}, so the target's "
                        "latency is unknown there: raise -p, or start lower (--rate)",
                        rate_text(first.rate_per_s), first.lateness_p99_ms,
                        report::send_limit_text(search))};
  }
  if (first.client_bound) {
    return {"slo", Status::skip,
            fmt::format("rlcheck could not send {} on time here (lateness p99 {:.1f}ms), so "
                        "the target's latency is unknown: start lower (--rate)",
                        rate_text(first.rate_per_s), first.lateness_p99_ms)};
  }
  if (!first.missed_for_sure) {
    return {"slo", Status::skip,
            fmt::format("{} at {} is within the latency histogram's resolution of {}", first.why,
                        rate_text(first.rate_per_s), search.slo)};
  }
  return {"slo", Status::fail,
          fmt::format("even {} missed {}: {}", rate_text(first.rate_per_s), search.slo, first.why)};
}

}  // namespace rlcheck::judging
