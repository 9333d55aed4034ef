#pragma once
// The limiters built from plain commands, as the Redis INCR documentation and the seed
// articles write them, races included.

#include "redis/strategy.hpp"

namespace rlcheck::redis {

// GET; when below the limit INCR, and EXPIRE when INCR returned 1. Check-then-act: every
// request that reads before the others write is admitted.
std::unique_ptr<Strategy> make_naive(const StrategyParams& params);
// INCR, then EXPIRE when it returned 1 (INCR docs, pattern 2). Counts exactly; denials ask
// PTTL for the retry hint. A client that dies between INCR and EXPIRE leaves a key with no TTL.
std::unique_ptr<Strategy> make_incr_expire(const StrategyParams& params);
// MULTI INCR EXPIRE EXEC on a key per aligned window of the client clock (INCR docs,
// pattern 1). Exact per window; up to twice the limit across a boundary.
std::unique_ptr<Strategy> make_fixed_window(const StrategyParams& params);

}  // namespace rlcheck::redis
