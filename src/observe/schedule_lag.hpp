#pragma once
// Loads that cannot happen, said. An open-model run (--rate/--duration, --stages) is behind its
// schedule at an instant t from its start line when the next request to send, index s (s sent
// so far), was due before t: by t - due(s). Read four times a second (RunHooks::tick) from the
// live counts, never per request. A run more than 10 % (and 1 s) behind is warned about on
// stderr once, as it happens, saying which side could not keep up: every request in flight
// (the connections are the bottleneck: the target answers slower than the rate needs) or not
// (rlcheck itself cannot send that fast here).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "engine/schedule.hpp"

namespace rlcheck::observe {

// Over 1 s and over 10 % of the time elapsed since the start line.
bool behind_schedule(std::chrono::nanoseconds lag, std::chrono::nanoseconds elapsed);

class ScheduleLag {
 public:
  // `schedule` plans the whole run (every worker's share); this process sends the requests
  // i with i mod share_count == share_index.
  ScheduleLag(std::shared_ptr<const engine::Schedule> schedule, uint64_t requests,
              uint64_t share_count = 1, uint64_t share_index = 0);

  // At `elapsed` from the start line with `sent` of this process's requests sent: how far
  // behind its schedule the run is (0 when on time or every request has left).
  std::chrono::nanoseconds lag(std::chrono::nanoseconds elapsed, uint64_t sent) const;
  // This process's requests due by `elapsed`.
  uint64_t due_by(std::chrono::nanoseconds elapsed) const;
  // The planned rate (of the whole run, requests a second) when the next request to send, after
  // `sent`, was due: the rate the run could not keep up with.
  double rate_due(uint64_t sent) const;

 private:
  std::shared_ptr<const engine::Schedule> schedule_;
  uint64_t requests_;
  uint64_t share_count_;
  uint64_t share_index_;
};

// What the warning names: the run, how far behind, what was sent and due, the rate planned then,
// and whether every request slot was in flight (`in_flight` of `slots`).
struct LagSample {
  int run = 0;
  std::chrono::nanoseconds lag{0};
  uint64_t sent = 0;
  uint64_t due = 0;
  double rate_per_s = 0;
  uint64_t in_flight = 0;
  uint64_t slots = 0;  // requests that can be in flight at once (connections x pipeline)
};
// "warning: run 1 is 2.3s behind its schedule (sent 30123 of 61000 due): ...", one line.
std::string lag_warning(const LagSample& sample);

// Before the run: the peak rate a plan asks for against what its connections can carry at all.
// Each carries one request at a time (--pipeline: D), and a round trip takes at least 20 µs even
// on loopback (Redis answers about 50 000 unpipelined requests a second per connection, a
// syscall pair each way); so slots x 50 000/s is a ceiling no target can be faster than. A plan
// above it is a load that cannot happen: said before the run (not for --find-max, whose steps
// look for the ceiling, nor on the virtual clock, where time is not spent).
std::optional<std::string> rate_ceiling_warning(const config::Config& config);

}  // namespace rlcheck::observe
