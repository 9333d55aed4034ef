#pragma once
// A fault applied during a run, on the run's clock: what the fail-mode and recovery checks,
// the JSON (runs[].faults) and the HTML timeline (a shaded band) read.

#include <cstdint>
#include <optional>
#include <string>

namespace rlcheck::checks {

// A request a fault check names (the run is the RunStats' run).
struct FaultRequest {
  uint64_t seq = 0;     // 0-based request number within the run
  int64_t sent_ns = 0;  // from the run's start line
};

struct FaultWindow {
  std::string spec;      // as typed: "pause@1s+2s"
  int64_t at_ns = 0;     // when it was applied, from the run's start line
  int64_t until_ns = 0;  // when it ended (pause: at + D; the others: when the command returned)
  // From when it surely held. A pause holds once CLIENT PAUSE has returned: a request sent
  // between at and then may have been decided before Redis received it. The other faults act
  // somewhere within [at, until], so they are judged over the whole of it (held_from = at).
  int64_t held_from_ns = 0;
  bool applied = false;  // false: it could not be applied (see error), or the run ended first
  std::string error;     // why it could not be applied
  // Filled by the checks from the run's records:
  int64_t during_allowed = 0;  // requests whose send..reply span overlaps [at, until]
  int64_t during_denied = 0;
  int64_t during_errors = 0;
  std::optional<int64_t> recovered_after_ns;  // from until_ns to the first normal decision
  // What fail-mode judges. A decision made while the fault held is a request sent and answered
  // within [held_from, until]: one answered after until was decided by a Redis that was back,
  // and one sent before held_from may have been decided before the fault began.
  int64_t allowed_while_faulted = 0;  // allowed, sent and answered within [held_from, until]
  std::optional<FaultRequest> first_allowed_while_faulted;
  // denied, sent and answered within [held_from, until]; or errored with a span overlapping it.
  int64_t refused_while_faulted = 0;
  std::optional<FaultRequest> first_refused_while_faulted;
  // What recovery judges: requests sent after until (and before the next fault began).
  int64_t sent_after = 0;
  int64_t errors_after = 0;
  std::optional<int64_t> last_error_after_ns;  // from until_ns to the last one's send
};

}  // namespace rlcheck::checks
