#pragma once
// --verify-retry-after: after the last run, take an identity whose last request was denied with
// a retry hint, wait exactly what it was told (from the moment the denial arrived), and ask once
// more for it on the same limiter. A truthful hint means that request is allowed. A hint beyond
// `max_wait` (--max-retry-after, default the window) is not waited for: retry-after-bound
// already judges it, and a hint in the wrong unit could otherwise hold the test for days.
// Whole-second hints long enough (two steps or more) are read at four phases of their second
// first: three more requests a quarter of a second apart, each denied with a hint, and the one
// promising the earliest instant is retried, so a limiter that rounds its hint down fails every
// time rather than by where its denials fell.
// Ctrl-C ends the wait; the verification then says it was interrupted.

#include <functional>
#include <vector>

#include "checks/checks.hpp"
#include "config/config.hpp"
#include "engine/run.hpp"

namespace rlcheck::runner {

// `factory` makes clients of the same target and limiter state as the run `result` came from;
// `on_wait` (if set) is told how long the wait will be before it starts. The retry's record is
// appended to `retry_records` (the keys it wrote need cleaning up too).
checks::RetryVerification verify_retry_after(engine::ClientFactory& factory,
                                             const engine::RunResult& result,
                                             const config::LoadConfig& load, int run,
                                             std::chrono::milliseconds max_wait,
                                             const std::function<void(int64_t wait_ms)>& on_wait,
                                             std::vector<engine::RequestRecord>& retry_records);

}  // namespace rlcheck::runner
