#include "checks/retry_accuracy.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "checks/identity_predictor.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

constexpr int64_t k_ns_per_ms = 1'000'000;
// Hints this coarse are judged as whole seconds are (HTTP's Retry-After and RateLimit reset).
constexpr int32_t k_whole_second_ms = 1000;
// Whole-second hints late by more than this share of the window keep clients waiting.
constexpr int64_t k_late_share_percent = 10;
// The limiter's second clock read: it stamps the admission and reads "now" for the denial,
// each floored to its millisecond, and the predicted range is widened by one of the two.
constexpr int64_t k_second_clock_read_ms = 1;
// A millisecond hint's own step, or an error's truncation to the millisecond.
constexpr int64_t k_millisecond_step_ms = 1;
// Clock rates, 100 ppm: 1 ms per 10 s of window (see hint_tolerance).
constexpr int64_t k_window_ms_per_drift_ms = 10'000;

}  // namespace

HintRange widen_by_clock(HintRange range, int64_t clock_ns) {
  const auto clock = static_cast<double>(clock_ns);
  range.low_ns = std::max(0.0, range.low_ns - clock);
  range.high_ns = std::max(range.low_ns, range.high_ns + clock);
  return range;
}

HintRange fixed_hint_range(const RequestRecord& denial, const AdmissionRule& rule,
                           int64_t start_wall_ns) {
  const int64_t window = rule.window_ns;
  int64_t first = denial.bucket;
  int64_t last = denial.bucket;
  if (first < 0 || window <= 0) {
    return {};
  }
  if (first == 0) {
    first = wall_window(start_wall_ns, denial.sent_ns, window);
    last = wall_window(start_wall_ns, denial.replied_ns, window);
  }
  const auto end_of = [&](int64_t index) {
    return static_cast<double>((index + 1) * window - start_wall_ns);
  };
  return {end_of(first) - static_cast<double>(denial.replied_ns),
          end_of(last) - static_cast<double>(denial.sent_ns)};
}

double bucket_wait_ns(const std::optional<BucketLevel>& after, int64_t now_ns,
                      const AdmissionRule& rule, size_t taken) {
  if (rule.tokens_per_ns <= 0)
    return 0;
  double level = static_cast<double>(rule.burst);
  if (after) {
    const auto since = static_cast<double>(now_ns - after->at_ns);
    level = after->tokens + rule.tokens_per_ns * since;
    if (since > 0)
      level = std::min(static_cast<double>(rule.burst), level);
  }
  level -= static_cast<double>(taken);
  return std::max(0.0, (1.0 - level) / rule.tokens_per_ns);
}

namespace {

// judge_hint with the hint read and its tolerance looked up already.
void judge_hint_ms(RetryAccuracy& accuracy, const RequestRecord& denial, int64_t hint_ms,
                   uint32_t identity, const HintRange& range, const HintTolerance& allowed) {
  if (denial.hint_resolution_ms < k_whole_second_ms && hint_ms % k_whole_second_ms != 0)
    accuracy.finer_hints_whole_seconds = false;
  if (range.never) {
    ++accuracy.never_admissible;
    if (!accuracy.never_worst)
      accuracy.never_worst =
          HintError{identity,      denial.seq, denial.replied_ns, hint_ms, 0, allowed.resolution_ms,
                    denial.sent_ns};
    return;
  }
  if (!range.explained) {
    ++accuracy.unexplained;
    return;
  }
  const auto hint_ns = static_cast<double>(hint_ms) * k_ns_per_ms;
  double error_ns = 0;
  if (hint_ns < range.low_ns)
    error_ns = hint_ns - range.low_ns;
  else if (hint_ns > range.high_ns)
    error_ns = hint_ns - range.high_ns;
  const auto error_ms = static_cast<int64_t>(error_ns / k_ns_per_ms);
  accuracy.errors.push_back({identity, denial.seq, denial.replied_ns, hint_ms, error_ms,
                             allowed.resolution_ms, denial.sent_ns});
  if (error_ms < -allowed.early_ms)
    ++accuracy.early;
  if (error_ms > allowed.late_ms)
    ++accuracy.late;
  if (std::find(accuracy.resolutions.begin(), accuracy.resolutions.end(), allowed.resolution_ms) ==
      accuracy.resolutions.end())
    accuracy.resolutions.push_back(allowed.resolution_ms);
}

// The tolerance of the hints of one resolution and source, looked up once for a run of them.
class ToleranceOf {
 public:
  explicit ToleranceOf(const AccuracyTolerance& tolerance) : tolerance_(tolerance) {}
  const HintTolerance& operator()(const RequestRecord& denial) {
    const bool from_date = usable_hint_from_date(denial);
    if (!known_ || resolution_ms_ != denial.hint_resolution_ms || from_date_ != from_date) {
      allowed_ = tolerance_.at(denial.hint_resolution_ms, from_date);
      resolution_ms_ = denial.hint_resolution_ms;
      from_date_ = from_date;
      known_ = true;
    }
    return allowed_;
  }

 private:
  const AccuracyTolerance& tolerance_;
  HintTolerance allowed_;
  int32_t resolution_ms_ = 0;
  bool from_date_ = false;
  bool known_ = false;
};

}  // namespace

void judge_hint(RetryAccuracy& accuracy, const RequestRecord& denial, uint32_t identity,
                const HintRange& range, const AccuracyTolerance& tolerance) {
  judge_hint_ms(accuracy, denial, *usable_hint_ms(denial), identity, range,
                tolerance.at(denial.hint_resolution_ms, usable_hint_from_date(denial)));
}

HintTolerance hint_tolerance(int32_t resolution_ms, int64_t window_ms, bool from_date) {
  const int32_t step = std::max<int32_t>(1, resolution_ms);
  // The Date header's own truncation: the delay read may be up to a second off.
  const int64_t date_ms = from_date ? k_whole_second_ms : 0;
  const int64_t clocks_ms =
      k_second_clock_read_ms + std::max<int64_t>(0, window_ms) / k_window_ms_per_drift_ms;
  const int64_t early_ms = k_millisecond_step_ms + clocks_ms + date_ms;
  if (step >= k_whole_second_ms)
    return {step, early_ms,
            std::max<int64_t>(step, window_ms * k_late_share_percent / 100) + date_ms};
  return {step, early_ms, step + clocks_ms + date_ms};
}

std::optional<int64_t> usable_hint_ms(const RequestRecord& record) {
  if (record.hint_invalid)
    return std::nullopt;
  if (record.retry_ms)
    return *record.retry_ms >= 0 ? record.retry_ms : std::nullopt;
  if (record.advertised_reset_s && *record.advertised_reset_s >= 0)
    return *record.advertised_reset_s * 1000;
  return std::nullopt;
}

bool usable_hint_from_date(const RequestRecord& record) {
  return record.retry_ms ? record.retry_from_date : record.reset_from_date;
}

void judge_as_whole_seconds(RetryAccuracy& accuracy, const AccuracyTolerance& tolerance) {
  if (accuracy.resolutions.empty() || accuracy.resolutions.front() >= k_whole_second_ms)
    return;
  // A run's hints share one unit (a script's reply format), so its errors are recounted alike.
  const HintTolerance allowed = tolerance.at(k_whole_second_ms);
  accuracy.early = 0;
  accuracy.late = 0;
  for (const auto& [error_ms, count] : accuracy.errors.counts()) {
    if (error_ms < -allowed.early_ms)
      accuracy.early += count;
    if (error_ms > allowed.late_ms)
      accuracy.late += count;
  }
  accuracy.resolutions = {k_whole_second_ms};
  accuracy.judged_as_whole_seconds = true;
}

HintErrors::HintErrors(std::initializer_list<HintError> errors) {
  for (const HintError& error : errors)
    push_back(error);
}

void HintErrors::push_back(const HintError& error) {
  ++size_;
  if (last_ == counts_.end() || last_->first != error.error_ms)
    last_ = counts_.try_emplace(error.error_ms, 0).first;
  ++last_->second;
  // The largest error either way; of equals, the lowest identity, then the earliest sent, then
  // the lowest seq: the same worst whatever order the errors come in.
  const auto key = [](const HintError& e) {
    return std::tuple(-std::llabs(e.error_ms), e.identity, e.sent_ns, e.seq);
  };
  if (!worst_ ||
      (std::llabs(error.error_ms) >= std::llabs(worst_->error_ms) && key(error) < key(*worst_)))
    worst_ = error;
}

int64_t error_at_rank(const std::map<int64_t, int64_t>& counts, int64_t n) {
  for (const auto& [error_ms, count] : counts) {
    if (n < count)
      return error_ms;
    n -= count;
  }
  return counts.empty() ? 0 : counts.rbegin()->first;
}

RetryAccuracy measure_retry_accuracy(const IdentityRecords& identities, const AdmissionRule& rule,
                                     int64_t start_wall_ns, const AccuracyTolerance& tolerance) {
  RetryAccuracy accuracy;
  ToleranceOf tolerance_of(tolerance);
  SecondGrid grid;
  for (size_t id = 0; id < identities.size(); ++id) {
    const RecordSpan records = identities[id];
    std::vector<uint32_t> denials;  // indices: 4 bytes a denial
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::denied)
        denials.push_back(static_cast<uint32_t>(i));
    }
    engine::stable_sort_by_send(records, denials);
    // Each denial is decoded once; the predictor is built at the first usable hint.
    std::optional<IdentityPredictor> predictor;
    engine::RecordCursor cursor(records);
    for (const uint32_t index : denials) {
      const RequestRecord& denial = cursor[index];
      const std::optional<int64_t> hint_ms = usable_hint_ms(denial);
      if (!hint_ms)
        continue;
      grid.add(denial.sent_ns);
      if (!predictor)
        predictor.emplace(records, rule, start_wall_ns);
      judge_hint_ms(accuracy, denial, *hint_ms, static_cast<uint32_t>(id),
                    predictor->predict(denial), tolerance_of(denial));
    }
  }
  std::sort(accuracy.resolutions.begin(), accuracy.resolutions.end());
  accuracy.instants_off_second_grid = grid.off();
  return accuracy;
}

void visit_hint_ranges(const IdentityRecords& judged, const IdentityRecords& used,
                       const AdmissionRule& rule, int64_t start_wall_ns,
                       const HintRangeVisitor& visit) {
  for (size_t id = 0; id < judged.size(); ++id) {
    const RecordSpan records = judged[id];
    const RecordSpan admissions = id < used.size() ? used[id] : records;
    std::vector<uint32_t> denials;
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::denied)
        denials.push_back(static_cast<uint32_t>(i));
    }
    engine::stable_sort_by_send(records, denials);
    std::optional<IdentityPredictor> predictor;
    engine::RecordCursor cursor(records);
    for (const uint32_t index : denials) {
      const RequestRecord& denial = cursor[index];
      if (!usable_hint_ms(denial))
        continue;
      if (!predictor)
        predictor.emplace(admissions, rule, start_wall_ns);
      visit(denial, predictor->predict(denial));
    }
  }
}

}  // namespace rlcheck::checks
