#include "checks/queue_audit.hpp"

#include <algorithm>
#include <vector>

namespace rlcheck::checks {
namespace {

constexpr int64_t k_min_tolerance_ns = 100'000'000;  // a loaded machine's reply jitter
constexpr int64_t k_departure_slack_ns = 10'000'000;

// The latency of a reply nobody waited for: the 99th percentile (nearest rank) of the
// denials', else the shortest decided request's.
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
  if (denials.empty())
    return shortest == INT64_MAX ? 0 : shortest;
  const size_t rank = (denials.size() * 99 + 99) / 100 - 1;
  std::nth_element(denials.begin(), denials.begin() + static_cast<std::ptrdiff_t>(rank),
                   denials.end());
  return denials[rank];
}

}  // namespace

QueueAudit audit_queue(const IdentityRecords& identities, const AdmissionRule& arrivals,
                       int64_t depth) {
  QueueAudit audit;
  const double ns_per_request = arrivals.tokens_per_ns > 0 ? 1.0 / arrivals.tokens_per_ns : 0;
  audit.promised_wait_ns = static_cast<int64_t>(static_cast<double>(depth) * ns_per_request);
  audit.tolerance_ns = std::max(k_min_tolerance_ns, audit.promised_wait_ns / 10);
  audit.unloaded_ns = unloaded_latency(identities);

  AdmissionRule departures = arrivals;
  departures.burst = 1;  // one leaves at a time
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
      const int64_t wait = record.replied_ns - record.sent_ns;
      if (!audit.longest || wait > audit.longest->wait_ns)
        audit.longest = QueueWait{record.identity, record.seq, record.sent_ns, wait};
    }
  }
  return audit;
}

}  // namespace rlcheck::checks
