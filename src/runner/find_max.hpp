#pragma once
// --find-max --slo: the highest rate the target serves within a latency objective. Each step is
// one run at a constant rate (the open model, so latency counts from when a request was due and
// a slow target cannot hide its delay). Rates double from --rate until a step misses the
// objective, then three steps between the last rate that held and the first that did not
// narrow it down. A step that missed while rlcheck itself sent late (its own lateness above half
// the tightest bound) ends the search: the answer is then only a lower bound.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checks/checks.hpp"
#include "config/config.hpp"
#include "engine/histogram.hpp"
#include "engine/run.hpp"
#include "report/find_max_report.hpp"
#include "report/report.hpp"

namespace rlcheck::runner {

// What one step measured: its planned and sent requests, its decisions, its latency (from when
// each request was due) and how late rlcheck sent them, as a stage of a run counts them; and
// how busy its connections were: each sent request holds one from its send to its reply.
struct StepCounts : engine::StageTally {
  int64_t busy_ns = 0;  // the sends to replies, summed
  int64_t span_ns = 0;  // the start line to the last reply
  uint64_t slots = 0;   // requests that can be in flight at once (-p x --pipeline)
};

// `slots`: the load's concurrency (connections x pipeline).
StepCounts count_step(const engine::RunResult& result, uint64_t planned, uint64_t slots);

// The connections were the limit: on average at least 90 % of them held a request over the
// whole step (busy time against slots x span). Requests then wait for a free one, and their
// lateness is the pool's, not rlcheck's CPU: more connections (-p) would offer more.
bool pool_saturated(const StepCounts& counts);

// One step judged: within the objective (every bound's percentile, errors within --max-errors,
// at least 95 % of the planned requests sent), and whether rlcheck sent too late to tell.
report::FindMaxStep judge_step(double rate_per_s, const std::string& phase, config::Nanos duration,
                               const StepCounts& counts, const std::vector<config::SloBound>& slo,
                               int64_t max_errors);

class FindMaxSearch {
 public:
  FindMaxSearch(const config::FindMaxConfig& options, double start_per_s, int64_t max_errors);

  // The next step's rate (whole requests per second), or none: the search is over.
  std::optional<int64_t> next_rate() const;
  // `base` as the next step sends it: that rate for the step's duration.
  config::LoadConfig next_load(const config::LoadConfig& base) const;
  // The step at next_rate() ended with `counts`.
  void observe(const StepCounts& counts);

  report::FindMax result() const;

  static constexpr int k_max_ladder_steps = 16;
  static constexpr int64_t k_max_rate_per_s = 1'000'000;
  static constexpr int k_refine_steps = 3;

 private:
  void plan_refinement();

  config::FindMaxConfig options_;
  int64_t max_errors_ = 0;
  std::vector<int64_t> pending_;  // rates still to try, in order
  bool refining_ = false;
  std::vector<report::FindMaxStep> steps_;
  std::optional<int64_t> best_;        // the highest rate that held
  std::optional<int64_t> first_miss_;  // the lowest rate that did not
  bool client_bound_ = false;
  bool pool_bound_ = false;  // ...and the connections were the limit
};

}  // namespace rlcheck::runner
