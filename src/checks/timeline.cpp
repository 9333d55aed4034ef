#include "checks/timeline.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

// An admission as the trailing window counts it: when its reply came, and what it weighs.
struct TimedAdmission {
  int64_t replied_ns = 0;
  uint32_t weight = 1;
};

// The bin a request sent `sent_ns` into the run falls in (the last holds the run's end).
size_t bin_of(const Timeline& timeline, int64_t sent_ns) {
  return std::min(static_cast<size_t>(k_timeline_bins) - 1,
                  static_cast<size_t>(std::max<int64_t>(0, sent_ns) / timeline.bin_ns));
}

TimelineSeries bin_identity(RecordSpan records, uint32_t identity, const Timeline& timeline,
                            int64_t window_ns) {
  const auto bins = static_cast<size_t>(k_timeline_bins);
  TimelineSeries series;
  series.identity = identity;
  series.allowed.assign(bins, 0);
  series.denied.assign(bins, 0);
  series.errors.assign(bins, 0);
  series.in_window.assign(bins, 0);
  std::vector<TimedAdmission> admitted;
  for (const RequestRecord& record : records) {
    const size_t bin = bin_of(timeline, record.sent_ns);
    const auto weight = timeline.in_units ? static_cast<uint32_t>(std::max(record.cost, 0)) : 1U;
    switch (record.outcome) {
      case Outcome::allowed:
        series.allowed[bin] += weight;
        admitted.push_back({record.replied_ns, weight});
        break;
      case Outcome::denied:
        series.denied[bin] += weight;
        break;
      case Outcome::error:
        series.errors[bin] += weight;
        break;
    }
  }
  std::sort(admitted.begin(), admitted.end(), [](const TimedAdmission& a, const TimedAdmission& b) {
    return a.replied_ns < b.replied_ns;
  });
  size_t entered = 0, left = 0;
  uint32_t held = 0;  // the weight of admissions [left, entered)
  for (size_t bin = 0; bin < bins; ++bin) {
    const int64_t end = static_cast<int64_t>(bin + 1) * timeline.bin_ns;
    while (entered < admitted.size() && admitted[entered].replied_ns <= end)
      held += admitted[entered++].weight;
    while (left < entered && admitted[left].replied_ns <= end - window_ns)
      held -= admitted[left++].weight;
    series.in_window[bin] = held;
  }
  return series;
}

// What one window of `window_ns` may hold under `rule`: a bucket's burst and what it refills
// over the window, else the limit.
double window_allowance(const AdmissionRule& rule, int64_t window_ns) {
  return rule.kind == AdmissionRule::Kind::bucket
             ? static_cast<double>(rule.burst) + rule.tokens_per_ns * static_cast<double>(window_ns)
             : static_cast<double>(rule.limit);
}

}  // namespace

Timeline build_timeline(const IdentityRecords& identities, const AdmissionRule& rule,
                        int64_t duration_ns, uint32_t worst_identity, bool in_units) {
  Timeline timeline;
  timeline.duration_ns = std::max<int64_t>(duration_ns, 1);
  timeline.bin_ns =
      std::max<int64_t>(1, (timeline.duration_ns + k_timeline_bins - 1) / k_timeline_bins);
  timeline.identities = static_cast<int64_t>(identities.size());
  timeline.contract_line = window_allowance(rule, rule.window_ns);
  timeline.window_ns = rule.window_ns;
  timeline.in_units = in_units;
  std::vector<uint32_t> shown{worst_identity};
  for (uint32_t id = 0; id < identities.size() && shown.size() < k_timeline_series; ++id) {
    if (id != worst_identity)
      shown.push_back(id);
  }
  for (uint32_t id : shown) {
    if (id < identities.size())
      timeline.series.push_back(bin_identity(identities[id], id, timeline, rule.window_ns));
  }
  return timeline;
}

void add_timeline_parts(Timeline& timeline, const std::vector<ContractPart>& parts) {
  timeline.parts.clear();
  for (const ContractPart& part : parts) {
    TimelinePart drawn{part.spec, part.rule.window_ns, PartLineFit::drawn, 0};
    if (part.per_group)
      drawn.fit = PartLineFit::per_group;
    else if (timeline.in_units && part.counts_requests)
      drawn.fit = PartLineFit::counts_requests;
    else if (part.rule.kind != AdmissionRule::Kind::bucket &&
             part.rule.window_ns != timeline.window_ns)
      drawn.fit = PartLineFit::other_window;
    else
      drawn.line = window_allowance(part.rule, timeline.window_ns);
    timeline.parts.push_back(std::move(drawn));
  }
}

namespace {

// Spans as sweep edges: (instant, +1 opening / -1 closing).
using SpanEdges = std::vector<std::pair<int64_t, int>>;

void add_span(SpanEdges& edges, int64_t from, int64_t to) {
  if (to <= from)
    return;
  edges.emplace_back(from, +1);
  edges.emplace_back(to, -1);
}

// The most spans open at one instant of each bin. Spans are half-open: one closing where
// another opens is no overlap (closings sort first at an instant).
std::vector<uint32_t> most_open_per_bin(SpanEdges& edges, const Timeline& timeline) {
  std::sort(edges.begin(), edges.end());
  const auto bins = static_cast<size_t>(k_timeline_bins);
  std::vector<uint32_t> most(bins, 0);
  size_t next = 0;
  int64_t open = 0;
  for (size_t bin = 0; bin < bins; ++bin) {
    const int64_t end = static_cast<int64_t>(bin + 1) * timeline.bin_ns;
    int64_t peak = open;
    while (next < edges.size() && edges[next].first < end) {
      open += edges[next++].second;
      peak = std::max(peak, open);
    }
    most[bin] = static_cast<uint32_t>(std::max<int64_t>(0, peak));
  }
  return most;
}

}  // namespace

void add_in_flight(Timeline& timeline, const IdentityRecords& identities, int64_t cap,
                   int64_t hold_ns, int64_t slack_ns) {
  timeline.in_flight = true;
  timeline.contract_line = static_cast<double>(cap);
  constexpr int64_t k_for_ever = INT64_MAX / 4;
  for (TimelineSeries& series : timeline.series) {
    if (series.identity >= identities.size())
      continue;
    SpanEdges sure, possible;
    for (const RequestRecord& record : identities[series.identity]) {
      if (record.outcome == Outcome::allowed) {
        add_span(possible, record.sent_ns, record.replied_ns + slack_ns);
        if (hold_ns > 0)
          add_span(sure, record.replied_ns - hold_ns, record.sent_ns + hold_ns);
      } else if (engine::is_unknown(record)) {
        add_span(possible, record.sent_ns, k_for_ever);
      }
    }
    series.in_flight_surely = most_open_per_bin(sure, timeline);
    series.in_flight_possibly = most_open_per_bin(possible, timeline);
  }
}

void add_queue_waits(Timeline& timeline, const IdentityRecords& identities,
                     const QueueAudit& queue) {
  timeline.promised_wait_ns = queue.promised_wait_ns;
  timeline.wait_tolerance_ns = queue.tolerance_ns;
  const auto bins = static_cast<size_t>(k_timeline_bins);
  for (TimelineSeries& series : timeline.series) {
    series.wait_most_ns.assign(bins, -1);
    if (series.identity >= identities.size())
      continue;
    for (const RequestRecord& record : identities[series.identity]) {
      if (record.outcome != Outcome::allowed)
        continue;
      const size_t bin = bin_of(timeline, record.sent_ns);
      const int64_t wait =
          std::max<int64_t>(0, record.replied_ns - record.sent_ns - queue.unloaded_ns);
      series.wait_most_ns[bin] = std::max(series.wait_most_ns[bin], wait);
    }
  }
}

void add_slow_down_waits(Timeline& timeline, const IdentityRecords& identities,
                         const SlowDownAudit& slow_down, const SlowDownPromises& promises) {
  const auto bins = static_cast<size_t>(k_timeline_bins);
  for (TimelineSeries& series : timeline.series) {
    series.wait_most_ns.assign(bins, -1);
    series.wait_promised_ns.assign(bins, -1);
    series.wait_allowed_ns.assign(bins, -1);
    if (series.identity >= identities.size() || series.identity + 1 >= promises.starts.size())
      continue;
    // Per bin, the promise of its longest wait, and of the request furthest past its own
    // promise and tolerance (> 0: the delay check fails it).
    std::vector<int64_t> longest_promised(bins, -1), over_promised(bins, -1);
    std::vector<int64_t> most_over(bins, std::numeric_limits<int64_t>::min());
    const RecordSpan& records = identities[series.identity];
    size_t next = promises.starts[series.identity];
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != Outcome::allowed)
        continue;
      const int64_t promised = next < promises.promised_ns.size() ? promises.promised_ns[next] : -1;
      ++next;
      if (promised < 0)
        continue;  // its window may reach back before the run: not judged
      const int64_t sent = records.sent_ns(i);
      const size_t bin = bin_of(timeline, sent);
      const int64_t extra = records.replied_ns(i) - sent - slow_down.unloaded_ns;
      const int64_t wait = std::max<int64_t>(0, extra);
      int64_t& most = series.wait_most_ns[bin];
      if (wait > most || (wait == most && promised > longest_promised[bin])) {
        most = wait;
        longest_promised[bin] = promised;
      }
      const int64_t over = extra - promised - slow_down_tolerance_ns(promised);
      if (over > most_over[bin]) {
        most_over[bin] = over;
        over_promised[bin] = promised;
      }
    }
    // A bin drawn past its line holds a request the delay check fails, and only then: the line
    // is that request's promise when there is one (the longest wait is past it too), else the
    // longest wait's (which it then keeps).
    for (size_t bin = 0; bin < bins; ++bin) {
      if (series.wait_most_ns[bin] < 0)
        continue;
      const int64_t promised = most_over[bin] > 0 ? over_promised[bin] : longest_promised[bin];
      series.wait_promised_ns[bin] = promised;
      series.wait_allowed_ns[bin] = promised + slow_down_tolerance_ns(promised);
    }
  }
}

void add_ban_spans(Timeline& timeline, const std::vector<BanSpan>& spans) {
  for (TimelineSeries& series : timeline.series) {
    series.ban_spans.clear();
    for (const BanSpan& span : spans) {
      if (span.identity == series.identity)
        series.ban_spans.emplace_back(span.from_ns, span.to_ns);
    }
  }
}

void add_offered_rate(Timeline& timeline, const IdentityRecords& identities,
                      const engine::Schedule& schedule) {
  if (!schedule.open_model())
    return;
  // A run's requests are numbered from its first (load.first_seq), the schedule's from 0; the
  // run holds a record of every request, the unsent ones too.
  uint64_t first_seq = UINT64_MAX;
  for (const RecordSpan records : identities) {
    for (const RequestRecord& record : records)
      first_seq = std::min(first_seq, record.seq);
  }
  std::vector<SentRequest> sent;
  for (const RecordSpan records : identities) {
    for (const RequestRecord& record : records) {
      if (record.error != engine::ErrorKind::not_sent)
        sent.push_back({record.seq - first_seq, record.sent_ns});
    }
  }
  timeline.rate = offered_rate(sent, schedule);
}

}  // namespace rlcheck::checks
