#include "checks/concurrency_checks.hpp"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/concurrency_audit.hpp"
#include "config/count_text.hpp"

namespace rlcheck::checks {
namespace {

double ms_from_ns(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// The run with the most admissions surely in progress at once (of equals, the first), among
// those that decided something; nullptr when none did.
const RunStats* most_at_once(const std::vector<RunStats>& runs) {
  const RunStats* most = nullptr;
  for (const RunStats& run : runs) {
    if (!run.concurrency || run.allowed + run.denied == 0)
      continue;
    if (most == nullptr || run.concurrency->surely_at_once > most->concurrency->surely_at_once)
      most = &run;
  }
  return most;
}

// Where the floor came from, for every detail: a fail rests on it.
std::string hold_text(const ConcurrencyAudit& audit) {
  return fmt::format("each held at least {:.1f}ms{}", ms_from_ns(audit.hold_ns),
                     audit.hold_measured ? " (measured: the fastest admission less a denial's "
                                           "latency, less a tenth; --hold states it)"
                                         : " (--hold)");
}

// Where an admission's span ends: its reply, or its release's (rlcheck redis --release-script).
const char* span_end(const ConcurrencyAudit& audit) {
  return audit.released_by_run ? "its release's reply" : "its reply";
}

// Without a floor every admission may have been handled in an instant: nothing can be proven.
constexpr const char* k_no_floor =
    "no hold floor: without denials to measure a floor against (or a fastest admission no slower "
    "than a denial), each admission may have been handled in an instant, so no overlap can be "
    "proven; --hold DUR states the least time the endpoint holds each request";

}  // namespace

CheckResult check_concurrency_limit(const std::vector<RunStats>& runs, const CheckParams& params) {
  const RunStats* most = most_at_once(runs);
  if (most == nullptr)
    return {"limit", Status::skip, runs.empty() ? "no runs" : "no request was decided"};
  const ConcurrencyAudit& audit = *most->concurrency;
  if (audit.hold_ns <= 0)
    return {"limit", Status::skip, k_no_floor};
  int over = 0;
  const RunStats* first_over = nullptr;
  for (const RunStats& run : runs) {
    if (run.concurrency && run.concurrency->exceeded()) {
      ++over;
      first_over = first_over != nullptr ? first_over : &run;
    }
  }
  if (first_over == nullptr) {
    return {
        "limit", Status::pass,
        fmt::format("most in progress at once {} surely <= cap {} ({}); at most {} possibly "
                    "in flight at once",
                    audit.surely_at_once, params.limit, hold_text(audit), audit.possibly_at_once)};
  }
  return {
      "limit", Status::fail,
      fmt::format("{} of {} over the cap; run {} had {} admissions surely in progress at once "
                  "> cap {}; max {}",
                  over, config::counted(static_cast<int64_t>(runs.size()), "run"), first_over->run,
                  first_over->concurrency->surely_at_once, params.limit, audit.surely_at_once)};
}

CheckResult check_concurrency_contract(const std::vector<RunStats>& runs,
                                       const CheckParams& params) {
  const RunStats* most = most_at_once(runs);
  if (most == nullptr || most->allowed == 0)
    return {"contract", Status::skip, "no admissions to audit"};
  const ConcurrencyAudit& audit = *most->concurrency;
  if (audit.hold_ns <= 0)
    return {"contract", Status::skip, k_no_floor};
  const std::string placement = fmt::format(
      " (each admission placed anywhere between its send and {} less the hold)", span_end(audit));
  if (audit.surely_at_once == 0) {
    return {"contract", Status::pass,
            fmt::format("concurrency:{} contract: no admission surely held its place at a known "
                        "instant (each took at least twice the hold, {}){}",
                        params.limit, hold_text(audit), placement)};
  }
  const std::string detail = fmt::format(
      "concurrency:{} contract, most surely in progress at once: run {} identity {}: requests {} "
      "all in progress {:.1f}ms into the run, {}; at most {} possibly in flight at once{}",
      params.limit, most->run, audit.surely_identity, fmt::join(audit.surely_seqs, ", "),
      ms_from_ns(audit.surely_at_ns), hold_text(audit), audit.possibly_at_once, placement);
  return {"contract", audit.exceeded() ? Status::fail : Status::pass, detail};
}

CheckResult check_concurrency_utilisation(const std::vector<RunStats>& runs,
                                          const CheckParams& params) {
  int64_t lockouts = 0, denials = 0;
  const RunStats* worst_run = nullptr;
  for (const RunStats& run : runs) {
    lockouts += run.lockouts.count;
    denials += run.lockouts.judged;
    const auto& worst = run.lockouts.worst;
    if (worst && (worst_run == nullptr || worst->used < worst_run->lockouts.worst->used))
      worst_run = &run;
  }
  if (denials == 0)
    return {"utilisation", Status::skip, "no denials to judge"};
  if (worst_run != nullptr) {
    const LockOut& worst = *worst_run->lockouts.worst;
    return {"utilisation", Status::fail,
            fmt::format("run {} identity {}: request {} sent {:.1f}ms into the run was denied "
                        "while at most {:.0f} admitted could be in progress, below the cap {}; {} "
                        "of {} denials judged came with room",
                        worst_run->run, worst.identity, worst.seq, ms_from_ns(worst.sent_ns),
                        worst.used, params.limit, lockouts, denials)};
  }
  const ConcurrencyAudit* audit = runs.front().concurrency ? &*runs.front().concurrency : nullptr;
  return {"utilisation", Status::pass,
          fmt::format("{} denials judged, each while at least {} admitted could be in progress "
                      "(each admission read in progress from its send to {:.0f}ms after {})",
                      denials, params.limit, ms_from_ns(k_release_slack_ns),
                      audit != nullptr ? span_end(*audit) : "its reply")};
}

}  // namespace rlcheck::checks
