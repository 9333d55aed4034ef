#include "report/find_max_report.hpp"

#include <cmath>

#include <fmt/format.h>

namespace rlcheck::report {
namespace {

double rounded_ms(double value) {
  return std::round(value * 1000.0) / 1000.0;
}

std::string pool_text(uint64_t connections) {
  return fmt::format("all {} connections busy for the whole step: raise -p", connections);
}

std::string outcome_of(const FindMaxStep& step) {
  if (step.passed)
    return "held";
  if (step.pool_bound)
    return fmt::format("missed ({})", pool_text(step.connections));
  return step.client_bound ? "missed (rlcheck sent late)" : "missed: " + step.why;
}

}  // namespace

std::string send_limit_text(const FindMax& search) {
  if (search.pool_bound && !search.steps.empty())
    return pool_text(search.steps.back().connections);
  return "rlcheck could not send faster here";
}

nlohmann::json find_max_json(const FindMax& search) {
  nlohmann::json steps = nlohmann::json::array();
  for (const FindMaxStep& step : search.steps) {
    nlohmann::json percentiles = nlohmann::json::array();
    for (double value : step.percentiles_ms)
      percentiles.push_back(rounded_ms(value));
    steps.push_back({{"rate_per_s", step.rate_per_s},
                     {"phase", step.phase},
                     {"duration_ms", rounded_ms(step.duration_ms)},
                     {"planned", step.planned},
                     {"sent", step.sent},
                     {"allowed", step.allowed},
                     {"denied", step.denied},
                     {"errors", step.errors},
                     {"slo_ms", percentiles},
                     {"p50_ms", rounded_ms(step.p50_ms)},
                     {"p99_ms", rounded_ms(step.p99_ms)},
                     {"lateness_p99_ms", rounded_ms(step.lateness_p99_ms)},
                     {"passed", step.passed},
                     {"client_bound", step.client_bound},
                     {"pool_bound", step.pool_bound},
                     {"why", step.why}});
  }
  nlohmann::json out = {{"slo", search.slo},
                        {"max_rate", nullptr},
                        {"client_bound", search.client_bound},
                        {"pool_bound", search.pool_bound},
                        {"ceiling", search.ceiling},
                        {"steps", steps}};
  if (search.max_rate)
    out["max_rate"] = *search.max_rate;
  return out;
}

std::string find_max_lines(const FindMax& search) {
  std::string out;
  if (!search.max_rate)
    out += fmt::format("find-max {}: no rate held\n", search.slo);
  else
    out += fmt::format("find-max {}: {} {}/s{}\n", search.slo,
                       search.client_bound ? "at least" : "max", *search.max_rate,
                       search.client_bound ? fmt::format(" ({})", send_limit_text(search))
                       : search.ceiling    ? " (every step held)"
                                           : "");
  out += fmt::format("{:>4} {:>9} {:>7} {:>9} {:>9} {:>8} {:>8} {:>11}  {}\n", "step", "rate/s",
                     "phase", "sent", "planned", "p50 ms", "p99 ms", "late p99 ms", "outcome");
  int index = 0;
  for (const FindMaxStep& step : search.steps) {
    out += fmt::format("{:>4} {:>9} {:>7} {:>9} {:>9} {:>8.3f} {:>8.3f} {:>11.3f}  {}\n", ++index,
                       step.rate_per_s, step.phase, step.sent, step.planned, step.p50_ms,
                       step.p99_ms, step.lateness_p99_ms, outcome_of(step));
  }
  return out;
}

}  // namespace rlcheck::report
