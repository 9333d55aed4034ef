#include "checks/time_checks.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "checks/concurrency_checks.hpp"
#include "checks/key_ttl.hpp"
#include "checks/slow_down_checks.hpp"
#include "config/clock_skew.hpp"
#include "config/count_text.hpp"

namespace rlcheck::checks {
namespace {

constexpr double k_min_utilisation = 0.9;

double ms_of(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

std::string seconds_text(int64_t ms) {
  return fmt::format("{:.3g}s", static_cast<double>(ms) / 1000.0);
}

// A tolerance in the unit it was chosen in: "2ms", "1s", "6s".
std::string tolerance_text(int64_t ms) {
  return ms < 1000 ? fmt::format("{}ms", ms) : seconds_text(ms);
}

std::string resolution_name(int32_t resolution_ms) {
  if (resolution_ms == 1)
    return "millisecond hints";
  if (resolution_ms == 1000)
    return "whole-second hints";
  return fmt::format("hints in steps of {}", tolerance_text(resolution_ms));
}

// The resolutions of the hints judged in any run, finest first.
std::vector<int32_t> judged_resolutions(const std::vector<RunStats>& runs) {
  std::vector<int32_t> all;
  for (const RunStats& run : runs)
    all.insert(all.end(), run.retry_accuracy.resolutions.begin(),
               run.retry_accuracy.resolutions.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// "millisecond hints: early tolerance 2ms, late 2ms", for each resolution judged.
std::string tolerances_text(const std::vector<int32_t>& resolutions,
                            const AccuracyTolerance& tolerance) {
  std::string text;
  for (int32_t resolution : resolutions) {
    const HintTolerance allowed = tolerance.at(resolution);
    text += fmt::format("{}{}: early tolerance {}, late {}", text.empty() ? "" : "; ",
                        resolution_name(resolution), tolerance_text(allowed.early_ms),
                        tolerance_text(allowed.late_ms));
  }
  return text;
}

std::string span_detail(const RunStats& run) {
  const AdmissionPeak& worst = run.contract.worst;
  return fmt::format(
      "run {} identity {}: {} {} within {:.1f}ms starting {:.1f}ms into the run, allowed "
      "{:.4g}",
      run.run, run.contract.worst_identity, worst.count,
      run.queue      ? "departures"
      : run.weighted ? "units admitted"
                     : "admissions",
      ms_of(worst.length_ns), ms_of(worst.start_ns), worst.allowance);
}

// The denial-counting pattern, where a run showed it: the client that kept sending, the rate
// that kept it locked out, and what that says about the limiter.
std::string denial_counting_text(const std::vector<const RunStats*>& judged,
                                 const CheckParams& params) {
  const RunStats* run = nullptr;
  for (const RunStats* candidate : judged) {
    const auto& found = candidate->lockouts.denial_counting;
    if (found && (run == nullptr || found->denials > run->lockouts.denial_counting->denials))
      run = candidate;
  }
  if (run == nullptr)
    return "";
  const DenialCounting& found = *run->lockouts.denial_counting;
  return fmt::format(
      "; denial counting: run {} identity {} was never admitted again after {:.1f}ms although "
      "it kept sending ({} denied at {:.3g}/s, no pause as long as the window) and the "
      "contract had room: a limiter that counts its own denials (HAProxy http_req_rate, "
      "Flask-Limiter elastic expiry) or whose state never ages (a time unit mixed up) does "
      "this; a client offering more than {} per {} (this one offered {:.3g}/s) stays locked "
      "out while it keeps asking",
      run->run, found.identity, ms_of(found.last_admitted_ns), found.denials, found.offered_per_s,
      params.limit, ttl_text(params.window_ms), found.offered_per_s);
}

// --clock-skew: which clocks the worst span's admissions came from. "; --clock-skew 0,+800ms:
// of the span's 9 admissions, 4 on a clock 0ms off and 5 on one +800ms off: 4 over the limit".
std::string skew_detail(const RunStats& run, const CheckParams& params) {
  const std::vector<int64_t>& tally = run.contract.worst_by_skew;
  if (params.clock_skews.empty() || tally.empty())
    return "";
  int64_t total = 0;
  std::vector<std::string> parts;
  for (size_t i = 0; i < tally.size() && i < params.clock_skews.size(); ++i) {
    if (tally[i] == 0)
      continue;
    total += tally[i];
    parts.push_back(fmt::format("{} on {} {} off", tally[i], parts.empty() ? "a clock" : "one",
                                config::format_clock_skew(params.clock_skews[i])));
  }
  if (parts.empty())
    return "";
  std::string clocks = parts.front();
  for (size_t i = 1; i < parts.size(); ++i)
    clocks += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  const AdmissionPeak& worst = run.contract.worst;
  return fmt::format("; --clock-skew {}: of the span's {}, {}: {:.4g} over the {}",
                     config::format_clock_skews(params.clock_skews),
                     config::counted(total, "admission"), clocks, worst.excess(),
                     bucket_contract(params.contract) ? "allowance" : "limit");
}

// The worst hint's wait was 1000 times what it said, or a thousandth of it: the limiter's
// seconds read as milliseconds, or the reverse. Named only when the figures show it.
std::string unit_mix_up(const HintError& worst) {
  const double told = static_cast<double>(worst.hint_ms);
  const double predicted = told - static_cast<double>(worst.error_ms);
  const auto near_thousand = [](double ratio) { return ratio >= 500 && ratio <= 2000; };
  if (told > 0 && predicted > 0 && near_thousand(told / predicted)) {
    return fmt::format(
        " (the wait was {:.0f}ms: {:.0f}x less, milliseconds where seconds are "
        "read?)",
        predicted, told / predicted);
  }
  if (told > 0 && predicted > 0 && near_thousand(predicted / told)) {
    return fmt::format(
        " (the wait was {:.0f}ms: {:.0f}x more, seconds where milliseconds are "
        "read?)",
        predicted, predicted / told);
  }
  return "";
}

const RunStats* run_with_worst_span(const std::vector<RunStats>& runs) {
  const RunStats* worst = nullptr;
  for (const RunStats& run : runs) {
    if (worst == nullptr || run.contract.worst.excess() > worst->contract.worst.excess())
      worst = &run;
  }
  return worst;
}

bool judged_as_ban(const std::vector<RunStats>& runs) {
  return std::ranges::any_of(runs, [](const RunStats& run) { return run.ban.has_value(); });
}

// --contract ban: how many bans the runs proved, and the first admission during one.
void add_ban_verdict(const std::vector<RunStats>& runs, std::string& detail, Status& status) {
  int64_t bans = 0, breaches = 0;
  const RunStats* first = nullptr;
  for (const RunStats& run : runs) {
    if (!run.ban)
      continue;
    bans += run.ban->bans;
    breaches += run.ban->breaches;
    if (first == nullptr && run.ban->first)
      first = &run;
  }
  if (first == nullptr) {
    if (judged_as_ban(runs))
      detail += fmt::format("; {} proved, none admitted during one", config::counted(bans, "ban"));
    return;
  }
  const BanBreach& breach = *first->ban->first;
  status = Status::fail;
  detail = fmt::format(
      "run {} identity {}: request {} sent {:.1f}ms into the run was admitted during a ban (begun "
      "by {:.1f}ms, not over before {:.1f}ms); {} of {} proved; {}",
      first->run, breach.identity, breach.seq, ms_of(breach.sent_ns), ms_of(breach.banned_ns),
      ms_of(breach.ban_end_ns), config::counted(breaches, "admission"),
      config::counted(bans, "ban"), detail);
}

}  // namespace

CheckResult check_contract(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (params.contract == "concurrency")
    return check_concurrency_contract(runs, params);
  if (params.contract == "slow-down")
    return check_slow_down_contract(runs, params);
  const RunStats* worst = run_with_worst_span(runs);
  if (worst == nullptr || worst->contract.worst.count == 0)
    return {"contract", Status::skip, "no admissions to audit"};
  std::string detail =
      fmt::format("{} contract, worst span {}", params.contract, span_detail(*worst));
  if (params.contract.starts_with("fixed")) {
    const RunStats* burst = &runs.front();
    for (const RunStats& run : runs) {
      if (run.contract.boundary_burst.count > burst->contract.boundary_burst.count)
        burst = &run;
    }
    const AdmissionPeak& span = burst->contract.boundary_burst;
    detail += fmt::format("; boundary burst (worst sliding span) {} within {:.1f}ms in run {}",
                          span.count, ms_of(span.length_ns), burst->run);
  }
  if (params.contract.starts_with("sliding-counter")) {
    const RunStats* most = &runs.front();
    for (const RunStats& run : runs) {
      if (run.contract.sliding_window.count > most->contract.sliding_window.count)
        most = &run;
    }
    const AdmissionPeak& span = most->contract.sliding_window;
    detail += fmt::format(
        "; most in a true sliding window {} within {:.1f}ms in run {} (a sliding-window counter "
        "may admit up to twice its limit {} there)",
        span.count, ms_of(span.length_ns), most->run, params.limit);
  }
  if (params.contract == "queue") {
    const int64_t nodelay = worst->queue ? worst->queue->nodelay : 0;
    detail += nodelay > 0
                  ? fmt::format(
                        "; departures against 1 + {} undelayed + refill over the span (a queue "
                        "lets its first {} excess through at once, then one at a time)",
                        nodelay, nodelay)
                  : std::string(
                        "; departures against 1 + refill over the span (a queue lets "
                        "one leave at a time)");
  }
  detail += " (each admission placed where it favours the limiter, between its send and reply)";
  Status status = worst->contract.worst.exceeded() ? Status::fail : Status::pass;
  if (status == Status::pass)
    detail += unknown_phase_note(params, true);
  else
    detail += skew_detail(*worst, params);
  add_ban_verdict(runs, detail, status);
  return {"contract", status, std::move(detail)};
}

CheckResult check_delay(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (params.contract == "slow-down")
    return check_slow_down_delay(runs, params);
  if (params.contract != "queue")
    return {"delay", Status::skip, "only with --contract queue or slow-down"};
  const RunStats* worst = nullptr;
  for (const RunStats& run : runs) {
    if (!run.queue || !run.queue->longest)
      continue;
    if (worst == nullptr || run.queue->excess_wait_ns() > worst->queue->excess_wait_ns())
      worst = &run;
  }
  if (worst == nullptr)
    return {"delay", Status::skip, "no admissions to audit"};
  const QueueAudit& queue = *worst->queue;
  const QueueWait& longest = *queue.longest;
  const std::string detail = fmt::format(
      "run {} identity {}: request {} sent {:.1f}ms into the run waited {:.1f}ms, {:.1f}ms "
      "beyond the unloaded latency ({:.1f}ms); the queue promises at most {:.1f}ms ({}), "
      "tolerance {:.1f}ms",
      worst->run, longest.identity, longest.seq, ms_of(longest.sent_ns), ms_of(longest.wait_ns),
      ms_of(longest.wait_ns - queue.unloaded_ns), ms_of(queue.unloaded_ns),
      ms_of(queue.promised_wait_ns),
      queue.nodelay > 0 ? fmt::format("(queue - {} undelayed) / refill", queue.nodelay)
                        : std::string("queue / refill"),
      ms_of(queue.tolerance_ns));
  return {"delay", queue.waited_too_long() ? Status::fail : Status::pass, detail};
}

namespace {

// A run that admitted nothing: every request decided was denied, the first one too, and none
// may have been admitted unseen (an errored request that reached the limiter), under no fault.
bool admitted_nothing(const RunStats& run) {
  const bool faulted =
      std::ranges::any_of(run.faults, [](const FaultWindow& f) { return f.applied; });
  return run.allowed == 0 && run.denied > 0 && run.unknown == 0 && !faulted;
}

// Nothing admitted is never a pass: on fresh state it proves the limiter admits nothing; on
// state that may be an earlier test's it proves nothing either way, and the test cannot pass.
std::optional<CheckResult> nothing_admitted(const std::vector<RunStats>& runs,
                                            const CheckParams& params) {
  const auto found = std::ranges::find_if(runs, admitted_nothing);
  if (found == runs.end())
    return std::nullopt;
  const RunStats& run = *found;
  const std::string what =
      fmt::format("run {} admitted none of its {} ({} denied, the first one too)", run.run,
                  config::counted(run.allowed + run.denied + run.errors, "request"), run.denied);
  if (params.fresh_state) {
    return CheckResult{"utilisation", Status::fail,
                       what +
                           " on limiter state of its own: the limiter admits nothing (a limit "
                           "of 0, or a denial whatever the count)"};
  }
  CheckResult result{
      "utilisation", Status::fail,
      what + fmt::format(
                 ": the limiter admits nothing (a limit of 0?), or the "
                 "identity was used up before the test{}; nothing "
                 "admitted is no pass",
                 params.identity_note.empty() ? std::string() : " (" + params.identity_note + ")")};
  result.inconclusive = true;
  return result;
}

}  // namespace

CheckResult check_utilisation(const std::vector<RunStats>& runs, const CheckParams& params) {
  const bool queue = params.contract == "queue";
  const bool bucket = bucket_contract(params.contract);
  const bool banned = judged_as_ban(runs);
  const char* room = queue    ? "queue"
                     : bucket ? "bucket"
                     : banned ? "window (no ban could still be in force)"
                              : "window";
  if (auto nothing = nothing_admitted(runs, params))
    return *std::move(nothing);
  if (params.contract == "concurrency")
    return check_concurrency_utilisation(runs, params);
  if (params.contract == "slow-down")
    return check_slow_down_utilisation(runs, params);
  // One window (or a bucket's refill) proves nothing: state from before the run may explain a
  // denial there, and under-admission within one burst is what --exact judges.
  std::vector<const RunStats*> judged;
  const RunStats* widest = nullptr;
  for (const RunStats& run : runs) {
    if (run.allowed + run.denied == 0)
      continue;
    if (widest == nullptr || run.send_span_ns > widest->send_span_ns)
      widest = &run;
    if (params.exact || run.send_span_ns > run.memory_ns)
      judged.push_back(&run);
  }
  if (widest == nullptr)
    return {"utilisation", Status::skip, "no request was decided"};
  if (judged.empty()) {
    return {"utilisation", Status::skip,
            fmt::format("every run sent its requests within {} ({:.1f}ms <= {:.1f}ms): a "
                        "single burst shows no lock-out (--exact judges it)",
                        queue    ? "one drain of the queue"
                        : bucket ? "one bucket refill"
                        : params.contract.starts_with("sliding-counter")
                            ? "two windows (a counter weighs the previous one)"
                            : "one window",
                        ms_of(widest->send_span_ns), ms_of(widest->memory_ns))};
  }
  int64_t lockouts = 0, denials = 0;
  const RunStats* worst_run = nullptr;
  const RunStats* lowest = nullptr;
  for (const RunStats* run : judged) {
    lockouts += run->lockouts.count;
    denials += run->lockouts.judged;
    const auto& worst = run->lockouts.worst;
    if (worst && (worst_run == nullptr || worst->used < worst_run->lockouts.worst->used))
      worst_run = run;
    if (lowest == nullptr || run->utilisation.ratio() < lowest->utilisation.ratio())
      lowest = run;
  }
  const Utilisation& share = lowest->utilisation;
  // A replay of the window alone says nothing of a ban's share.
  const std::string ratio =
      banned ? fmt::format("run {} identity {} admitted {}", lowest->run, share.identity,
                           share.admitted)
             : fmt::format(
                   "run {} identity {} admitted {} of the {} the {} contract allows for its "
                   "requests ({:.0f}%)",
                   lowest->run, share.identity, share.admitted, share.allowed, params.contract,
                   share.ratio() * 100.0);
  const std::string unknown = share.unknown > 0
                                  ? fmt::format(
                                        " ({} of them unknown: errored after sending, counted as "
                                        "possibly admitted)",
                                        share.unknown)
                                  : std::string();
  if (worst_run != nullptr) {
    const LockOut& worst = *worst_run->lockouts.worst;
    return {
        "utilisation", Status::fail,
        fmt::format("run {} identity {}: request {} sent {:.1f}ms into the run was denied while "
                    "the {} had room ({:.3g} of {:.3g} used); {} of {} denials judged came "
                    "with room; {}{}",
                    worst_run->run, worst.identity, worst.seq, ms_of(worst.sent_ns), room,
                    worst.used, worst.capacity, lockouts, denials, ratio + unknown,
                    denial_counting_text(judged, params))};
  }
  // Under-admission is judged where the replay's share means something (RunStats::share_judged:
  // not for a group's shared allowance, costs, or parts that count denials).
  if (params.exact && lowest->share_judged && share.ratio() < k_min_utilisation) {
    return {"utilisation", Status::fail,
            ratio + unknown + fmt::format(" < {:.0f}%", k_min_utilisation * 100)};
  }
  return {"utilisation", Status::pass,
          fmt::format("{} denials judged, none while the {} had room; {}{}{}", denials, room, ratio,
                      unknown, unknown_phase_note(params, true))};
}

CheckResult check_retry_accuracy(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (params.contract == "concurrency") {
    return {"retry-after-accuracy", Status::skip,
            "a concurrency cap frees a place when a request finishes, which no hint can know "
            "(hints are judged present, valid and bounded)"};
  }
  std::map<int64_t, int64_t> errors;  // error_ms -> hints, over every run
  int64_t judged = 0;
  int64_t early = 0, late = 0, unexplained = 0;
  const HintError* worst = nullptr;
  int worst_run = 0;
  // A hint to a request that can never pass promises what no wait keeps: a fail on its own.
  int64_t never = 0;
  const RunStats* never_run = nullptr;
  for (const RunStats& run : runs) {
    never += run.retry_accuracy.never_admissible;
    if (never_run == nullptr && run.retry_accuracy.never_worst)
      never_run = &run;
  }
  if (never_run != nullptr) {
    const HintError& first = *never_run->retry_accuracy.never_worst;
    return {"retry-after-accuracy", Status::fail,
            fmt::format("{} told to retry requests that cost more than the {} contract ever "
                        "holds: they can never pass (first: run {} identity {} request {} told "
                        "{}ms); deny them without a retry hint, or refuse them outright",
                        config::counted(never, "hint"), params.contract, never_run->run,
                        first.identity, first.seq, first.hint_ms)};
  }
  for (const RunStats& run : runs) {
    early += run.retry_accuracy.early;
    late += run.retry_accuracy.late;
    unexplained += run.retry_accuracy.unexplained;
    for (const auto& [error_ms, count] : run.retry_accuracy.errors.counts())
      errors[error_ms] += count;
    judged += run.retry_accuracy.errors.size();
    const auto& error = run.retry_accuracy.errors.worst();
    if (error && (worst == nullptr || std::llabs(error->error_ms) > std::llabs(worst->error_ms))) {
      worst = &*error;
      worst_run = run.run;
    }
  }
  const std::string unjudged =
      unexplained == 0 ? ""
                       : fmt::format(
                             "; {} not judged: the admissions seen left room (state from "
                             "before the run, or other clients)",
                             config::counted(unexplained, "denial"));
  if (errors.empty()) {
    return {"retry-after-accuracy", Status::skip,
            unexplained == 0 ? "no retry hints on denials" : unjudged.substr(2)};
  }
  const int64_t median = error_at_rank(errors, judged / 2);
  const std::vector<int32_t> resolutions = judged_resolutions(runs);
  std::string tolerances = tolerances_text(resolutions, params.retry_tolerance);
  // Why a script's hints were judged as whole seconds, or a hint that they could have been.
  const bool rejudged = std::ranges::any_of(
      runs, [](const RunStats& run) { return run.retry_accuracy.judged_as_whole_seconds; });
  const bool all_whole = std::ranges::all_of(
      runs, [](const RunStats& run) { return run.retry_accuracy.finer_hints_whole_seconds; });
  if (rejudged && params.hint_resolution == config::HintResolution::seconds) {
    tolerances += ", as --hint-resolution 1s asks";
  } else if (rejudged) {
    tolerances +=
        "; every hint a multiple of 1000ms, so --hint-resolution auto judged them as "
        "whole seconds";
  } else if (params.hint_resolution == config::HintResolution::milliseconds && all_whole &&
             std::ranges::find(resolutions, 1) != resolutions.end()) {
    tolerances +=
        "; every hint a multiple of 1000ms, judged to the millisecond as "
        "--hint-resolution 1ms asks (auto or 1s judges them as whole seconds)";
  } else if (params.hint_resolution == config::HintResolution::auto_detect && all_whole &&
             std::ranges::find(resolutions, 1) != resolutions.end() &&
             std::ranges::none_of(runs, [](const RunStats& run) {
               return run.retry_accuracy.instants_off_second_grid;
             })) {
    tolerances +=
        "; every hint a multiple of 1000ms, but so was every instant apart (a virtual clock or "
        "a schedule of whole seconds), so --hint-resolution auto judged them to the "
        "millisecond (--hint-resolution 1s judges them as whole seconds)";
  }
  // --contract ban: hints are held to the ban's end, not to the window's.
  const bool banned = judged_as_ban(runs);
  const std::string against =
      banned ? std::string("the ban's end") : fmt::format("the {} contract", params.contract);
  std::string detail =
      fmt::format("{} against {}: error median {}ms, from {}ms to {}ms{}",
                  config::counted(judged, "hint"), against, median, errors.begin()->first,
                  errors.rbegin()->first, tolerances.empty() ? "" : " (" + tolerances + ")") +
      unjudged;
  if (early == 0 && late == 0)
    return {"retry-after-accuracy", Status::pass, std::move(detail)};
  std::string beyond;
  if (resolutions.size() == 1) {
    const HintTolerance allowed = params.retry_tolerance.at(resolutions.front());
    beyond = fmt::format("{} early by > {}, {} late by > {}", config::counted(early, "hint"),
                         tolerance_text(allowed.early_ms), late, tolerance_text(allowed.late_ms));
  } else {
    beyond = fmt::format("{} early, {} late beyond their tolerance", config::counted(early, "hint"),
                         late);
  }
  detail = fmt::format("{}; worst: run {} identity {} request {} told {}ms, off by {}ms{}; ",
                       beyond, worst_run, worst->identity, worst->seq, worst->hint_ms,
                       worst->error_ms, unit_mix_up(*worst)) +
           detail;
  return {"retry-after-accuracy", Status::fail, std::move(detail)};
}

CheckResult check_retry_honest(const CheckParams& params,
                               const std::optional<RetryVerification>& verification) {
  if (!params.verify_retry_after || !verification)
    return {"retry-after-honest", Status::skip, "without --verify-retry-after"};
  const RetryVerification& v = *verification;
  if (!v.attempted)
    return {"retry-after-honest", Status::skip, v.skip_reason};
  const std::string phases =
      v.phases > 1
          ? fmt::format(" (the earliest instant of {} hints read a quarter of a second apart)",
                        v.phases)
          : std::string();
  const std::string detail =
      fmt::format("run {} identity {} was told {}ms{}; retried after {}ms: {}", v.run, v.identity,
                  v.told_ms, phases, v.waited_ms, v.outcome);
  return {"retry-after-honest", v.allowed ? Status::pass : Status::fail, detail};
}

}  // namespace rlcheck::checks
