#include "report/human_report.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/admission_peak.hpp"
#include "config/count_text.hpp"
#include "config/duration.hpp"
#include "report/compare_row.hpp"
#include "report/find_max_report.hpp"

namespace rlcheck::report {
namespace {

struct Paint {
  bool on;
  std::string operator()(std::string_view text, std::string_view code) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};
constexpr std::string_view k_green = "32";
constexpr std::string_view k_red = "31";
constexpr std::string_view k_yellow = "33";
constexpr std::string_view k_dim = "2";
constexpr std::string_view k_bold = "1";

std::string duration_text(double ms) {
  return ms >= 1000.0 ? fmt::format("{:.2f}s", ms / 1000.0) : fmt::format("{:.1f}ms", ms);
}

bool params_bucket(const Params& params) {
  return checks::bucket_contract(params.contract);
}

// "(advertised)", "(default)", or "" for a flag; a window read off a reset says so.
std::string source_note(const std::string& source, bool from_reset = false) {
  if (source == "flag" || source.empty())
    return "";
  return fmt::format(" ({}{})", source, from_reset ? " reset" : "");
}

// A token bucket or GCRA is audited by its burst and refill, whatever --limit says.
bool audits_bucket(const Params& params) {
  return (params.contract == "token-bucket" || params.contract == "gcra") && params.burst &&
         !params.refill.empty();
}

// "limit 5 per 10s", with where each came from when a flag did not give it (http: the server
// may have advertised them, or nothing did and the defaults stand): "limit 5 per 10s
// (advertised by the server)", "limit 5 (advertised) per 1m (default)". Redis limiters are
// driven with the values shown, default or not, so those are never annotated.
std::string limit_text(const Report& report) {
  const Params& params = report.params;
  if (audits_bucket(params)) {
    // The bucket audited, not the limit per window it was derived from.
    // A bucket in steps with --anchor: where its ticks fall.
    return fmt::format("{} burst {}, refill {}{}", params.contract, *params.burst, params.refill,
                       params.anchor.empty() ? "" : fmt::format(" (ticks {})", params.anchor));
  }
  // A cap has no window.
  if (params.contract == "concurrency")
    return fmt::format("cap {} in progress at once", params.limit);
  const std::string window = config::format_duration(std::chrono::milliseconds(params.window_ms));
  // A slow-down delays past its limit rather than denying (its delays in the contract's name).
  if (params.contract.starts_with("slow-down"))
    return fmt::format("{} per {} at full speed", params.limit, window);
  if (!report.target.advertises_limits)
    return fmt::format("limit {} per {}", params.limit, window);
  const std::string limit_note = source_note(params.limit_source);
  std::string window_note = source_note(params.window_source, params.window_from_reset);
  if (!params.window_readings_ms.empty())
    window_note = " (advertised reset: a timestamp read against Date, ±1s)";
  if (limit_note == window_note) {
    const std::string both =
        params.limit_source == "advertised" ? " (advertised by the server)" : limit_note;
    return fmt::format("limit {} per {}{}", params.limit, window, both);
  }
  return fmt::format("limit {}{} per {}{}", params.limit, limit_note, window, window_note);
}

// ", clock skew 0,+800ms" with --clock-skew, else ""; with `note_unread`, saying so when the
// target never reads the skewed clock.
std::string clock_skew_text(const Params& params, bool note_unread = true) {
  if (params.clock_skew_ms.empty())
    return "";
  std::string skews;
  for (const int64_t skew : params.clock_skew_ms)
    skews += fmt::format("{}{}", skews.empty() ? "" : ",",
                         skew == 0 ? std::string("0") : fmt::format("{:+}ms", skew));
  return fmt::format(", clock skew {}{}", skews,
                     params.clock_skew_read || !note_unread
                         ? ""
                         : " (never read: the limiter is not told the time)");
}

// Loads that could not happen: a line per run that fell more than 10 % of its length (and 1 s)
// behind its schedule, the furthest being its latest request's lateness.
std::string behind_schedule_lines(const Report& report) {
  std::string out;
  for (const auto& run : report.runs) {
    if (!run.lateness)
      continue;
    const double behind_ms = run.lateness->max;
    if (behind_ms <= 1000 || behind_ms * 10 <= run.duration_ms)
      continue;
    out += fmt::format(
        "run {} fell {} behind its schedule (its latest request left that late): the load "
        "measured is not the one planned\n",
        run.run, duration_text(behind_ms));
  }
  return out;
}

// A stage's target rate without noise digits: 100, 0.5.
std::string per_s_text(double per_s) {
  return fmt::format("{:g}", per_s);
}

double peak_per_s(const std::vector<StageParam>& stages) {
  double peak = 0;
  for (const StageParam& stage : stages)
    peak = std::max(peak, stage.target_per_s);
  return peak;
}

std::string header(const Report& report) {
  std::string limiter = report.target.limiter;
  const Params& params = report.params;
  std::string load =
      report.find_max
          ? fmt::format("find-max from {}, steps of {} ({}), {}", params.rate,
                        duration_text(params.duration_ms), config::counted(params.runs, "run"),
                        config::counted(params.concurrency, "connection"))
      : !params.stages.empty()
          ? fmt::format("{} over {} to a peak of {}/s ({} planned) x {}, {}",
                        config::counted(static_cast<int64_t>(params.stages.size()), "stage"),
                        duration_text(params.duration_ms), per_s_text(peak_per_s(params.stages)),
                        config::counted(params.requests, "request"),
                        config::counted(params.runs, "run"),
                        config::counted(params.concurrency, "connection"))
      : params.rate.empty()
          ? fmt::format("{} x {}, concurrency {}", config::counted(params.requests, "request"),
                        config::counted(params.runs, "run"), params.concurrency)
          : fmt::format("{} for {} ({}) x {}, {}", params.rate, duration_text(params.duration_ms),
                        config::counted(params.requests, "request"),
                        config::counted(params.runs, "run"),
                        config::counted(params.concurrency, "connection"));
  if (params.interval_ms > 0)
    load += fmt::format(", one every {}ms", params.interval_ms);
  if (params.identities > 1)
    load += fmt::format(", {} identities", params.identities);
  if (params.identity_dist != "uniform" && params.identities > 1)
    load += fmt::format(" ({})", params.identity_dist);
  else if (params.identity_dist != "uniform")
    load += fmt::format(", identities {}", params.identity_dist);
  if (!params.source_addresses.empty()) {
    load += fmt::format(", from {}",
                        config::counted(static_cast<int64_t>(params.source_addresses.size()),
                                        "source address", "source addresses"));
  }
  load += clock_skew_text(params);
  if (!params.cost.empty())
    load += fmt::format(", costs {} (audited in units)", params.cost);
  if (!params.contract.empty() && !audits_bucket(params))
    load += fmt::format(
        ", contract {}{}", params.contract,
        params.anchor == "first-hit" ? " (first-hit)"
        : params.queue ? fmt::format(" ({} waiting at {}{})", *params.queue, params.refill,
                                     params.nodelay ? fmt::format(", {} undelayed", *params.nodelay)
                                                    : std::string())
                       : std::string());
  std::string where = report.target.embedded ? " (private)" : "";
  if (const auto& topology = params.topology; topology && topology->kind == "cluster") {
    where += fmt::format(" (cluster, {})", config::counted(topology->masters, "master"));
  }
  if (params.pipeline > 1)
    load += fmt::format(", pipeline {}", params.pipeline);
  if (params.arrivals == "poisson")
    load += ", poisson arrivals";
  if (params.virtual_clock)
    load += ", virtual clock";
  if (params.audit == "stream")
    load += ", streamed audit";
  return fmt::format("rlcheck {}  {}{}  {}  {}  {}", report.mode, report.target.url, where, limiter,
                     limit_text(report), load);
}

// --stages: "stages 2s to 100/s, 2s to 400/s, 1s to 0/s (800 requests over 5s)".
std::string stages_line(const Params& params) {
  if (params.stages.empty())
    return "";
  std::string text;
  for (const StageParam& stage : params.stages) {
    text += fmt::format("{}{} to {}/s", text.empty() ? "" : ", ", duration_text(stage.duration_ms),
                        per_s_text(stage.target_per_s));
  }
  return fmt::format("stages {} ({} over {})\n", text, config::counted(params.requests, "request"),
                     duration_text(params.duration_ms));
}

// --stages (at most k_stage_table_rows of them): each run's stages, planned against sent, their
// decisions, latency and how late requests left.
constexpr size_t k_stage_table_rows = 12;

std::string stage_table(const Report& report) {
  if (report.params.stages.empty() || report.params.stages.size() > k_stage_table_rows)
    return "";
  std::string out =
      fmt::format("{:>4} {:>5} {:>15} {:>17} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>9}\n",
                  "run", "stage", "from-to", "target /s", "planned", "sent", "allowed", "denied",
                  "errors", "p50 ms", "p99 ms", "late p99");
  for (const auto& run : report.runs) {
    for (size_t k = 0; k < run.stages.size(); ++k) {
      const checks::StageStats& stage = run.stages[k];
      out += fmt::format(
          "{:>4} {:>5} {:>15} {:>17} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>9}\n", run.run,
          k + 1, fmt::format("{}-{}", duration_text(stage.from_ms), duration_text(stage.to_ms)),
          fmt::format("{}-{}", per_s_text(stage.target_from_per_s),
                      per_s_text(stage.target_to_per_s)),
          stage.planned, stage.sent, stage.allowed, stage.denied, stage.errors,
          histogram_text(stage.latency_p50_ms), histogram_text(stage.latency_p99_ms),
          histogram_text(stage.lateness_p99_ms));
    }
  }
  return out;
}

// --fault: one line per fault per run, "fault pause@1s+1s at 1000ms-2000ms: 0 allowed, 12
// denied, 3 errors during; decided normally again 35ms after" (prefixed "run N: " when there
// are several runs).
std::string fault_lines(const Report& report) {
  const auto ms = [](int64_t ns) { return (ns + 500'000) / 1'000'000; };
  std::string out;
  for (const auto& run : report.runs) {
    const std::string prefix = report.runs.size() > 1 ? fmt::format("run {}: ", run.run) : "";
    for (const checks::FaultWindow& fault : run.faults) {
      if (!fault.applied) {
        out += fmt::format("{}fault {} not applied: {}\n", prefix, fault.spec,
                           fault.error.empty() ? "the run ended first" : fault.error);
        continue;
      }
      const std::string after =
          fault.recovered_after_ns
              ? fmt::format("decided normally again {}ms after", ms(*fault.recovered_after_ns))
          : fault.sent_after > 0 ? std::string("never decided normally again")
                                 : std::string("no request was sent after it");
      out += fmt::format("{}fault {} at {}ms-{}ms: {} allowed, {} denied, {} during; {}\n", prefix,
                         fault.spec, ms(fault.at_ns), ms(fault.until_ns), fault.during_allowed,
                         fault.during_denied, config::counted(fault.during_errors, "error"), after);
    }
  }
  return out;
}

// Many hosts: one line for the session and its clocks, one per worker lost.
std::string worker_lines(const Report& report) {
  if (!report.workers)
    return "";
  const Workers& workers = *report.workers;
  std::string hosts;
  for (const WorkerSummary& worker : workers.list) {
    hosts += fmt::format("{}{}{} {} ({:+.3f} ms)", hosts.empty() ? "" : ", ", worker.index,
                         worker.host.empty() ? "" : "@" + worker.host,
                         config::counted(worker.requests, "request"), worker.clock_offset_ms);
  }
  std::string out = fmt::format(
      "session {}: {} ({}); clocks agree to within {:.3f} ms, added to the time tolerances\n",
      workers.session, config::counted(static_cast<int64_t>(workers.list.size()), "worker"), hosts,
      workers.clock_uncertainty_ms);
  if (!workers.lost.empty())
    out += fmt::format("{}: its requests after that are missing; the test could not be done\n",
                       workers.lost);
  if (workers.merged_by != 0) {
    out += fmt::format(
        "worker {} merged the runs in worker 0's place: the faults, resets and "
        "key audits worker 0 does were not done\n",
        workers.merged_by);
  }
  return out;
}

// What happened on the way, when anything did: runs stopped on errors, redirects and
// reconnects, keys rlcheck could not delete.
std::string incident_lines(const Report& report) {
  std::string out = worker_lines(report) + fault_lines(report);
  for (const auto& run : report.runs) {
    if (run.stopped_on_errors) {
      out += fmt::format("run {} stopped on errors after {} of {}: no more were sent\n", run.run,
                         run.requests, config::counted(report.params.requests, "request"));
    }
  }
  for (const auto& run : report.runs) {
    if (!run.limiter_clock || run.limiter_clock->slack_ns == 0)
      continue;
    const engine::ClockDrift& clock = *run.limiter_clock;
    const double ppm = clock.over_ns > 0 ? static_cast<double>(clock.ahead_ns) * 1e6 /
                                               static_cast<double>(clock.over_ns)
                                         : 0.0;
    out += fmt::format(
        "run {}: {} moved {:+.3f} ms against rlcheck's steady clock over {:.3f} s ({:+.0f} "
        "ppm; {} assumed): the audits allow {:.3f} ms more\n",
        run.run, clock.source, static_cast<double>(clock.ahead_ns) / 1e6,
        static_cast<double>(clock.over_ns) / 1e9, ppm, engine::k_assumed_drift_ppm,
        static_cast<double>(clock.slack_ns) / 1e6);
  }
  int64_t unknown = 0;
  for (const auto& run : report.runs)
    unknown += run.unknown;
  if (unknown > 0) {
    out += fmt::format(
        "{} unknown (errored after sending): possibly admitted, never counted "
        "over the limit\n",
        unknown);
  }
  const TransportCounts t = report.transport.value_or(TransportCounts{});
  if (t.moved + t.ask + t.tryagain > 0)
    out += fmt::format("redirects: moved {}, ask {}, tryagain {}\n", t.moved, t.ask, t.tryagain);
  if (t.reconnects > 0)
    out += fmt::format("reconnects: {}\n", t.reconnects);
  if (report.releases) {
    const ReleaseCounts& r = *report.releases;
    out += fmt::format("releases: {} released, {} failed{}\n", r.released, r.failed,
                       r.failed > 0 ? fmt::format(" (each read as holding its place to the end; "
                                                  "first: {})",
                                                  r.first_error)
                                    : "");
  }
  if (!report.keys_left.empty()) {
    out += fmt::format("keys left behind: {} (Redis was unreachable to delete them)\n",
                       fmt::join(report.keys_left, ", "));
  }
  return out;
}

// http: what came back and what the rate-limit headers said, over all runs.
std::string status_lines(const Report& report) {
  std::map<std::string, int64_t> statuses;
  checks::AdvertisedStats advertised;
  auto widen = [](std::optional<int64_t>& low, std::optional<int64_t>& high,
                  const std::optional<int64_t>& run_low, const std::optional<int64_t>& run_high) {
    if (!run_low)
      return;
    low = std::min(low.value_or(*run_low), *run_low);
    high = std::max(high.value_or(*run_high), *run_high);
  };
  for (const auto& run : report.runs) {
    for (const auto& [status, count] : run.status_counts)
      statuses[status] += count;
    const auto& a = run.advertised;
    widen(advertised.limit_min, advertised.limit_max, a.limit_min, a.limit_max);
    widen(advertised.remaining_min, advertised.remaining_max, a.remaining_min, a.remaining_max);
    widen(advertised.reset_min_s, advertised.reset_max_s, a.reset_min_s, a.reset_max_s);
    advertised.malformed += a.malformed;
    if (advertised.malformed_sample.empty())
      advertised.malformed_sample = a.malformed_sample;
  }
  std::string out = "statuses:";
  for (const auto& [status, count] : statuses)
    out += fmt::format(" {} x{}", status, count);
  if (statuses.empty())
    out += " none";
  out += "\n";
  // Only what some response advertised; no line when none did.
  std::vector<std::string> parts;
  auto add = [&parts](std::string_view name, const std::optional<int64_t>& low,
                      const std::optional<int64_t>& high, std::string_view unit) {
    if (!low)
      return;
    parts.push_back(*low == *high ? fmt::format("{} {}{}", name, *low, unit)
                                  : fmt::format("{} {}-{}{}", name, *low, *high, unit));
  };
  add("limit", advertised.limit_min, advertised.limit_max, "");
  add("remaining", advertised.remaining_min, advertised.remaining_max, "");
  add("reset", advertised.reset_min_s, advertised.reset_max_s, "s");
  std::string line = fmt::format("{}", fmt::join(parts, ", "));
  if (advertised.malformed > 0) {
    line += fmt::format("{}{} malformed, e.g. {}", line.empty() ? "" : "; ", advertised.malformed,
                        advertised.malformed_sample);
  }
  if (!line.empty())
    out += "advertised: " + line + "\n";
  return out;
}

const char* mark(checks::Status status) {
  switch (status) {
    case checks::Status::pass:
      return "✓";
    case checks::Status::fail:
      return "✗";
    case checks::Status::skip:
      return "-";
  }
  return "-";
}

std::string_view verdict_color_of(const Report& report) {
  if (report.interrupted)
    return k_yellow;
  return report.verdict == checks::Verdict::pass ? k_green : k_red;
}

}  // namespace

std::string contract_text(const Report& report) {
  return limit_text(report);
}

std::string header_line(const Report& report) {
  return header(report);
}

std::string verdict_line(const Report& report) {
  // An error verdict is about the errors check, whatever else failed.
  const bool error = report.verdict == checks::Verdict::error;
  for (const auto& check : report.checks) {
    // A fail names the check that proved it; an error the errors check, or the one that left
    // the test without a verdict.
    if (check.status == checks::Status::fail &&
        (error ? check.id == "errors" || check.inconclusive : !check.inconclusive)) {
      if (report.interrupted) {
        return fmt::format("INTERRUPTED: partial results; so far {}: {}", check.id, check.detail);
      }
      return fmt::format("{}: {}: {}", error ? "ERROR" : "FAIL", check.id, check.detail);
    }
  }
  if (error && report.workers && !report.workers->lost.empty())
    return fmt::format("ERROR: {}: the test could not be done", report.workers->lost);
  return report.interrupted ? "INTERRUPTED: partial results" : "PASS";
}

namespace {

// Several contracts: a line per part, its worst span over the runs against what it allows.
std::string part_lines(const Report& report, const Paint& paint) {
  std::string out;
  const size_t parts = report.runs.front().parts.size();
  size_t width = 0;
  for (const checks::PartAudit& part : report.runs.front().parts)
    width = std::max(width, part.spec.size());
  for (size_t p = 0; p < parts; ++p) {
    const checks::RunStats* worst = &report.runs.front();
    for (const auto& run : report.runs) {
      if (run.parts[p].contract.worst.excess() > worst->parts[p].contract.worst.excess())
        worst = &run;
    }
    const checks::PartAudit& part = worst->parts[p];
    const checks::AdmissionPeak& span = part.contract.worst;
    const bool over = span.exceeded();
    const std::string verdict =
        over ? paint(fmt::format("exceeded in run {}", worst->run), k_red) : std::string("held");
    out += fmt::format("  {:<{}}  most {} within {:.2f}s against {:.4g} per {}; {}\n", part.spec,
                       width, span.count, static_cast<double>(span.length_ns) / 1e9, span.allowance,
                       part.per_group ? "group" : "identity", verdict);
  }
  return out;
}

}  // namespace

std::string render_human(const Report& report, const TextStyle& style) {
  const Paint paint{style.color};
  const std::string verdict = verdict_line(report);
  const std::string_view verdict_color = verdict_color_of(report);
  if (style.quiet)
    return paint(verdict, verdict_color) + "\n";

  std::string out = paint(header(report), k_bold) + "\n";
  if (const std::string note = clock_note(report); !note.empty())
    out += fmt::format("virtual clock: {}\n", note);
  out += stages_line(report.params);
  // Latency in ms: p50, p90, p99 and p999 (send to reply; the open model counts from the due
  // instant). 94 columns, so the table reads in a 100-column terminal.
  out += fmt::format("{:>4} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8} {:>15} {:>10}\n", "run",
                     "allowed", "denied", "errors", "p50 ms", "p90 ms", "p99 ms", "p999 ms",
                     "retry hint s", "duration");
  for (const auto& run : report.runs) {
    std::string allowed = fmt::format("{:>8}", run.allowed);
    if (run.peak.exceeded())
      allowed = paint(allowed, k_red);
    out += fmt::format("{:>4} {} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8} {:>15} {:>10}\n", run.run,
                       allowed, run.denied, run.errors, histogram_text(run.latency.p50),
                       histogram_text(run.latency.p90), histogram_text(run.latency.p99),
                       histogram_text(run.latency.p999), retry_hint_seconds(run.retry),
                       duration_text(run.duration_ms));
  }
  out += stage_table(report);
  out += behind_schedule_lines(report);
  const Summary& s = report.summary;
  const checks::RunStats* worst = nullptr;
  for (const auto& run : report.runs) {
    if (worst == nullptr || run.peak.count > worst->peak.count)
      worst = &run;
  }
  const bool bucket = params_bucket(report.params);
  const std::string against =
      worst == nullptr ? ""
      : worst->concurrency
          ? fmt::format("most in flight at once {} surely, at most {} possibly, against cap {}",
                        worst->concurrency->surely_at_once, worst->concurrency->possibly_at_once,
                        report.params.limit)
      : worst->slow_down
          ? fmt::format("longest delay {:.1f}ms beyond the unloaded latency ({:.1f}ms)",
                        static_cast<double>(worst->slow_down->longest_extra_ns) / 1e6,
                        static_cast<double>(worst->slow_down->unloaded_ns) / 1e6)
      : bucket ? fmt::format("most in one span {} against {:.4g} ({} + refill)", worst->peak.count,
                             worst->peak.allowance, report.params.queue ? "queue + 1" : "burst")
               : fmt::format("most in one window {} against limit {}", worst->peak.count,
                             report.params.limit);
  const bool parts = !report.runs.empty() && !report.runs.front().parts.empty();
  out += fmt::format("allowed min {} / median {} / max {}; {}; {} of {} over\n", s.allowed_min,
                     s.allowed_median, s.allowed_max,
                     parts ? "several contracts, each below" : against, s.runs_over_limit,
                     config::counted(static_cast<int64_t>(report.runs.size()), "run"));
  if (parts)
    out += part_lines(report, paint);
  int64_t requests = 0;
  for (const auto& run : report.runs)
    requests += run.requests;
  out += fmt::format("throughput {:.0f} req/s ({} over {})\n", s.requests_per_second,
                     config::counted(requests, "request"),
                     config::counted(static_cast<int64_t>(report.runs.size()), "run"));
  if (report.find_max)
    out += find_max_lines(*report.find_max);
  if (report.target.answers_statuses)
    out += status_lines(report);
  out += incident_lines(report);
  for (const auto& check : report.checks) {
    const std::string_view color = check.warning                          ? k_yellow
                                   : check.status == checks::Status::pass ? k_green
                                   : check.status == checks::Status::fail ? k_red
                                                                          : k_dim;
    // A failure points at its page: what the check proves and how to fix the limiter.
    const std::string explain = check.status == checks::Status::fail
                                    ? fmt::format(" [rlcheck explain {}]", check.id)
                                    : std::string();
    out += fmt::format(
        "{} {:<20} {}{}\n", paint(check.warning ? "!" : mark(check.status), color), check.id,
        check.status == checks::Status::skip ? paint(check.detail, k_dim) : check.detail,
        explain.empty() ? explain : paint(explain, k_dim));
  }
  out += paint(verdict, verdict_color) + "\n";
  return out;
}

std::string render_compare(const std::vector<Report>& reports, const TextStyle& style) {
  const Paint paint{style.color};
  std::string out;
  if (style.quiet) {
    // One verdict line per target, named: which strategy or endpoint failed, and why.
    for (const Report& report : reports) {
      out += fmt::format("{}: {}\n", compare_name(report),
                         paint(verdict_line(report), verdict_color_of(report)));
    }
    return out;
  }
  if (reports.empty())
    return out;
  const Report& first = reports.front();
  const bool own_limits = first.target.advertises_limits;
  // Strategies share the limit they are driven with; endpoints may each advertise their own,
  // so theirs goes in a column of its own.
  const std::string limit = own_limits ? "" : fmt::format("{}  ", limit_text(first));
  out += paint(fmt::format("rlcheck compare  {}{}{} x {}, concurrency {}{}",
                           shared_url(reports) ? first.target.url + "  " : "", limit,
                           config::counted(first.params.requests, "request"),
                           config::counted(first.params.runs, "run"), first.params.concurrency,
                           clock_skew_text(first.params, false)),
               k_bold) +
         "\n";
  size_t width = 16;
  for (const Report& report : reports)
    width = std::max(width, compare_name(report).size());
  out +=
      fmt::format("{:<{}} {}{:>19} {:>6} {:>15} {:>9} {:>9} {:>10}  {:<11} {}\n", first.target.noun,
                  width, own_limits ? "limit          " : "", "allowed min/med/max", "over",
                  "retry hint s", "p50 ms", "p99 ms", "req/s", "verdict", "failed checks");
  for (const Report& report : reports) {
    const CompareRow row = compare_row(report);
    const std::string verdict = fmt::format("{:<11}", checks::verdict_name(report.verdict));
    out += fmt::format(
        "{:<{}} {}{:>19} {:>6} {:>15} {:>9} {:>9} {:>10.0f}  {} {}\n", row.name, width,
        own_limits ? fmt::format("{:<15}", row.limit) : "", row.allowed, row.over, row.retry_hint,
        histogram_text(row.p50_ms), histogram_text(row.p99_ms), row.requests_per_second,
        paint(verdict, verdict_color_of(report)),
        row.failed_checks.empty() ? std::string("-")
                                  : fmt::format("{}", fmt::join(row.failed_checks, ",")));
  }
  return out;
}

}  // namespace rlcheck::report
