#include "checks/concurrency_audit.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "checks/queue_audit.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;

// A span's edge for the sweeps: its instant, +1 opening, -1 closing, and the admission's seq.
struct SpanEdge {
  int64_t at_ns = 0;
  int step = 0;
  uint64_t seq = 0;
};

// Closings sort before openings at one instant: spans that only touch do not overlap.
bool edge_before(const SpanEdge& a, const SpanEdge& b) {
  return std::tuple(a.at_ns, a.step, a.seq) < std::tuple(b.at_ns, b.step, b.seq);
}

// The most admissions whose send..reply spans (closed) share an instant.
int64_t most_possibly_in_progress(RecordSpan records) {
  std::vector<std::pair<int64_t, int>> edges;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::allowed)
      continue;
    edges.emplace_back(records.sent_ns(i), -1);  // openings first: closed spans touch
    edges.emplace_back(records.replied_ns(i), +1);
  }
  std::sort(edges.begin(), edges.end());
  int64_t open = 0, most = 0;
  for (const auto& [at, step] : edges) {
    open -= step;
    most = std::max(most, open);
  }
  return most;
}

// Counts, for each denial, the admissions that may have been in progress while it could have
// arrived, and judges it.
void judge_concurrency_denials(RecordSpan records, uint32_t identity, const ConcurrencyRule& rule,
                               LockOuts& lockouts) {
  // An admission may hold its place over [s, r + slack]; an unknown one over [s, forever).
  std::vector<int64_t> starts, ends;
  for (size_t i = 0; i < records.size(); ++i) {
    const Outcome outcome = records.outcome(i);
    if (outcome == Outcome::allowed) {
      starts.push_back(records.sent_ns(i));
      ends.push_back(records.replied_ns(i) + rule.slack_ns);
    } else if (outcome == Outcome::error && engine::is_unknown(records[i])) {
      starts.push_back(records.sent_ns(i));
    }
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  const auto capacity = static_cast<double>(rule.cap);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::denied)
      continue;
    const int64_t sent = records.sent_ns(i), replied = records.replied_ns(i);
    // Begun by the denial's reply, less those surely over before its send (a subset of them).
    const auto begun = std::upper_bound(starts.begin(), starts.end(), replied) - starts.begin();
    const auto over = std::lower_bound(ends.begin(), ends.end(), sent) - ends.begin();
    const auto used = static_cast<double>(begun - over);
    judge_denial(lockouts, records[i], identity, used, capacity, used < capacity);
  }
}

}  // namespace

SureOverlap most_surely_in_progress(RecordSpan records, int64_t hold_ns) {
  std::vector<SpanEdge> edges;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) != Outcome::allowed || hold_ns <= 0)
      continue;
    const int64_t from = records.replied_ns(i) - hold_ns;
    const int64_t to = records.sent_ns(i) + hold_ns;
    if (from >= to)
      continue;  // it took 2 x the floor or longer: it may have been anywhere in it
    const uint64_t seq = records.seq(i);
    edges.push_back({from, +1, seq});
    edges.push_back({to, -1, seq});
  }
  std::sort(edges.begin(), edges.end(), edge_before);
  SureOverlap best;
  std::vector<uint64_t> open;
  for (const SpanEdge& edge : edges) {
    if (edge.step < 0) {
      open.erase(std::find(open.begin(), open.end(), edge.seq));
      continue;
    }
    open.push_back(edge.seq);
    if (static_cast<int64_t>(open.size()) > best.count) {
      best.count = static_cast<int64_t>(open.size());
      best.at_ns = edge.at_ns;
      best.seqs = open;
    }
  }
  std::sort(best.seqs.begin(), best.seqs.end());
  return best;
}

int64_t measured_hold_ns(const IdentityRecords& identities) {
  std::vector<int64_t> denials;
  int64_t fastest_admission = INT64_MAX, shortest = INT64_MAX;
  for (const RecordSpan& records : identities) {
    for (size_t i = 0; i < records.size(); ++i) {
      const Outcome outcome = records.outcome(i);
      if (outcome == Outcome::error)
        continue;
      const int64_t latency = records.replied_ns(i) - records.sent_ns(i);
      shortest = std::min(shortest, latency);
      if (outcome == Outcome::denied)
        denials.push_back(latency);
      else
        fastest_admission = std::min(fastest_admission, latency);
    }
  }
  if (fastest_admission == INT64_MAX)
    return 0;
  const int64_t beyond = fastest_admission - unloaded_latency_ns(denials, shortest);
  return std::max<int64_t>(0, beyond - beyond / 10);
}

ConcurrencyAudit audit_concurrency(const IdentityRecords& identities, const ConcurrencyRule& rule,
                                   LockOuts& lockouts) {
  ConcurrencyAudit audit;
  audit.cap = rule.cap;
  audit.hold_measured = !rule.hold_ns.has_value();
  audit.released_by_run = rule.released_by_run;
  audit.hold_ns = rule.hold_ns ? *rule.hold_ns : measured_hold_ns(identities);
  for (size_t id = 0; id < identities.size(); ++id) {
    const auto identity = static_cast<uint32_t>(id);
    SureOverlap sure = most_surely_in_progress(identities[id], audit.hold_ns);
    // Of equal counts, the lowest identity (the first seen).
    if (sure.count > audit.surely_at_once) {
      audit.surely_at_once = sure.count;
      audit.surely_identity = identity;
      audit.surely_at_ns = sure.at_ns;
      audit.surely_seqs = std::move(sure.seqs);
    }
    audit.possibly_at_once =
        std::max(audit.possibly_at_once, most_possibly_in_progress(identities[id]));
    judge_concurrency_denials(identities[id], identity, rule, lockouts);
  }
  return audit;
}

}  // namespace rlcheck::checks
