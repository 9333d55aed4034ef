#include "checks/checks.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/concurrency_checks.hpp"
#include "checks/fault_checks.hpp"
#include "checks/key_ttl.hpp"
#include "checks/slow_down_checks.hpp"
#include "checks/time_checks.hpp"
#include "config/count_text.hpp"

namespace rlcheck::checks {
namespace {

std::string span_text(const AdmissionPeak& peak) {
  if (peak.length_ns <= 0)
    return "";
  const double ms = static_cast<double>(peak.length_ns) / 1e6;
  // Milliseconds to a tenth below a second, seconds to a hundredth above: never 4.66e+03ms.
  return ms < 1000 ? fmt::format(" within {:.1f}ms", ms)
                   : fmt::format(" within {:.2f}s", ms / 1000);
}

bool decided_any(const RunStats& run) {
  return run.allowed + run.denied > 0;
}

// Admission checks say nothing when the limiter decided nothing (every request errored or was
// refused): a pass would be a pass on no evidence.
constexpr const char* k_nothing_decided = "no request was decided (every one errored)";

// A stepped bucket's allowance, as its ticks were placed.
std::string stepped_allowance_note(const CheckParams& params) {
  if (params.tick_anchor.empty())
    return " (burst + one step + refill over that span: the ticks placed as they favour the "
           "limiter)";
  if (params.bucket_may_predate_run) {
    return " (burst + one step + refill over that span: the ticks placed as they favour the "
           "limiter; --anchor first-hit places them only in a bucket the run surely created: "
           "--exact, a fresh key or --reset)";
  }
  if (params.tick_anchor == "clock") {
    return " (burst + the tokens of the ticks on the limiter's clock in that span, read within "
           "its resolution, or burst + one step + refill where that is less)";
  }
  return " (burst + the tokens of the ticks counted from the bucket's creation in that span, "
         "placed as the first admission's timing allows, or burst + one step + refill where "
         "that is less or a pause may have let the store drop the bucket)";
}

CheckResult check_limit(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (params.contract == "concurrency")
    return check_concurrency_limit(runs, params);
  if (params.contract == "slow-down")
    return check_slow_down_limit(runs, params);
  const RunStats* worst = nullptr;
  int over = 0;
  for (const RunStats& run : runs) {
    if (!decided_any(run))
      continue;
    if (run.peak.exceeded())
      ++over;
    if (worst == nullptr || run.peak.count > worst->peak.count)
      worst = &run;
  }
  if (worst == nullptr)
    return {"limit", Status::skip, runs.empty() ? "no runs" : k_nothing_decided};
  const bool queue = params.contract == "queue";
  const bool bucket = bucket_contract(params.contract);
  // A sliding-window counter's allowance is its two windows', weighted at the admission.
  const bool counter = params.contract.starts_with("sliding-counter");
  const std::string allowance_note =
      counter          ? " (limit + previous window x position, over its two windows)"
      : queue          ? " (queue + 1 + refill over that span, as arrivals)"
      : params.stepped ? stepped_allowance_note(params)
                       : " (burst + refill over that span)";
  if (over == 0) {
    if (bucket || counter) {
      return {
          "limit", Status::pass,
          fmt::format("max allowed {}{} <= {:.4g}{}{}", worst->peak.count, span_text(worst->peak),
                      worst->peak.allowance, allowance_note, unknown_phase_note(params))};
    }
    return {"limit", Status::pass,
            fmt::format("max allowed {}{} <= limit {}{}", worst->peak.count,
                        worst->weighted ? " units" : "", params.limit, unknown_phase_note(params))};
  }
  const RunStats& first_over =
      *std::find_if(runs.begin(), runs.end(), [](const RunStats& r) { return r.peak.exceeded(); });
  return {"limit", Status::fail,
          fmt::format("{} of {} over the limit; run {} allowed {}{}{} > {:.4g}{}; max {}", over,
                      config::counted(static_cast<int64_t>(runs.size()), "run"), first_over.run,
                      first_over.peak.count, first_over.weighted ? " units" : "",
                      span_text(first_over.peak), first_over.peak.allowance,
                      bucket || counter ? allowance_note : "", worst->peak.count)};
}

CheckResult check_exact(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (!params.exact)
    return {"exact", Status::skip, "without --exact"};
  const int64_t floor = std::min(params.limit, params.requests);
  if (std::none_of(runs.begin(), runs.end(), decided_any))
    return {"exact", Status::skip, k_nothing_decided};
  for (const RunStats& run : runs) {
    // Requests that may have been admitted unseen (unknown) may make up a shortfall.
    if (decided_any(run) && run.allowed + run.unknown < floor) {
      return {"exact", Status::fail,
              fmt::format("run {} allowed {} < {} (under-admission){}", run.run, run.allowed, floor,
                          run.unknown > 0 ? fmt::format(", with {} unknown", run.unknown) : "")};
    }
  }
  return {"exact", Status::pass, fmt::format("every run allowed at least {}", floor)};
}

CheckResult check_retry_present(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (params.retry_hint_optional) {
    return {"retry-after-present", Status::skip, "not required (--no-require-retry-after)"};
  }
  int64_t missing = 0, present = 0, denied = 0;
  bool expected = false;
  int first_run = 0;
  for (const RunStats& run : runs) {
    expected = expected || run.retry.expected;
    present += run.retry.present;
    denied += run.denied;
    if (run.retry.missing > 0 && first_run == 0)
      first_run = run.run;
    missing += run.retry.missing;
  }
  if (denied == 0)
    return {"retry-after-present", Status::skip, "no denials"};
  if (!expected)
    return {"retry-after-present", Status::skip, "the limiter gives no retry hint"};
  if (missing > 0) {
    return {"retry-after-present", Status::fail,
            fmt::format("{} of {} denials carried no retry hint (first in run {})", missing, denied,
                        first_run)};
  }
  return {"retry-after-present", Status::pass,
          fmt::format("{} of {} denials carried a retry hint", present, denied)};
}

CheckResult check_retry_valid(const std::vector<RunStats>& runs) {
  int64_t invalid = 0, present = 0;
  std::string sample;
  for (const RunStats& run : runs) {
    invalid += run.retry.invalid;
    present += run.retry.present;
    if (sample.empty())
      sample = run.retry.invalid_sample;
  }
  if (present == 0)
    return {"retry-after-valid", Status::skip, "no retry hints"};
  if (invalid > 0) {
    return {"retry-after-valid", Status::fail,
            fmt::format("{} of {} retry hints were invalid{}", invalid, present,
                        sample.empty() ? " (negative)" : fmt::format(": {}", sample))};
  }
  return {"retry-after-valid", Status::pass, fmt::format("{} retry hints, all >= 0", present)};
}

CheckResult check_retry_bound(const std::vector<RunStats>& runs, const CheckParams& params) {
  int64_t over = 0, present = 0, largest = 0;
  for (const RunStats& run : runs) {
    over += run.retry.over_bound;
    present += run.retry.present;
    if (run.retry.max_ms)
      largest = std::max(largest, *run.retry.max_ms);
  }
  if (present == 0)
    return {"retry-after-bound", Status::skip, "no retry hints"};
  if (over > 0) {
    return {"retry-after-bound", Status::fail,
            fmt::format("{} retry hints above {}ms; largest {}ms", over, params.max_retry_after_ms,
                        largest)};
  }
  return {"retry-after-bound", Status::pass,
          fmt::format("largest retry hint {}ms <= {}ms", largest, params.max_retry_after_ms)};
}

// Errored requests that overlapped an applied --fault: fail-mode and recovery judge those.
int64_t errors_during_faults(const RunStats& run) {
  int64_t during = 0;
  for (const FaultWindow& fault : run.faults) {
    if (fault.applied)
      during += fault.during_errors;
  }
  return std::min(during, run.errors);
}

// A status that is neither allowed nor denied but reads as a denial: it carried a Retry-After,
// or (4xx or 503) it made most of the errors of a run that also admitted. nginx denies with 503
// by default; the error names the flag that accepts it. Empty when no status reads so.
std::string denial_status_note(const std::vector<RunStats>& runs) {
  std::map<std::string, int64_t> hinted, counts;
  int64_t errors = 0;
  bool admitted = false, denied_429 = false;
  for (const RunStats& run : runs) {
    for (const auto& [kind, count] : run.hinted_status_errors)
      hinted[kind] += count;
    for (const auto& [kind, count] : run.error_kinds)
      counts[kind] += count;
    errors += run.errors;
    admitted = admitted || run.allowed > 0;
    denied_429 = denied_429 || run.denied > 0;
  }
  std::string best;
  int64_t best_count = 0;
  for (const auto& [kind, count] : counts) {
    if (!kind.starts_with("status-") || count <= best_count)
      continue;
    const std::string status = kind.substr(7);
    const bool denial_like = status == "503" || status.starts_with("4");
    if (hinted.contains(kind) || (denial_like && admitted && 2 * count >= errors)) {
      best = status;
      best_count = count;
    }
  }
  if (best.empty())
    return "";
  return fmt::format("; status {} looks like a denial: if it is, pass --denied-status {}{}", best,
                     denied_429 ? "429," : "", best);
}

CheckResult check_errors(const std::vector<RunStats>& runs, const CheckParams& params) {
  const std::string denial_note = denial_status_note(runs);
  for (const RunStats& run : runs) {
    const int64_t during_faults = errors_during_faults(run);
    if (run.errors - during_faults > params.max_errors) {
      std::string sample;
      if (!run.error_samples.empty()) {
        const auto& [kind, message] = *run.error_samples.begin();
        sample = fmt::format(": {} ({})", message, kind);
      }
      const char* stopped = run.stopped_on_errors ? "; no more requests were sent" : "";
      const std::string besides =
          during_faults > 0 ? fmt::format(" besides {} during faults", during_faults) : "";
      return {"errors", Status::fail,
              fmt::format("run {} had {}{} > --max-errors {}{}{}{}", run.run,
                          config::counted(run.errors - during_faults, "errored request"), besides,
                          params.max_errors, sample, stopped, denial_note)};
    }
  }
  int64_t total = 0;
  int64_t decided = 0;
  for (const RunStats& run : runs) {
    total += run.errors;
    decided += run.allowed + run.denied;
  }
  // Errors within --max-errors are tolerated noise around a test; errors alone are no test at
  // all, and a pass on them would be a verdict without evidence.
  if (decided == 0 && total > 0) {
    return {"errors", Status::fail,
            fmt::format("no request was decided: all {} errored, so nothing was tested "
                        "(--max-errors {} tolerates errors around a test, not instead of one){}",
                        config::counted(total, "request"), params.max_errors, denial_note)};
  }
  int64_t during_faults = 0;
  for (const RunStats& run : runs)
    during_faults += errors_during_faults(run);
  if (during_faults > 0) {
    return {"errors", Status::pass,
            fmt::format("{} outside faults, at most {} per run ({} during faults, judged by "
                        "fail-mode and recovery)",
                        config::counted(total - during_faults, "errored request"),
                        params.max_errors, during_faults)};
  }
  return {"errors", Status::pass,
          fmt::format("{}, at most {} per run", config::counted(total, "errored request"),
                      params.max_errors)};
}

}  // namespace

std::string unknown_phase_note(const CheckParams& params, bool brief) {
  if (!params.phase_unknown)
    return "";
  if (brief)
    return "; judged little: the first-hit phase is unknown (see limit)";
  return "; judged little: first-hit windows may have opened before the run (state from "
         "before it: no --exact, or an explicit --key without --reset), so only more than twice "
         "the limit within one window can fail; --exact (fresh clients) judges every window";
}

namespace {

CheckResult check_remaining(const std::vector<RunStats>& runs, const CheckParams& params) {
  int64_t judged = 0, wrong = 0;
  const RunStats* first = nullptr;
  std::string part;
  for (const RunStats& run : runs) {
    judged += run.remaining_units.judged;
    wrong += run.remaining_units.wrong;
    if (first == nullptr && run.remaining_units.first)
      first = &run;
    if (part.empty())
      part = run.remaining_units.part;
  }
  if (judged == 0) {
    return {"remaining", Status::skip,
            "no admission said how many units were left (x-ratelimit-remaining-tokens, judged "
            "with --cost or several contracts against a sliding one)"};
  }
  if (part.empty())
    part = params.contract;
  if (first != nullptr) {
    const RemainingMismatch& m = *first->remaining_units.first;
    return {"remaining", Status::fail,
            fmt::format("{} of {} admissions said a count of units left that the admissions "
                        "seen rule out; first: run {} identity {} request {} said {} left, the {} "
                        "contract leaves {} to {} after it{}",
                        wrong, judged, first->run, m.identity, m.seq, m.said, part, m.low, m.high,
                        m.said > m.high ? " (a count of requests where units were asked?)" : "")};
  }
  return {"remaining", Status::pass,
          fmt::format("{} admissions said the units left, each within what the {} contract "
                      "leaves after the admissions seen",
                      judged, part)};
}

// Several contracts: `check` judged for each part on its own (its worst span, its limit),
// each detail named by the part; a fail in any part fails the check.
template <typename Check>
CheckResult check_each_part(const std::vector<RunStats>& runs, const CheckParams& params,
                            const Check& check) {
  CheckResult merged;
  std::vector<std::string> failed, passed;
  std::string skipped = "no admissions to audit";
  const size_t parts = runs.empty() ? 0 : runs.front().parts.size();
  for (size_t p = 0; p < parts; ++p) {
    std::vector<RunStats> part_runs = runs;
    CheckParams part_params = params;
    const PartAudit& first = runs.front().parts[p];
    part_params.contract = first.name;
    part_params.limit = first.limit;
    for (RunStats& run : part_runs) {
      const PartAudit& part = run.parts[p];
      run.contract = part.contract;
      run.peak = part.contract.worst;
      run.admitted_at_once = part.admitted_at_once;
      run.weighted = run.weighted && !part.counts_requests;
    }
    const CheckResult result = check(part_runs, part_params);
    merged.id = result.id;
    const std::string line = fmt::format("{}: {}", first.spec, result.detail);
    if (result.status == Status::fail)
      failed.push_back(line);
    else if (result.status == Status::pass)
      passed.push_back(line);
    else
      skipped = result.detail;
  }
  merged.status = !failed.empty() ? Status::fail : !passed.empty() ? Status::pass : Status::skip;
  std::vector<std::string> lines = failed;
  lines.insert(lines.end(), passed.begin(), passed.end());
  merged.detail = lines.empty() ? skipped : fmt::format("{}", fmt::join(lines, "; "));
  return merged;
}

bool several_parts(const std::vector<RunStats>& runs) {
  return !runs.empty() && !runs.front().parts.empty();
}

}  // namespace

std::vector<CheckResult> evaluate_checks(const std::vector<RunStats>& runs,
                                         const CheckParams& params,
                                         const std::optional<RetryVerification>& verification) {
  const bool parts = several_parts(runs);
  return {parts ? check_each_part(runs, params, check_limit) : check_limit(runs, params),
          parts ? check_each_part(runs, params, check_contract) : check_contract(runs, params),
          check_delay(runs, params),
          check_exact(runs, params),
          check_utilisation(runs, params),
          check_retry_present(runs, params),
          check_retry_valid(runs),
          check_retry_bound(runs, params),
          check_retry_accuracy(runs, params),
          check_retry_honest(params, verification),
          check_remaining(runs, params),
          check_key_ttl(runs, params),
          check_fail_mode(runs, params),
          check_recovery(runs, params),
          check_errors(runs, params)};
}

Verdict verdict_of(const std::vector<CheckResult>& checks) {
  // A fail that proves the limiter wrong stands however inconclusive the rest; an
  // inconclusive one alone leaves the test without a verdict.
  bool failed = false, inconclusive = false;
  for (const CheckResult& check : checks) {
    if (check.status != Status::fail)
      continue;
    if (check.id == "errors")
      return Verdict::error;
    (check.inconclusive ? inconclusive : failed) = true;
  }
  return failed ? Verdict::fail : inconclusive ? Verdict::error : Verdict::pass;
}

const char* status_name(Status status) {
  switch (status) {
    case Status::pass:
      return "pass";
    case Status::fail:
      return "fail";
    case Status::skip:
      return "skip";
  }
  return "skip";
}

Verdict worst_verdict(Verdict a, Verdict b) {
  const auto rank = [](Verdict verdict) {
    switch (verdict) {
      case Verdict::pass:
        return 0;
      case Verdict::fail:
        return 1;
      case Verdict::error:
        return 2;
      case Verdict::interrupted:
        return 3;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::error:
      return "error";
    case Verdict::interrupted:
      return "interrupted";
  }
  return "error";
}

}  // namespace rlcheck::checks
