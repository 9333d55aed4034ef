#include "checks/admission_peak.hpp"

#include <algorithm>
#include <tuple>

#include "checks/first_hit.hpp"
#include "checks/peak_stream.hpp"
#include "checks/sliding_counter.hpp"
#include "checks/stepped_bucket.hpp"

namespace rlcheck::checks {
namespace {

struct Admission {
  int64_t sent_ns;
  int64_t replied_ns;
};

std::vector<Admission> admissions_by_send(engine::RecordView records) {
  std::vector<Admission> admissions;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == engine::Outcome::allowed)
      admissions.push_back({records.sent_ns(i), records.replied_ns(i)});
  }
  // Equal sends are ordered by reply, so the peak never depends on the records' order (two
  // admissions equal in both are interchangeable).
  std::sort(admissions.begin(), admissions.end(), [](const Admission& a, const Admission& b) {
    return std::tie(a.sent_ns, a.replied_ns) < std::tie(b.sent_ns, b.replied_ns);
  });
  return admissions;
}

// The streaming audits (peak_stream.hpp) over admissions in (sent, replied) order.
AdmissionPeak sliding_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule) {
  SlidingPeakStream stream(rule);
  for (const Admission& admission : admissions)
    stream.add(admission.sent_ns, admission.replied_ns);
  return stream.peak();
}

AdmissionPeak bucket_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule,
                          std::optional<TickPhase> ticks = std::nullopt) {
  BucketPeakStream stream(rule, ticks);
  for (const Admission& admission : admissions)
    stream.add(admission.sent_ns, admission.replied_ns);
  return stream.peak();
}

// Windows are counted whole whatever the order: no sort needed.
AdmissionPeak fixed_peak(engine::RecordView records, const AdmissionRule& rule) {
  FixedPeakStream stream(rule);
  for (const auto& record : records) {
    if (record.outcome == engine::Outcome::allowed)
      stream.add(record.bucket, record.sent_ns, record.replied_ns);
  }
  return stream.peak();
}

}  // namespace

std::optional<AdmissionRule::Kind> contract_kind(std::string_view name) {
  if (name == "sliding")
    return AdmissionRule::Kind::sliding;
  if (name == "fixed")
    return AdmissionRule::Kind::fixed;
  if (name == "sliding-counter")
    return AdmissionRule::Kind::sliding_counter;
  // A queue, to its arrivals (its departures: checks/queue_audit).
  if (name == "token-bucket" || name == "gcra" || name == "queue")
    return AdmissionRule::Kind::bucket;
  return std::nullopt;
}

bool bucket_contract(std::string_view name) {
  return contract_kind(name) == AdmissionRule::Kind::bucket;
}

std::optional<AdmissionRule::Kind> contract_kind(std::string_view name, std::string_view anchor) {
  const auto kind = contract_kind(name);
  if (kind == AdmissionRule::Kind::fixed && anchor == "first-hit")
    return AdmissionRule::Kind::first_hit;
  return kind;
}

AdmissionPeak find_admission_peak(engine::RecordView records, const AdmissionRule& rule) {
  switch (rule.kind) {
    case AdmissionRule::Kind::fixed:
      return fixed_peak(records, rule);
    case AdmissionRule::Kind::bucket: {
      const std::vector<Admission> admissions = admissions_by_send(records);
      const AdmissionPeak bracket = bucket_peak(admissions, most_admitting(rule));
      const std::optional<TickPhase> ticks = tick_phase(records, rule);
      if (!ticks)
        return bracket;
      // Both bound what any placement of the ticks admits: the one a span exceeds more proves
      // more (the bracket, when the phase is known too loosely to beat it).
      const AdmissionPeak anchored = bucket_peak(admissions, rule, ticks);
      return anchored.excess() > bracket.excess() ? anchored : bracket;
    }
    case AdmissionRule::Kind::first_hit: {
      // Also: a span shorter than a window meets at most two first-hit windows, so it holds at
      // most twice the limit, whatever their phase (which state from before the run hides).
      const AdmissionPeak windows = FirstHitWindows(records, rule).peak();
      AdmissionRule two_windows = rule;
      two_windows.limit = 2 * rule.limit;
      const AdmissionPeak span = sliding_peak(admissions_by_send(records), two_windows);
      return span.excess() > windows.excess() ? span : windows;
    }
    case AdmissionRule::Kind::sliding_counter:
      return SlidingCounter(records, rule).peak();
    case AdmissionRule::Kind::sliding:
      break;
  }
  return sliding_peak(admissions_by_send(records), rule);
}

}  // namespace rlcheck::checks
