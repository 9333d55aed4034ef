#pragma once
// A queue (nginx limit_req without nodelay, a leaky bucket as a shaper): requests over the rate
// wait instead of failing. Its promise has three parts, audited here and by the bucket rule
// arrivals see (a queue of B admits B + 1 at once, then R per second):
// - departures: admitted requests leave at most 1 + K + R x d in any span d, K the excess
//   requests it lets through undelayed (nginx's limit_req delay=K; 0 without). A departure happened
//   between the request's send and its reply, and each span is stretched to the longest it
//   could have been, and by the larger of 10 ms and half a departure's interval more (a queue
//   times its departures with an event loop's cached clock), so only a breach under every
//   reading counts (contract);
// - waits: none waits longer than (B - K) / R beyond the target's unloaded latency (delay);
// - denials only when B already wait (utilisation, by the arrivals' bucket).

#include <cstdint>
#include <optional>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct QueueWait {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t sent_ns = 0;  // from the run start
  int64_t wait_ns = 0;  // from send to reply
};

struct QueueAudit {
  AdmissionPeak departures;          // the worst span of departures against 1 + R x d
  uint32_t departures_identity = 0;  // whose it was
  // The admission that took longest from send to reply (of equals, the lowest identity, then
  // the lowest seq).
  std::optional<QueueWait> longest;
  int64_t unloaded_ns = 0;       // the target's latency without a wait (see audit_queue)
  int64_t promised_wait_ns = 0;  // (B - K) / R
  int64_t nodelay = 0;           // K
  int64_t tolerance_ns = 0;      // beyond both, a wait is held against the queue
  // How long the longest admission waited beyond the unloaded latency.
  int64_t excess_wait_ns() const {
    return longest ? longest->wait_ns - unloaded_ns - promised_wait_ns : 0;
  }
  bool waited_too_long() const { return longest && excess_wait_ns() > tolerance_ns; }
};

// The latency of a reply nobody waited for: the 99th percentile (nearest rank) of the denials'
// (`denial_latencies`, reordered), else `shortest` (the fastest decided request's; 0 when none).
int64_t unloaded_latency_ns(std::vector<int64_t>& denial_latencies, int64_t shortest);

// `arrivals` is the bucket rule of the queue (burst B + 1, its rate); `depth` is B, `nodelay` K
// (nginx: a request leaves at once while its excess is at most K, else after (excess - K) / R,
// and is denied past B; the first of a fresh key has excess 0). The unloaded
// latency is read where the limiter makes nobody wait, favouring it: the 99th percentile of
// its denials' latencies (a denial is answered at once), else the shortest latency of the
// run. The tolerance is the larger of 100 ms and a tenth of (B - K) / R.
QueueAudit audit_queue(const IdentityRecords& identities, const AdmissionRule& arrivals,
                       int64_t depth, int64_t nodelay = 0);

}  // namespace rlcheck::checks
