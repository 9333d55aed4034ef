-- examples/limiter.lua's sliding log, written to take the time from its caller instead of
-- reading Redis's clock, as many limiters do (`Date.now()` passed as an argument). Used by
-- docs/time.md:
--   rlcheck redis --script examples/limiter_now.lua --arg '{limit}' --arg '{window_ms}' \
--     --arg '{now_ms}' --arg '{uuid}' ...
-- Because it is told the time, rlcheck can test it on a virtual clock (--virtual-clock: days
-- of traffic in seconds). Because it trusts its callers' clocks, it over-admits when they
-- disagree (--clock-skew 0,+800ms fails it).
--
-- KEYS[1]  the limiter key: a sorted set of admission times, one member per admission
-- ARGV[1]  limit: admissions allowed in any window
-- ARGV[2]  window in milliseconds
-- ARGV[3]  now, in Unix milliseconds, from the caller's clock
-- ARGV[4]  a member unique to this request
--
-- Returns {allowed, remaining, retry_ms}, as examples/limiter.lua does.
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local now_ms = tonumber(ARGV[3])
local member = ARGV[4]

redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now_ms - window_ms)

local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now_ms, member)
  redis.call('PEXPIRE', KEYS[1], window_ms)
  return {1, limit - count - 1, 0}
end

local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window_ms - now_ms}
