#include "checks/slow_down_checks.hpp"

#include <string>

#include <fmt/format.h>

#include "checks/slow_down_audit.hpp"
#include "config/count_text.hpp"

namespace rlcheck::checks {
namespace {

double slow_down_ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// The run whose request breached most (margin furthest above 0), by `pick`; nullptr when no
// run judged one.
template <typename Pick>
const RunStats* slow_down_worst_run(const std::vector<RunStats>& runs, Pick pick) {
  const RunStats* worst = nullptr;
  for (const RunStats& run : runs) {
    if (!run.slow_down || !pick(*run.slow_down))
      continue;
    if (worst == nullptr || pick(*run.slow_down)->margin_ns > pick(*worst->slow_down)->margin_ns)
      worst = &run;
  }
  return worst;
}

std::string slow_down_request_text(const RunStats& run, const SlowDownRequest& request) {
  return fmt::format("run {} identity {}: request {} sent {:.1f}ms into the run took {:.1f}ms",
                     run.run, request.identity, request.seq, slow_down_ms(request.sent_ns),
                     slow_down_ms(request.latency_ns));
}

}  // namespace

CheckResult check_slow_down_limit(const std::vector<RunStats>&, const CheckParams& params) {
  return {"limit", Status::skip,
          fmt::format("{} admits every request, later the more its window holds: its promise is "
                      "judged by delay (too slow) and contract (too fast)",
                      params.slow_down)};
}

CheckResult check_slow_down_contract(const std::vector<RunStats>& runs, const CheckParams& params) {
  int64_t judged = 0;
  for (const RunStats& run : runs)
    judged += run.slow_down ? run.slow_down->judged_early : 0;
  const auto pick = [](const SlowDownAudit& audit) -> const std::optional<SlowDownRequest>& {
    return audit.earliest;
  };
  const RunStats* worst = slow_down_worst_run(runs, pick);
  if (judged == 0 || worst == nullptr) {
    return {"contract", Status::skip,
            fmt::format("no request was surely owed a delay under {} (each counted only from "
                        "admissions surely before it and surely in its window{})",
                        params.slow_down,
                        params.slow_down.find("first-hit") != std::string::npos
                            ? "; first-hit windows are placed only on fresh state, in the run's "
                              "first window"
                            : "")};
  }
  const SlowDownRequest& found = *worst->slow_down->earliest;
  if (found.margin_ns > 0) {
    return {"contract", Status::fail,
            fmt::format("{}, though it was at least request {} of its window: {} promises at "
                        "least {:.1f}ms of delay (read as if it took no time at all unloaded), "
                        "tolerance {:.1f}ms; the limiter slows down less than promised",
                        slow_down_request_text(*worst, found), found.position, params.slow_down,
                        slow_down_ms(found.promised_ns), slow_down_ms(found.tolerance_ns))};
  }
  return {"contract", Status::pass,
          fmt::format("{} surely owed a delay, each delayed at least as promised; the closest: "
                      "{}, owed at least {:.1f}ms as request {} of its window",
                      config::counted(judged, "request"), slow_down_request_text(*worst, found),
                      slow_down_ms(found.promised_ns), found.position)};
}

CheckResult check_slow_down_utilisation(const std::vector<RunStats>& runs,
                                        const CheckParams& params) {
  int64_t denied = 0;
  const RunStats* first = nullptr;
  for (const RunStats& run : runs) {
    denied += run.denied;
    if (first == nullptr && run.denied > 0)
      first = &run;
  }
  if (first == nullptr) {
    return {"utilisation", Status::pass,
            fmt::format("no request denied, as {} promises", params.slow_down)};
  }
  return {"utilisation", Status::fail,
          fmt::format("{} denied (the first in run {}): {} delays requests and denies none; a "
                      "denial comes from another limit in front of the endpoint, or the "
                      "slow-down is not all there is",
                      config::counted(denied, "request"), first->run, params.slow_down)};
}

CheckResult check_slow_down_delay(const std::vector<RunStats>& runs, const CheckParams& params) {
  int64_t judged = 0;
  for (const RunStats& run : runs)
    judged += run.slow_down ? run.slow_down->judged_late : 0;
  const auto pick = [](const SlowDownAudit& audit) -> const std::optional<SlowDownRequest>& {
    return audit.latest;
  };
  const RunStats* worst = slow_down_worst_run(runs, pick);
  if (judged == 0 || worst == nullptr) {
    return {"delay", Status::skip,
            "no admission to judge: every window may reach back before the run, where state "
            "from earlier tests may count (--exact vouches for fresh state, and judges from the "
            "first request)"};
  }
  const SlowDownAudit& audit = *worst->slow_down;
  const SlowDownRequest& found = *audit.latest;
  const std::string unloaded = fmt::format(
      "the unloaded latency {:.1f}ms ({})", slow_down_ms(audit.unloaded_ns),
      audit.unloaded_from_undelayed ? "the longest of the requests surely among the first of their "
                                      "windows"
                                    : "the run's shortest: no request was surely undelayed");
  const std::string detail = fmt::format(
      "{}, {:.1f}ms beyond {}; at most request {} of its window (every request that may have "
      "reached the limiter within the window before it), {} allows at most {:.1f}ms, tolerance "
      "{:.1f}ms; {} judged",
      slow_down_request_text(*worst, found), slow_down_ms(found.latency_ns - audit.unloaded_ns),
      unloaded, found.position, params.slow_down, slow_down_ms(found.promised_ns),
      slow_down_ms(found.tolerance_ns), config::counted(judged, "request"));
  return {"delay", found.margin_ns > 0 ? Status::fail : Status::pass, detail};
}

}  // namespace rlcheck::checks
