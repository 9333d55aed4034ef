-- A sliding-log rate limiter for Redis: at most LIMIT admissions in any WINDOW_MS.
-- It replies in the shape rlcheck reads by default ({allowed, remaining, retry_ms}), so
--   rlcheck redis --script examples/limiter.lua
-- tests it as it is (rlcheck passes --arg '{limit}' --arg '{window_ms}' --arg '{uuid}').
--
-- KEYS[1]  the limiter key: a sorted set of admission times, one member per admission
-- ARGV[1]  limit: admissions allowed in any window
-- ARGV[2]  window in milliseconds
-- ARGV[3]  a member unique to this request (two requests in one millisecond must not collide)
--
-- Returns {allowed, remaining, retry_ms}:
--   allowed   1 when the request is admitted, 0 when it is denied
--   remaining admissions still free in the window after this one
--   retry_ms  when denied, the wait until the oldest admission leaves the window; 0 when allowed
--
-- The time comes from Redis (TIME), never from the caller: app servers whose clocks disagree
-- then share one clock. The script runs atomically, so counting and admitting cannot race.
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local member = ARGV[3]

local t = redis.call('TIME')
local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)

-- Forget the admissions that left the window.
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now_ms - window_ms)

local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now_ms, member)
  -- The log is useless once its newest entry is a window old: let Redis drop it then.
  redis.call('PEXPIRE', KEYS[1], window_ms)
  return {1, limit - count - 1, 0}
end

local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window_ms - now_ms}
