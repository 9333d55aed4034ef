#pragma once
// The one-line status of a run in progress: redrawn on a terminal four times a second, and
// elsewhere (CI logs) printed once an interval (--progress-interval) so a soak test's log
// shows it is alive. Pure: the caller owns the clock.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace rlcheck::observe {

// What the line says about one run.
struct StatusLine {
  std::string label;  // "lua run 1/4"
  uint64_t sent = 0;
  int64_t planned = 0;  // the requests a run sends
  uint64_t allowed = 0;
  uint64_t denied = 0;
  uint64_t errors = 0;
  std::optional<double> rate;     // decisions a second, over the last second
  std::optional<int64_t> p99_ns;  // latency over the last second
  std::chrono::nanoseconds elapsed{0};
  std::optional<std::chrono::nanoseconds> span;  // the run's planned span, when it has one
  bool virtual_clock = false;                    // elapsed and span are virtual time
  size_t stage = 0;                              // --stages: the stage under way, 1-based (0: none)
  size_t stages = 0;                             // --stages: how many
};

// "rlcheck: lua run 1/4: 12000/60000 sent, 1000 allowed, 10950 denied, 0 errors, 1998/s, p99
// 1.2ms (last 1s), 6s/30s" ("virtual 3h00m/24h" on the virtual clock; no "/30s" when the span
// is unknown, "p99 -" when nothing was decided in the last second; with --stages, ", stage
// 2/3" before the time).
std::string format_status(const StatusLine& line);

// When lines are due: the first at `first`, then one every `every`. A check that comes late
// prints one line, not the ones it missed.
class StatusSchedule {
 public:
  StatusSchedule(std::chrono::nanoseconds first, std::chrono::nanoseconds every)
      : next_(first), every_(every) {}
  // True when a line is due at `elapsed` (then the next is scheduled).
  bool due(std::chrono::nanoseconds elapsed);

 private:
  std::chrono::nanoseconds next_;
  std::chrono::nanoseconds every_;
};

// The lines of a run off a terminal: `interval` (--progress-interval) when given, none when it
// is 0; by default one every 10 s for a run planned to last over 30 s, and for a run whose span
// is unknown (the closed model) one at 30 s and then every 10 s. nullopt: no lines.
std::optional<StatusSchedule> status_schedule(std::optional<std::chrono::nanoseconds> interval,
                                              std::optional<std::chrono::nanoseconds> span);

// "6s", "1m05s", "3h00m"; and a planned span: "30s", "1m30s", "5m", "24h", "1h30m".
std::string format_elapsed(std::chrono::nanoseconds elapsed);
std::string format_span(std::chrono::nanoseconds span);
// A latency: "850us", "1.2ms", "35ms", "1.5s".
std::string format_latency(int64_t ns);

}  // namespace rlcheck::observe
