#include "report/probe_report.hpp"

#include <cmath>

#include <fmt/format.h>

namespace rlcheck::report {
namespace {

using nlohmann::json;

template <typename T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string contract_text(const checks::InferredContract& inferred) {
  const std::string& algorithm = inferred.algorithm;
  if (algorithm == "none")
    return "none: nothing limits";
  if (algorithm == "unknown")
    return fmt::format("could not tell: {}", inferred.reason);
  if (algorithm == "fixed" || algorithm == "sliding") {
    return fmt::format("{} window{}, limit {} per {} ms (±{:.0f})", algorithm,
                       inferred.anchor ? fmt::format(" (anchor {})", *inferred.anchor) : "",
                       inferred.limit.value_or(0), inferred.window_ms.value_or(0),
                       inferred.window_tolerance_ms);
  }
  if (algorithm == "sliding-counter") {
    return fmt::format("sliding-window counter (anchor {}), limit {} per {} ms (±{:.0f})",
                       inferred.anchor.value_or("clock"), inferred.limit.value_or(0),
                       inferred.window_ms.value_or(0), inferred.window_tolerance_ms);
  }
  if (algorithm == "queue") {
    return fmt::format("queue, {:.3g} leave per second, {}", inferred.refill_per_s.value_or(0),
                       inferred.queue ? fmt::format("{} may wait", *inferred.queue)
                                      : std::string("how many may wait not found"));
  }
  if (algorithm == "concurrency") {
    return fmt::format(
        "concurrency cap, at most {} in progress at once (admitted replies took "
        "{:.0f} ms at least)",
        inferred.limit.value_or(0), inferred.hold_ms.value_or(0));
  }
  if (algorithm == "ban") {
    return fmt::format(
        "ban: {} in a {} window of {} ms (±{:.0f}) ban for {} ms (±{:.0f}) from the request that "
        "begins it",
        inferred.limit.value_or(0), inferred.inner.value_or("sliding"),
        inferred.window_ms.value_or(0), inferred.window_tolerance_ms, inferred.ban_ms.value_or(0),
        inferred.ban_tolerance_ms);
  }
  if (algorithm == "slow-down") {
    return fmt::format(
        "slow-down: past {} in a {} window of {} ms (±{:.0f}), each request {:.1f} ms (±{:.1f}) "
        "later than the one before, {}",
        inferred.limit.value_or(0), inferred.anchor.value_or("first-hit"),
        inferred.window_ms.value_or(0), inferred.window_tolerance_ms,
        inferred.delay_step_ms.value_or(0), inferred.delay_step_tolerance_ms,
        inferred.max_delay_ms ? fmt::format("up to {:.0f} ms (±{:.0f})", *inferred.max_delay_ms,
                                            inferred.max_delay_tolerance_ms)
                              : std::string("no longest delay reached"));
  }
  if (algorithm == "denial-counting") {
    return fmt::format(
        "counts denials: limit {}, and a client that keeps sending is never "
        "admitted again",
        inferred.limit.value_or(0));
  }
  if (inferred.step_tokens && inferred.step_interval_ms) {
    return fmt::format("{}, burst {}, refill {} at each tick, {} ms (±{:.0f}) apart", algorithm,
                       inferred.burst.value_or(0), *inferred.step_tokens,
                       *inferred.step_interval_ms, inferred.step_interval_tolerance_ms);
  }
  return fmt::format("{}, burst {}, refill {:.3g}/s", algorithm, inferred.burst.value_or(0),
                     inferred.refill_per_s.value_or(0));
}

std::string advertised_text(const ProbeReport& report) {
  if (!report.advertised.any())
    return "nothing";
  std::string text =
      report.advertised.limit ? fmt::format("limit {}", *report.advertised.limit) : "no limit";
  if (report.advertised.window_s)
    text += fmt::format(" per {}s", *report.advertised.window_s);
  if (report.judgement.matches == true)
    text += ": matches";
  if (report.judgement.matches == false) {
    for (const std::string& reason : report.judgement.reasons)
      text += fmt::format("\n              CONTRADICTED: {}", reason);
  }
  return text;
}

// [low, high] where the true refill can lie (high null: unbounded); null without a refill.
json refill_interval(const checks::InferredContract& inferred) {
  if (!inferred.refill_per_s)
    return nullptr;
  const checks::RateInterval& interval = inferred.refill_interval;
  return json::array({interval.low_per_s, std::isfinite(interval.high_per_s)
                                              ? json(interval.high_per_s)
                                              : json(nullptr)});
}

json second_limit(const checks::InferredContract& inferred) {
  if (!inferred.second)
    return nullptr;
  const checks::SecondLimitSearch& second = *inferred.second;
  return {{"search", second.outcome},
          {"reason", second.reason.empty() ? json(nullptr) : json(second.reason)},
          {"requests", second.requests},
          {"admitted", second.admitted},
          {"span_ms", second.span_ms},
          {"rate_per_s", second.rate_per_s},
          {"limit", or_null(second.limit)},
          {"window_ms", or_null(second.window_ms)},
          {"window_tolerance_ms",
           second.window_ms ? json(std::llround(second.window_tolerance_ms)) : json(nullptr)},
          {"window_from", !second.window_ms         ? json(nullptr)
                          : second.window_from_hint ? json("hint")
                                                    : json("readmission")},
          {"max_time_needed_ms", or_null(second.max_time_needed_ms)}};
}

std::string second_text(const checks::InferredContract& inferred) {
  const checks::SecondLimitSearch& second = *inferred.second;
  const double span_s = static_cast<double>(second.span_ms) / 1000;
  if (second.outcome == "found" && second.limit && second.window_ms) {
    return fmt::format("sliding window, limit {} per {} ms (±{:.0f}), sustained at {:.3g}/s",
                       *second.limit, *second.window_ms, second.window_tolerance_ms,
                       second.rate_per_s);
  }
  if (second.outcome == "found" && second.limit)
    return fmt::format("a limit of {}, its window not measured", *second.limit);
  if (second.outcome == "none-seen") {
    return fmt::format(
        "none seen: {} requests over {:.1f} s at {:.3g}/s (a longer one not ruled "
        "out)",
        second.admitted, span_s, second.rate_per_s);
  }
  return fmt::format("not looked for: {}", second.reason);
}

}  // namespace

json probe_to_json(const ProbeReport& report) {
  const checks::InferredContract& inferred = report.inferred;
  json advertised = json::object();
  if (report.advertised.limit)
    advertised["limit"] = *report.advertised.limit;
  if (report.advertised.window_s)
    advertised["window_ms"] = *report.advertised.window_s * 1000;
  return {{"schema", "rlcheck.probe/v1"},
          {"mode", report.mode},
          {"target", report.target},
          {"algorithm", inferred.algorithm},
          {"limit", or_null(inferred.limit)},
          {"window_ms", or_null(inferred.window_ms)},
          {"window_tolerance_ms",
           inferred.window_ms ? json(std::llround(inferred.window_tolerance_ms)) : json(nullptr)},
          {"anchor", or_null(inferred.anchor)},
          {"burst", or_null(inferred.burst)},
          {"refill_per_s", or_null(inferred.refill_per_s)},
          {"refill_interval_per_s", refill_interval(inferred)},
          {"queue", or_null(inferred.queue)},
          {"step_tokens", or_null(inferred.step_tokens)},
          {"step_interval_ms", or_null(inferred.step_interval_ms)},
          {"step_interval_tolerance_ms",
           inferred.step_interval_ms ? json(std::llround(inferred.step_interval_tolerance_ms))
                                     : json(nullptr)},
          {"hold_ms", inferred.hold_ms ? json(std::llround(*inferred.hold_ms)) : json(nullptr)},
          {"inner", or_null(inferred.inner)},
          {"ban_ms", or_null(inferred.ban_ms)},
          {"ban_tolerance_ms",
           inferred.ban_ms ? json(std::llround(inferred.ban_tolerance_ms)) : json(nullptr)},
          {"delay_step_ms", or_null(inferred.delay_step_ms)},
          {"delay_step_tolerance_ms",
           inferred.delay_step_ms ? json(inferred.delay_step_tolerance_ms) : json(nullptr)},
          {"max_delay_ms", or_null(inferred.max_delay_ms)},
          {"max_delay_tolerance_ms",
           inferred.max_delay_ms ? json(inferred.max_delay_tolerance_ms) : json(nullptr)},
          {"denial_counting", or_null(inferred.denial_counting)},
          {"confidence", inferred.confidence},
          {"reason", inferred.reason.empty() ? json(nullptr) : json(inferred.reason)},
          {"max_time_needed_ms", or_null(inferred.max_time_needed_ms)},
          {"advertised", advertised},
          {"advertised_matches", or_null(report.judgement.matches)},
          {"contradictions", report.judgement.reasons},
          {"evidence", inferred.evidence},
          {"notes", inferred.notes},
          {"flags", report.flags},
          {"parts", report.parts},
          {"cost", inferred.cost},
          {"second_limit", second_limit(inferred)},
          {"requests", report.requests},
          {"elapsed_ms", report.elapsed_ms},
          {"clock", report.virtual_clock ? "virtual" : "wall"},
          {"verdict", report.interrupted                  ? "interrupted"
                      : inferred.algorithm == "unknown"   ? "unknown"
                      : report.judgement.matches == false ? "contradicted"
                                                          : "inferred"},
          {"exit_code", report.exit_code}};
}

std::string render_probe(const ProbeReport& report, bool quiet) {
  // A second limit found is part of the result: the quiet line names it too.
  const auto& second = report.inferred.second;
  const std::string also =
      second && second->outcome == "found" && second->limit && second->window_ms
          ? fmt::format("; and a second limit of {} per {} ms", *second->limit, *second->window_ms)
          : std::string();
  const std::string first = fmt::format(
      "rlcheck probe  {}  {} requests in {:.1f} s: {}{}\n", report.target, report.requests,
      static_cast<double>(report.elapsed_ms) / 1000, contract_text(report.inferred), also);
  if (quiet)
    return first;
  std::string text = first;
  const checks::InferredContract& inferred = report.inferred;
  if (inferred.algorithm != "unknown")
    text += fmt::format("  confidence  {}\n", inferred.confidence);
  text += fmt::format("  advertised  {}\n", advertised_text(report));
  if (inferred.second)
    text += fmt::format("  second      {}\n", second_text(inferred));
  if (!report.flags.empty())
    text += fmt::format("  flags       {}\n", report.flags);
  text += "  evidence\n";
  for (const std::string& line : inferred.evidence)
    text += fmt::format("    - {}\n", line);
  for (const std::string& line : inferred.notes)
    text += fmt::format("  note: {}\n", line);
  if (report.interrupted)
    text += "  INTERRUPTED\n";
  return text;
}

}  // namespace rlcheck::report
