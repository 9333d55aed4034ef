#pragma once
// The metrics text of /metrics, from the live counts: Prometheus text format 0.0.4, or
// OpenMetrics 1.0.0 when the scraper asks for it (Prometheus does; `promtool check metrics`
// reads the former). Pure.
//
// Families: rlcheck_requests_total{outcome,run}, rlcheck_errors_total{kind,run},
// rlcheck_in_flight, rlcheck_latency_seconds (histogram), rlcheck_run (the run under way, 0
// between runs), rlcheck_offered_rate (the schedule's rate, open model), rlcheck_info{version},
// and once a target is judged rlcheck_check_status{check} (1 pass, 0 fail) and rlcheck_verdict
// (0 pass, 1 fail, 2 error, 3 interrupted). In compare every series also carries `target`: each
// target seen so far has its own (a target not under way: 0 in flight, run 0).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/live_stats.hpp"

namespace rlcheck::observe {

enum class Format { prometheus, openmetrics };

// OpenMetrics when the Accept header names application/openmetrics-text, else Prometheus text.
Format negotiate(std::string_view accept);
const char* content_type(Format format);

struct CheckStatus {
  std::string target;  // compare: the target judged; else empty
  std::string check;   // "limit", "exact", ...
  bool pass = false;
};

// A judged target's verdict as rlcheck_verdict's value: 0 pass, 1 fail, 2 error, 3 interrupted
// (checks::Verdict's order).
struct VerdictValue {
  std::string target;  // compare: the target judged; else empty
  int value = 0;
};

// What the live counts do not hold.
struct Extras {
  std::string version;
  bool by_target = false;              // compare: label every series with its target
  std::optional<double> offered_rate;  // requests a second the schedule asks for now
  std::vector<CheckStatus> checks;     // empty until the test is judged; skipped checks absent
  std::vector<VerdictValue> verdicts;  // one per target judged so far
};

// The latency histogram's bucket bounds in seconds, as rendered in `le` (+Inf follows).
inline constexpr const char* k_latency_bounds[] = {
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
    "0.05",   "0.1",     "0.25",   "0.5",   "1.0",    "2.5",   "5.0",  "10.0"};

std::string render(const engine::LiveSnapshot& snapshot, const Extras& extras, Format format);

}  // namespace rlcheck::observe
