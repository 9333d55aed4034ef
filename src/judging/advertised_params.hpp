#pragma once
// The limiter's parameters as an HTTP endpoint's rate-limit headers gave them over a check's
// runs: what `rlcheck http` judges against when --limit or --window is not given. Pure.

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "engine/run.hpp"

namespace rlcheck::judging {

struct AdvertisedParams {
  enum class WindowBasis { none, policy, reset };

  std::optional<int64_t> limit;     // the limit most responses advertised
  std::optional<int64_t> window_s;  // whole seconds, as the headers give them
  WindowBasis window_basis = WindowBasis::none;
  // reset basis, when that reset was a timestamp read against the Date header: the windows it
  // allows, in the order to judge them (window_s - 1 when above 0, then window_s; see below).
  std::vector<int64_t> window_readings_s;
};

// limit: the value most responses advertised (the smaller on a tie), as the parser found it
// (RateLimit-Policy q, RateLimit limit, RateLimit-Limit, X-RateLimit-Limit).
//
// window, first rule that yields one:
//  1. policy: the w= most responses advertised (RateLimit-Policy, or a draft-6/7 quota policy
//     "10;w=60"), the smaller on a tie. Exact.
//  2. reset: the largest reset (RateLimit t / reset, RateLimit-Reset, X-RateLimit-Reset) on an
//     allowed response, when above 0. A run whose first request opens a fresh window (a fresh
//     identity, a sliding log, a bucket drained from full) sees it equal the window, to the
//     second the header rounds to; a run that starts inside a window already running (a fixed
//     window aligned to the clock) sees what that window had left, so the estimate is never
//     above the window and judges the window the run actually met. Denials are not read: their
//     reset is the wait until the next admission, not the window.
//     A reset that was a timestamp (an epoch X-RateLimit-Reset) is read against the Date
//     header, both in whole seconds, and servers round the reset either way (Flask-Limiter
//     sends the second after it): read on a fresh window, it is the window plus one (the
//     reset rounded up) or the window (rounded down). window_readings_s lists window_s - 1
//     (when above 0), then window_s: the runs are judged under each in turn until one passes,
//     so a correct limiter is not failed for a second the headers cannot tell. (Rarely, a
//     reply that crosses a second boundary reads a rounded-down reset as the window less one;
//     that reading is not tried.)
//  Neither: unset. No supported header advertises a burst or a refill rate.
// With `runs`, only the first `runs` of them are read (the probe's before its sustained phase).
AdvertisedParams read_advertised_params(const std::vector<engine::RunResult>& results,
                                        size_t runs = std::numeric_limits<size_t>::max());

}  // namespace rlcheck::judging
