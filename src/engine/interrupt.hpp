#pragma once
// Ctrl-C: the first SIGINT or SIGTERM stops the runs; what was measured is still reported.

#include <algorithm>
#include <chrono>
#include <thread>

namespace rlcheck::engine {

void install_interrupt_handler();
bool interrupted();
// Stops the runs as Ctrl-C does, from any thread (a deadline that passed).
void request_interrupt();

// How often a wait looks at the flag: Ctrl-C ends any wait within this.
inline constexpr auto k_interrupt_poll = std::chrono::milliseconds(20);

// Sleeps until `deadline` on its own clock (steady or wall), or until Ctrl-C: every wait of
// rlcheck goes through here so none can outlast an interrupt. False when interrupted.
template <typename TimePoint>
bool wait_until(TimePoint deadline) {
  using WaitClock = typename TimePoint::clock;
  while (WaitClock::now() < deadline && !interrupted())
    std::this_thread::sleep_until(std::min(deadline, WaitClock::now() + k_interrupt_poll));
  return !interrupted();
}

}  // namespace rlcheck::engine
