#include "checks/contract_audit.hpp"

#include <algorithm>
#include <deque>
#include <map>

#include "checks/first_hit.hpp"
#include "checks/room_stream.hpp"
#include "checks/sliding_counter.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

// The requests the limiter decided (errors never reached a decision), by send instant: their
// indices in `records` (4 bytes a request, where a copy would take a record's size). With
// `unknown`, also the errored ones it may have decided (engine::is_unknown).
std::vector<uint32_t> decided_by_send(RecordSpan records, bool unknown = false) {
  std::vector<uint32_t> decided;
  decided.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::error || (unknown && engine::is_unknown(records[i])))
      decided.push_back(static_cast<uint32_t>(i));
  }
  engine::stable_sort_by_send(records, decided);
  return decided;
}

// First come, first served under the contract: how many of `decided` it admits.
int64_t contract_admissions(RecordSpan records, const std::vector<uint32_t>& decided,
                            const AdmissionRule& rule, int64_t start_wall_ns) {
  switch (rule.kind) {
    case AdmissionRule::Kind::first_hit:
      return first_hit_admissions(records, decided, rule);
    case AdmissionRule::Kind::sliding_counter:
      return sliding_counter_admissions(records, decided, rule);
    default:
      break;
  }
  ContractReplay replay(rule);
  for (const uint32_t index : decided) {
    const int64_t window = rule.kind == AdmissionRule::Kind::fixed
                               ? window_of(records[index], start_wall_ns, rule)
                               : 0;
    replay.add(records.sent_ns(index), window);
  }
  return replay.allowed();
}

}  // namespace

std::vector<int64_t> unknown_sends(RecordSpan records) {
  std::vector<int64_t> sends;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::error)
      continue;
    const RequestRecord record = records[i];
    if (engine::is_unknown(record))
      sends.push_back(record.sent_ns);
  }
  std::sort(sends.begin(), sends.end());
  return sends;
}

int64_t wall_window(int64_t start_wall_ns, int64_t at_ns, int64_t window_ns) {
  const int64_t wall = start_wall_ns + at_ns;
  const int64_t quotient = wall / window_ns;
  return (wall % window_ns != 0 && wall < 0) ? quotient - 1 : quotient;
}

IdentityRecords split_by_identity(engine::RecordLog& records, int64_t identities) {
  const auto count = static_cast<size_t>(std::max<int64_t>(1, identities));
  records.stable_sort_by_identity(count);
  const RecordSpan all = records.view();
  IdentityRecords split(count);
  size_t begin = 0;
  for (size_t id = 0; id < count; ++id) {
    size_t end = begin;
    while (end < records.size() && records.identity(end) % count == id)
      ++end;
    split[id] = all.subspan(begin, end - begin);
    begin = end;
  }
  return split;
}

IdentityRecords split_by_identity(std::vector<RequestRecord>& records, int64_t identities) {
  const auto count = static_cast<size_t>(std::max<int64_t>(1, identities));
  const auto identity_of = [count](const RequestRecord& record) { return record.identity % count; };
  if (count > 1) {
    std::stable_sort(records.begin(), records.end(),
                     [&](const RequestRecord& a, const RequestRecord& b) {
                       return identity_of(a) < identity_of(b);
                     });
  }
  IdentityRecords split(count);
  size_t begin = 0;
  for (size_t id = 0; id < count; ++id) {
    size_t end = begin;
    while (end < records.size() && identity_of(records[end]) == id)
      ++end;
    split[id] = RecordSpan(std::span<const RequestRecord>(records.data() + begin, end - begin));
    begin = end;
  }
  return split;
}

// Gives an admission the fixed window it surely fell in, or a lone window of its own when its
// send..reply span (widened by the clock's uncertainty) straddles a boundary: -(seq + 1), unique
// whatever order the records come in; negative indices never collide with the clock's. False
// for a record it leaves as it is.
bool place_in_wall_window(RequestRecord& record, int64_t start_wall_ns, const AdmissionRule& rule) {
  if (record.bucket != 0 || record.outcome != Outcome::allowed)
    return false;
  const int64_t first = wall_window(start_wall_ns, record.sent_ns - rule.clock_ns, rule.window_ns);
  const int64_t last =
      wall_window(start_wall_ns, record.replied_ns + rule.clock_ns, rule.window_ns);
  record.bucket = first == last ? first : -static_cast<int64_t>(record.seq) - 1;
  return true;
}

void assign_wall_windows(engine::RecordLog& records, int64_t start_wall_ns,
                         const AdmissionRule& rule) {
  if (rule.window_ns <= 0)
    return;
  for (size_t i = 0; i < records.size(); ++i) {
    RequestRecord record = records[i];
    if (place_in_wall_window(record, start_wall_ns, rule))
      records.set(i, record);
  }
}

void assign_wall_windows(std::vector<RequestRecord>& records, int64_t start_wall_ns,
                         const AdmissionRule& rule) {
  if (rule.window_ns <= 0)
    return;
  for (RequestRecord& record : records)
    place_in_wall_window(record, start_wall_ns, rule);
}

std::vector<int64_t> tally_by_skew(RecordSpan records, const AdmissionPeak& span,
                                   size_t clock_skews) {
  std::vector<int64_t> tally(clock_skews, 0);
  if (clock_skews == 0)
    return tally;
  const int64_t end_ns = span.start_ns + span.length_ns;
  for (const RequestRecord record : records) {
    if (record.outcome != Outcome::allowed || record.sent_ns < span.start_ns ||
        record.replied_ns > end_ns)
      continue;
    ++tally[std::min<size_t>(record.clock_skew, clock_skews - 1)];
  }
  return tally;
}

ContractAudit audit_contract(const IdentityRecords& identities, const AdmissionRule& rule) {
  ContractAudit audit;
  AdmissionRule sliding = rule;
  sliding.kind = AdmissionRule::Kind::sliding;
  bool first = true;
  for (size_t id = 0; id < identities.size(); ++id) {
    const AdmissionPeak peak = find_admission_peak(identities[id], rule);
    if (first || peak.excess() > audit.worst.excess()) {
      audit.worst = peak;
      audit.worst_identity = static_cast<uint32_t>(id);
    }
    if (rule.kind == AdmissionRule::Kind::fixed || rule.kind == AdmissionRule::Kind::first_hit) {
      const AdmissionPeak burst = find_admission_peak(identities[id], sliding);
      if (first || burst.count > audit.boundary_burst.count)
        audit.boundary_burst = burst;
    }
    if (rule.kind == AdmissionRule::Kind::sliding_counter) {
      const AdmissionPeak span = find_admission_peak(identities[id], sliding);
      if (first || span.count > audit.sliding_window.count)
        audit.sliding_window = span;
    }
    first = false;
  }
  return audit;
}

Utilisation identity_utilisation(RecordSpan records, uint32_t identity, const AdmissionRule& rule,
                                 int64_t start_wall_ns) {
  const auto decided = decided_by_send(records);
  Utilisation share;
  share.identity = identity;
  share.allowed = contract_admissions(records, decided, rule, start_wall_ns);
  for (const uint32_t index : decided)
    share.admitted += records.outcome(index) == Outcome::allowed ? 1 : 0;
  // Requests that may have been admitted unseen: read either as never offered, or as offered
  // and admitted, whichever gives the limiter the larger share. (None without errors.)
  const auto with_unknown =
      decided.size() < records.size() ? decided_by_send(records, true) : std::vector<uint32_t>();
  if (const auto unknown =
          static_cast<int64_t>(with_unknown.size()) - static_cast<int64_t>(decided.size());
      unknown > 0) {
    Utilisation admitted = share;
    admitted.unknown = unknown;
    admitted.admitted += unknown;
    admitted.allowed = contract_admissions(records, with_unknown, rule, start_wall_ns);
    if (admitted.ratio() > share.ratio())
      share = admitted;
  }
  return share;
}

Utilisation measure_utilisation(const IdentityRecords& identities, const AdmissionRule& rule,
                                int64_t start_wall_ns) {
  Utilisation lowest;
  for (size_t id = 0; id < identities.size(); ++id) {
    const Utilisation share =
        identity_utilisation(identities[id], static_cast<uint32_t>(id), rule, start_wall_ns);
    if (id == 0 || share.ratio() < lowest.ratio())
      lowest = share;
  }
  return lowest;
}

int64_t admitted_in_flight_at_once(const IdentityRecords& identities) {
  int64_t most = 0;
  std::vector<std::pair<int64_t, int>> events;  // +1 at a send, -1 after a reply
  for (const RecordSpan& records : identities) {
    events.clear();
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != engine::Outcome::allowed)
        continue;
      events.emplace_back(records.sent_ns(i), 1);
      events.emplace_back(records.replied_ns(i), -1);
    }
    // A send at the instant of another's reply overlaps it.
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    int64_t in_flight = 0;
    for (const auto& [at, step] : events) {
      in_flight += step;
      most = std::max(most, in_flight);
    }
  }
  return most;
}

}  // namespace rlcheck::checks
