#include "checks/room_readers.hpp"

namespace rlcheck::checks {
namespace room {

using engine::Outcome;
using engine::RequestRecord;

Admissions::Admissions(RecordSpan records) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == Outcome::allowed) {
      sent.push_back(records.sent_ns(i));
      replied.push_back(records.replied_ns(i));
    }
  }
  std::sort(sent.begin(), sent.end());
  std::sort(replied.begin(), replied.end());
}

FixedRoom::FixedRoom(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns)
    : rule_(rule), start_wall_ns_(start_wall_ns) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::allowed)
      continue;
    const RequestRecord record = records[i];
    const auto [first, last] = windows_of(record);
    for (int64_t window = first; window <= last; ++window)
      sent_by_window_[window].push_back(record.sent_ns);
  }
  for (auto& [window, sent] : sent_by_window_)
    std::sort(sent.begin(), sent.end());
}

std::optional<double> FixedRoom::used(const RequestRecord& denial) const {
  const auto [first, last] = windows_of(denial);
  if (first != last)
    return std::nullopt;
  const auto it = sent_by_window_.find(first);
  if (it == sent_by_window_.end())
    return 0.0;
  const auto& sent = it->second;
  return static_cast<double>(
      std::lower_bound(sent.begin(), sent.end(), denial.replied_ns + rule_.clock_ns) -
      sent.begin());
}

std::pair<int64_t, int64_t> FixedRoom::windows_of(const RequestRecord& record) const {
  if (record.bucket > 0)
    return {record.bucket, record.bucket};
  return {wall_window(start_wall_ns_, record.sent_ns - rule_.clock_ns, rule_.window_ns),
          wall_window(start_wall_ns_, record.replied_ns + rule_.clock_ns, rule_.window_ns)};
}

BucketRoom::BucketRoom(RecordSpan records, const AdmissionRule& rule)
    : admissions_(records),
      rule_(rule),
      ticks_(rule.fresh_state ? tick_phase(records, rule) : std::nullopt) {
  std::vector<std::pair<int64_t, int64_t>> by_send;  // sent, replied
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == Outcome::allowed)
      by_send.emplace_back(records.sent_ns(i), records.replied_ns(i));
  }
  std::sort(by_send.begin(), by_send.end());
  double lowest = 1e300;
  for (const auto& [sent, replied] : by_send) {
    const auto replied_before =
        static_cast<double>(admissions_.replied_by(sent - 2 * rule.clock_ns - 1));
    lowest = std::min(lowest, replied_before - refill_by_start(replied + rule.clock_ns));
    prefix_min_.push_back(lowest);
  }
  // State from before the run may have left the bucket partly empty, but no emptier than
  // its admissions allow: the k-th admission replied took a token that the level at the start
  // and the refill until its reply (plus the clock) must have held. Each denial is bounded by
  // the admissions replied before its send (least_start).
  const auto& replied = admissions_.replied;
  double most = 0;
  for (size_t k = 0; k < replied.size(); ++k) {
    most = std::max(most, bucket_start_term(k + 1, replied[k], rule));
    least_start_.push_back(most);
  }
}

double BucketRoom::refill_by_start(int64_t at_ns) const {
  if (ticks_)
    return static_cast<double>(rule_.step_tokens * ticks_->most_up_to(at_ns));
  return rule_.tokens_per_ns * static_cast<double>(at_ns);
}

double BucketRoom::refill_by_end(int64_t at_ns) const {
  if (ticks_)
    return static_cast<double>(rule_.step_tokens * ticks_->fewest_up_to(at_ns));
  return rule_.tokens_per_ns * static_cast<double>(at_ns);
}

double BucketRoom::used(int64_t sent_ns, int64_t replied_ns) const {
  const auto burst = static_cast<double>(rule_.burst);
  const size_t before = admissions_.possibly_before(replied_ns, rule_.clock_ns);
  double level = burst;
  // A stepped bucket's ticks, wherever they fall, bring at least rate x d - K and at most
  // rate x d + K in any span d (checks/stepped_bucket.hpp): each term below is taken K lower
  // (the start's twice: it is read from the most the refill may have brought), and the level
  // still tops out at the burst.
  // With --anchor the ticks' own counts, at their least in the span, take the place of both.
  const auto slack = static_cast<double>(rule_.stepped() && !ticks_ ? rule_.step_tokens : 0);
  if (before > 0) {
    level = burst - slack - static_cast<double>(before) + refill_by_end(sent_ns - rule_.clock_ns) +
            prefix_min_[before - 1];
  }
  // State from before the run: the bucket may have started the run as low as its admissions
  // allow (a client that kept sending never lets it refill, so that deficit is never
  // forgotten under load).
  if (!rule_.fresh_state) {
    const size_t replied_before = admissions_.replied_by(sent_ns);
    const double start =
        replied_before == 0 ? 0.0 : std::min(burst, least_start_[replied_before - 1] - slack);
    level = std::min(
        level, start - slack + rule_.tokens_per_ns * static_cast<double>(sent_ns - rule_.clock_ns) -
                   static_cast<double>(before));
  }
  return burst - std::min(burst, level);
}

}  // namespace room

IdentityRoom::IdentityRoom(RecordSpan judged, RecordSpan used, const AdmissionRule& rule,
                           int64_t start_wall_ns, bool counts_self, bool weighted,
                           const std::vector<int64_t>* unknown)
    : judged_(judged),
      cursor_(judged),
      rule_(rule),
      counts_self_(counts_self),
      weighted_(weighted),
      own_unknown_(unknown == nullptr ? unknown_sends(judged) : std::vector<int64_t>()),
      unknown_(unknown == nullptr ? &own_unknown_ : unknown) {
  switch (rule.kind) {
    case AdmissionRule::Kind::sliding:
      sliding_.emplace(used, rule);
      break;
    case AdmissionRule::Kind::fixed:
      fixed_.emplace(used, rule, start_wall_ns);
      break;
    case AdmissionRule::Kind::first_hit:
      first_hit_.emplace(used, rule);
      break;
    case AdmissionRule::Kind::sliding_counter:
      counter_.emplace(used, rule);
      break;
    case AdmissionRule::Kind::bucket:
      bucket_.emplace(used, rule);
      break;
  }
}

std::optional<DenialRoom> IdentityRoom::at_other(size_t i) {
  const auto limit = static_cast<double>(rule_.limit);
  switch (rule_.kind) {
    case AdmissionRule::Kind::sliding:
      return at(i);
    case AdmissionRule::Kind::fixed: {
      const engine::RequestRecord& record = cursor_[i];
      const auto used = fixed_->used(record);
      if (!used)
        return std::nullopt;
      return reading(i, *used, record.replied_ns, limit);
    }
    case AdmissionRule::Kind::first_hit: {
      const auto used = static_cast<double>(first_hit_->used_before(cursor_[i], rule_.limit));
      return DenialRoom{used, limit, had_room(used, limit, need(i))};
    }
    case AdmissionRule::Kind::sliding_counter: {
      // Room: the estimate, read as high as any placement makes it, below the limit less the
      // request's other units.
      const double used = counter_->most_used(cursor_[i]);
      return DenialRoom{used, limit, used + need(i) - 1 < limit - 1e-9};
    }
    case AdmissionRule::Kind::bucket: {
      const int64_t replied_ns = judged_.replied_ns(i);
      return reading(i, bucket_->used(judged_.sent_ns(i), replied_ns), replied_ns,
                     static_cast<double>(rule_.burst));
    }
  }
  return std::nullopt;
}

}  // namespace rlcheck::checks
