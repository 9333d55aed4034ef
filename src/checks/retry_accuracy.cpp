#include "checks/retry_accuracy.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <optional>
#include <tuple>

#include "checks/first_hit.hpp"
#include "checks/prefix_walk.hpp"
#include "checks/sliding_counter.hpp"

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

struct Instants {
  int64_t sent_ns;
  int64_t replied_ns;
};

// A token bucket replayed over admissions at one of their instants: tokens left after each.
struct BucketReplay {
  std::vector<double> tokens;  // after admission k
  std::vector<int64_t> at_ns;  // admission k's instant

  BucketReplay(const std::vector<Instants>& admissions, bool use_reply, const AdmissionRule& rule) {
    double level = static_cast<double>(rule.burst);
    int64_t last = admissions.empty() ? 0 : instant(admissions.front(), use_reply);
    for (const Instants& admission : admissions) {
      const int64_t now = instant(admission, use_reply);
      level = std::min(
          static_cast<double>(rule.burst),
          level + rule.tokens_per_ns * static_cast<double>(std::max<int64_t>(0, now - last)));
      last = now;
      level -= 1.0;
      tokens.push_back(level);
      at_ns.push_back(now);
    }
  }

  // The wait for one token from `now_ns`, with the first `count` admissions spent. The last of
  // them may be replayed after `now_ns` (at its reply, when the denial is taken at its send):
  // it still counts, and the level at `now_ns` is the level after it less the refill between
  // the two. (Reading the level after it as the level at `now_ns` credited that refill early,
  // and a queued denial's true hint looked late by it.)
  // `taken`: tokens taken right at `now_ns` besides (requests possibly admitted unseen).
  double wait_ns(size_t count, int64_t now_ns, const AdmissionRule& rule, size_t taken = 0) const {
    if (count == 0)
      return bucket_wait_ns(std::nullopt, now_ns, rule, taken);
    return bucket_wait_ns(BucketLevel{tokens[count - 1], at_ns[count - 1]}, now_ns, rule, taken);
  }

  static int64_t instant(const Instants& admission, bool use_reply) {
    return use_reply ? admission.replied_ns : admission.sent_ns;
  }
};

// The minimum send instant over a window of admissions ordered by reply whose both ends only
// move forward (denials are visited by send instant).
class SlidingMinimum {
 public:
  explicit SlidingMinimum(const std::vector<Instants>& by_reply) : by_reply_(by_reply) {}

  int64_t min_sent(size_t begin, size_t end) {
    while (pushed_ < end) {
      while (!window_.empty() && by_reply_[window_.back()].sent_ns >= by_reply_[pushed_].sent_ns)
        window_.pop_back();
      window_.push_back(pushed_++);
    }
    while (window_.front() < begin)
      window_.pop_front();
    return by_reply_[window_.front()].sent_ns;
  }

 private:
  const std::vector<Instants>& by_reply_;
  std::deque<size_t> window_;
  size_t pushed_ = 0;
};

class IdentityPredictor {
 public:
  IdentityPredictor(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns)
      : rule_(rule), start_wall_ns_(start_wall_ns) {
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::allowed)
        by_send_.push_back({records.sent_ns(i), records.replied_ns(i)});
    }
    // Equal sends by reply, equal replies by send: the prediction never depends on the
    // records' order (two admissions equal in both are interchangeable).
    std::sort(by_send_.begin(), by_send_.end(), [](const Instants& a, const Instants& b) {
      return std::tie(a.sent_ns, a.replied_ns) < std::tie(b.sent_ns, b.replied_ns);
    });
    by_reply_ = by_send_;
    std::sort(by_reply_.begin(), by_reply_.end(), [](const Instants& a, const Instants& b) {
      return std::tie(a.replied_ns, a.sent_ns) < std::tie(b.replied_ns, b.sent_ns);
    });
    int64_t latest = 0;
    for (const Instants& admission : by_send_) {
      latest = std::max(latest, admission.replied_ns);
      latest_reply_.push_back(latest);
    }
    unknown_ = unknown_sends(records);
    if (rule.kind == AdmissionRule::Kind::bucket) {
      sent_replay_.emplace(by_send_, false, rule);
      reply_replay_.emplace(by_reply_, true, rule);
    }
    if (rule.kind == AdmissionRule::Kind::first_hit)
      first_hit_.emplace(records, rule);
    if (rule.kind == AdmissionRule::Kind::sliding_counter)
      counter_.emplace(records, rule);
  }

  // The predicted wait for a denial, visited in send order.
  HintRange predict(const RequestRecord& denial) {
    // Possibly before the denial: sent before its reply. Surely before: replied before its send.
    // Both counts move little from one denial to the next (sends only forward), so they are
    // walked to from the last ones rather than searched for.
    possible_ = prefix_from(possible_, by_send_,
                            [&](const Instants& a) { return a.sent_ns < denial.replied_ns; });
    sure_ = prefix_from(sure_, by_reply_,
                        [&](const Instants& a) { return a.replied_ns <= denial.sent_ns; });
    const size_t possible = possible_;
    const size_t sure = sure_;
    // Unknown requests sent before the denial's reply may have been admitted as late as it.
    const auto unknown = static_cast<size_t>(sent_before(unknown_, denial.replied_ns));
    // A request costing more than the contract ever holds can never pass: no wait is right.
    if (denial.cost > rule_.capacity())
      return {0, 0, false, true};
    HintRange range;
    switch (rule_.kind) {
      case AdmissionRule::Kind::sliding:
        range = sliding(denial, possible, sure, unknown);
        break;
      case AdmissionRule::Kind::fixed:
        range = fixed(denial);
        break;
      case AdmissionRule::Kind::bucket:
        range = bucket(denial, possible, unknown);
        break;
      case AdmissionRule::Kind::first_hit:
        range = first_hit(denial);
        break;
      case AdmissionRule::Kind::sliding_counter:
        range = sliding_counter(denial);
        break;
    }
    return widen_by_clock(range, rule_.clock_ns);
  }

 private:
  // The slot frees when the limit-th most recent admission leaves the window. The longest
  // wait counts the `unknown` requests possibly before the denial as its most recent
  // admissions, made at its reply.
  // A request of cost c waits until at most limit - c units are left in the window: until the
  // (limit - c + 1)-th most recent leaves (records count units: an admission of cost c is c).
  HintRange sliding(const RequestRecord& denial, size_t possible, size_t sure, size_t unknown) {
    const auto limit =
        static_cast<size_t>(std::max<int64_t>(1, rule_.limit - std::max(denial.cost, 1) + 1));
    const auto window = static_cast<double>(rule_.window_ns);
    HintRange range;
    range.explained = possible + unknown >= limit;
    if (possible >= limit) {
      range.high_ns = static_cast<double>(latest_reply_[possible - limit]) + window -
                      static_cast<double>(denial.sent_ns);
    }
    if (unknown > 0 && range.explained) {
      const int64_t freed =
          unknown >= limit ? denial.replied_ns : latest_reply_[possible - (limit - unknown)];
      range.high_ns = std::max(
          range.high_ns, static_cast<double>(freed) + window - static_cast<double>(denial.sent_ns));
    }
    if (sure >= limit) {
      // The sliding minimum's ends only move forward: a cost other than 1 moves its start back.
      const int64_t earliest = denial.cost == 1 ? minimum_.min_sent(sure - limit, sure)
                                                : min_sent_between(sure - limit, sure);
      range.low_ns =
          static_cast<double>(earliest) + window - static_cast<double>(denial.replied_ns);
    }
    range.high_ns = std::max(range.high_ns, 0.0);
    range.low_ns = std::min(std::max(range.low_ns, 0.0), range.high_ns);
    return range;
  }

  // The wait for one token. The shortest: the fewest admissions (a prefix by send whose every
  // member replied before the denial was sent), each as early as it can have been (its send),
  // the denial as late (its reply). The longest: the most admissions (a prefix by reply holding
  // every one sent before the denial's reply), each as late as it can have been (its reply),
  // the denial as early (its send). Pairing early with early and late with late instead
  // cancels the latencies out and narrows the range to nothing: a hint right for a denial that
  // queued long was judged early, the same hint for one answered at once exact.
  // Each of the `unknown` requests possibly before the denial may have taken a token just
  // before it, which no refill made up: the longest wait takes them from the level.
  HintRange bucket(const RequestRecord& denial, size_t possible, size_t unknown) const {
    const size_t surely_by_send = static_cast<size_t>(
        std::upper_bound(latest_reply_.begin(), latest_reply_.end(), denial.sent_ns) -
        latest_reply_.begin());
    size_t covering_by_reply = 0;
    if (possible > 0) {
      const int64_t last_reply = latest_reply_[possible - 1];
      covering_by_reply = static_cast<size_t>(
          std::upper_bound(by_reply_.begin(), by_reply_.end(), last_reply,
                           [](int64_t t, const Instants& a) { return t < a.replied_ns; }) -
          by_reply_.begin());
    }
    // A request of cost c waits for c tokens: c - 1 taken besides the one it waits for.
    const auto more = static_cast<size_t>(std::max(denial.cost, 1) - 1);
    const double shortest = sent_replay_->wait_ns(surely_by_send, denial.replied_ns, rule_, more);
    const double longest =
        reply_replay_->wait_ns(covering_by_reply, denial.sent_ns, rule_, unknown + more);
    return {std::min(shortest, longest), longest, longest > 0};
  }

  HintRange fixed(const RequestRecord& denial) const {
    return fixed_hint_range(denial, rule_, start_wall_ns_);
  }

  // The slot frees when the window the denial fell in (one that may have been full) ends.
  HintRange first_hit(const RequestRecord& denial) const {
    const auto wait = first_hit_->wait(denial);
    if (!wait)
      return {0, 0, false};
    return {wait->low_ns, wait->high_ns, true};
  }

  // The estimate drops below the limit (in a window the denial may fall in where it may have
  // been at the limit).
  HintRange sliding_counter(const RequestRecord& denial) const {
    const auto wait = counter_->wait(denial);
    if (!wait)
      return {0, 0, false};
    return {wait->low_ns, wait->high_ns, true};
  }

  int64_t min_sent_between(size_t begin, size_t end) const {
    int64_t earliest = by_reply_[begin].sent_ns;
    for (size_t k = begin + 1; k < end; ++k)
      earliest = std::min(earliest, by_reply_[k].sent_ns);
    return earliest;
  }

  const AdmissionRule& rule_;
  int64_t start_wall_ns_;
  std::optional<FirstHitWindows> first_hit_;
  std::optional<SlidingCounter> counter_;
  std::vector<Instants> by_send_;
  std::vector<Instants> by_reply_;
  std::vector<int64_t> latest_reply_;  // by send order: the latest reply so far
  std::vector<int64_t> unknown_;       // sends of the requests possibly admitted unseen
  SlidingMinimum minimum_{by_reply_};
  std::optional<BucketReplay> sent_replay_;
  std::optional<BucketReplay> reply_replay_;
  size_t possible_ = 0;  // the last denial's admissions sent before its reply
  size_t sure_ = 0;      // and replied by its send
};

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
