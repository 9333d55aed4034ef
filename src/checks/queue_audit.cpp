#include "checks/queue_audit.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

namespace rlcheck::checks {
namespace {

constexpr int64_t k_min_tolerance_ns = 100'000'000;  // a loaded machine's reply jitter
constexpr int64_t k_departure_slack_ns = 10'000'000;

// Every decided request's latency, the denials' apart: what unloaded_latency_ns reads.
int64_t unloaded_latency(const IdentityRecords& identities) {
  std::vector<int64_t> denials;
  int64_t shortest = INT64_MAX;
  for (const RecordSpan& records : identities) {
    for (const auto& record : records) {
      if (record.outcome == engine::Outcome::error)
        continue;
      const int64_t latency = record.replied_ns - record.sent_ns;
      shortest = std::min(shortest, latency);
      if (record.outcome == engine::Outcome::denied)
        denials.push_back(latency);
    }
  }
  return unloaded_latency_ns(denials, shortest);
}

}  // namespace

int64_t unloaded_latency_ns(std::vector<int64_t>& denial_latencies, int64_t shortest) {
  if (denial_latencies.empty())
    return shortest == INT64_MAX ? 0 : shortest;
  const size_t rank = (denial_latencies.size() * 99 + 99) / 100 - 1;
  std::nth_element(denial_latencies.begin(),
                   denial_latencies.begin() + static_cast<std::ptrdiff_t>(rank),
                   denial_latencies.end());
  return denial_latencies[rank];
}

QueueAudit audit_queue(const IdentityRecords& identities, const AdmissionRule& arrivals,
                       int64_t depth, int64_t nodelay) {
  QueueAudit audit;
  const double ns_per_request = arrivals.tokens_per_ns > 0 ? 1.0 / arrivals.tokens_per_ns : 0;
  audit.nodelay = std::clamp<int64_t>(nodelay, 0, depth);
  audit.promised_wait_ns =
      static_cast<int64_t>(static_cast<double>(depth - audit.nodelay) * ns_per_request);
  audit.tolerance_ns = std::max(k_min_tolerance_ns, audit.promised_wait_ns / 10);
  audit.unloaded_ns = unloaded_latency(identities);

  AdmissionRule departures = arrivals;
  departures.burst = 1 + audit.nodelay;  // one leaves at a time, after K undelayed
  // Queues time their departures with an event loop's cached clock (nginx's, libevent's), so
  // one can leave a few ms before its turn: each span is read this much longer.
  departures.clock_ns =
      std::max({arrivals.clock_ns, k_departure_slack_ns, static_cast<int64_t>(ns_per_request / 2)});
  bool first = true;
  for (size_t id = 0; id < identities.size(); ++id) {
    const AdmissionPeak peak = find_admission_peak(identities[id], departures);
    if (first || peak.excess() > audit.departures.excess()) {
      audit.departures = peak;
      audit.departures_identity = static_cast<uint32_t>(id);
    }
    first = false;
    for (const auto& record : identities[id]) {
      if (record.outcome != engine::Outcome::allowed)
        continue;
      // The longest wait; of equals, the lowest identity, then the lowest seq.
      const QueueWait candidate{record.identity, record.seq, record.sent_ns,
                                record.replied_ns - record.sent_ns};
      const auto key = [](const QueueWait& w) { return std::tuple(-w.wait_ns, w.identity, w.seq); };
      if (!audit.longest || key(candidate) < key(*audit.longest))
        audit.longest = candidate;
    }
  }
  return audit;
}

}  // namespace rlcheck::checks
