#include "checks/step_probe.hpp"

#include <vector>

namespace rlcheck::checks {

bool admits_in_a_row(std::span<const ProbeRequest> requests) {
  for (size_t i = 1; i < requests.size(); ++i) {
    if (requests[i].outcome == engine::Outcome::allowed &&
        requests[i - 1].outcome == engine::Outcome::allowed)
      return true;
  }
  return false;
}

std::optional<StepReading> read_steps(int64_t opening_denied_ns,
                                      std::span<const ProbeRequest> requests) {
  struct Run {
    int64_t after_denial_ns = 0;  // the denial before it
    int64_t start_ns = 0;         // its first admission
    int64_t size = 0;
    bool ended = false;  // a denial came after it
  };
  std::vector<Run> runs;
  int64_t last_denial = opening_denied_ns;
  bool in_run = false;
  for (const ProbeRequest& request : requests) {
    if (request.outcome == engine::Outcome::allowed) {
      if (!in_run)
        runs.push_back({last_denial, request.at_ns, 0, false});
      in_run = true;
      ++runs.back().size;
    } else if (request.outcome == engine::Outcome::denied) {
      if (in_run)
        runs.back().ended = true;
      in_run = false;
      last_denial = request.at_ns;
    }
  }
  if (runs.size() < 2 || runs[0].size < 2 || !runs[1].ended)
    return std::nullopt;
  return StepReading{
      runs[1].size,
      runs[0].size,
      {runs[1].after_denial_ns - runs[0].start_ns, runs[1].start_ns - runs[0].after_denial_ns}};
}

}  // namespace rlcheck::checks
