#pragma once
// A fault applied during a run, on the run's clock: what the fail-mode and recovery checks,
// the JSON (runs[].faults) and the HTML timeline (a shaded band) read.

#include <cstdint>
#include <optional>
#include <string>

namespace rlcheck::checks {

struct FaultWindow {
  std::string spec;      // as typed: "pause@1s+2s"
  int64_t at_ns = 0;     // when it was applied, from the run's start line
  int64_t until_ns = 0;  // when it ended (pause: at + D; the others: when the command returned)
  bool applied = false;  // false: it could not be applied (see error), or the run ended first
  std::string error;     // why it could not be applied
  // Filled by the checks from the run's records:
  int64_t during_allowed = 0;  // requests whose send..reply span overlaps [at, until]
  int64_t during_denied = 0;
  int64_t during_errors = 0;
  std::optional<int64_t> recovered_after_ns;  // from until_ns to the first normal decision
};

}  // namespace rlcheck::checks
