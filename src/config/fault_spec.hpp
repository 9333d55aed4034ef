#pragma once
// --fault SPEC: what to do to the limiter's Redis, and when, during every run (pause@1s+2s,
// kill-clients@3s, flush-scripts@1s, restart@2s, failover@2s, shell@1s:CMD).

#include <expected>
#include <string>
#include <string_view>

#include "config/duration.hpp"

namespace rlcheck::config {

enum class FaultKind { pause, kill_clients, flush_scripts, restart, failover, shell };

struct FaultSpec {
  FaultKind kind = FaultKind::pause;
  Nanos at{0};          // offset into each run (its start line)
  Nanos duration{0};    // pause: how long; the others: 0 (they last until the server recovers)
  std::string command;  // shell: the command
  std::string text;     // as typed, for reports
};

// On error, the reason in words that can follow the flag name.
std::expected<FaultSpec, std::string> parse_fault(std::string_view spec);
const char* fault_kind_name(FaultKind kind);

}  // namespace rlcheck::config
