#pragma once
// What `rlcheck probe` found, as the human report and as rlcheck.probe/v1 JSON.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checks/contract_inference.hpp"

namespace rlcheck::report {

struct ProbeReport {
  std::string mode;    // http, redis
  std::string target;  // the URL, or the limiter and its Redis
  checks::InferredContract inferred;
  checks::AdvertisedContract advertised;
  checks::AdvertisedJudgement judgement;
  std::string flags;  // --contract ... for rlcheck redis / http, snapped; "" when nothing inferred
  // The contract's parts as --contract specs ("sliding:5/1s", then a second limit's); empty
  // when there are no flags.
  std::vector<std::string> parts;
  int64_t requests = 0;
  int64_t elapsed_ms = 0;
  bool virtual_clock = false;  // --virtual-clock: "clock": "virtual" (else "wall")
  bool interrupted = false;
  int exit_code = 0;
};

// {"schema": "rlcheck.probe/v1", "algorithm" (fixed, sliding, sliding-counter, token-bucket,
// queue, denial-counting, concurrency, ban, none, unknown), "limit" (a concurrency cap's: the
// most in progress at once; a ban's: of its inner window), "inner" (a ban's inner window: "fixed"
// on the clock or "sliding"), "ban_ms" and "ban_tolerance_ms" (from the request that begins a
// ban to the next admission), "window_ms" (as measured),
// "window_tolerance_ms", "anchor" ("clock" | "first-hit" for a fixed window or a sliding-window
// counter), "burst", "refill_per_s" (a queue's: how many leave per second), "refill_interval_per_s"
// ([low, high]: where the true refill can lie, by the readmissions' brackets), "queue" (how many
// may wait), "step_tokens", "step_interval_ms", "step_interval_tolerance_ms" (a bucket refilled
// in steps: the tokens of a tick and the ticks' interval), "hold_ms" (a concurrency cap's fastest
// admitted reply), "denial_counting" (true: a client that keeps sending is kept out by its own
// denials; false: the control identity showed it is not; null: not tested), "confidence", "reason",
// "max_time_needed_ms" (the budget was too short), "advertised": {"limit", "window_ms"},
// "advertised_matches" (null when nothing was advertised), "evidence", "notes", "flags" (snapped:
// checks::contract_flags), "parts" (the flags' contracts as specs), "cost" (units a request),
// "second_limit" (null when no contract was inferred, else {"search": "found" | "none-seen" |
// "not-run" | "unclear", "reason", "requests", "admitted", "span_ms", "rate_per_s", "limit",
// "window_ms", "window_tolerance_ms", "window_from"
// ("readmission" | "hint"), "max_time_needed_ms"}), "clock" ("wall" | "virtual"), ...}; parameters
// that do not apply are null.
nlohmann::json probe_to_json(const ProbeReport& report);

// A few aligned lines; with `quiet` only the first.
std::string render_probe(const ProbeReport& report, bool quiet);

}  // namespace rlcheck::report
