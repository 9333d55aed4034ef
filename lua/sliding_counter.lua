-- Sliding-window counter (Cloudflare's design, HAProxy's rate counters): two fixed windows of
-- ARGV[2] ms on Redis's clock, weighted. A request is admitted while
-- prev * (1 - f) + curr < ARGV[1], f its position in the current window (0..1), prev and curr
-- the admissions counted in the previous and the current window.
-- KEYS[1]  limiter key (a hash: w the current window's index, c its count, p the previous
--          window's), expiring 2 windows after the last admission (the previous window
--          still weighs until then)
-- ARGV[1]  limit
-- ARGV[2]  window in milliseconds
-- ARGV[3]  optional: now in unix milliseconds from the caller's clock (rlcheck --time-source
--          client); absent or not a number, the script reads Redis TIME, one clock for
--          every caller
-- ARGV[4]  optional: the request's cost in units (rlcheck --cost): admitted while
--          estimate + cost - 1 < ARGV[1] (cost 1: the rule above), counted cost times; a cost
--          above the limit can never pass: denied with no retry hint (a bare 0).
-- Returns {allowed (1|0), remaining, retry_ms}: retry_ms is the wait until the estimate drops
-- below the limit (less the cost's other units), 0 when allowed.
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[4]) or 1
if cost > limit then
  return 0
end
local window_ms = tonumber(ARGV[2])
local window_us = window_ms * 1000
local now_us
local given_ms = tonumber(ARGV[3])
if given_ms then
  now_us = given_ms * 1000
else
  local t = redis.call('TIME')
  now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local index = math.floor(now_us / window_us)
local start_us = index * window_us

local state = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
local seen = tonumber(state[1])
local curr = tonumber(state[2]) or 0
local prev = tonumber(state[3]) or 0
if seen ~= index then
  if seen == index - 1 then
    prev = curr
  else
    prev = 0
  end
  curr = 0
end

local f = (now_us - start_us) / window_us
local estimate = prev * (1 - f) + curr
-- The estimate must be below this for the request's units to fit (the limit, for one unit).
local below = limit - cost + 1
if estimate < below then
  curr = curr + cost
  redis.call('HSET', KEYS[1], 'w', index, 'c', curr, 'p', prev)
  redis.call('PEXPIRE', KEYS[1], 2 * window_ms)
  return {1, math.max(0, math.ceil(limit - (estimate + cost))), 0}
end

-- The first instant the estimate is below that: later in this window while curr alone
-- leaves room, else in the next one, where this window's count is the previous.
local drop_us
if curr < below then
  drop_us = start_us + window_us * (1 - (below - curr) / prev)
else
  drop_us = start_us + window_us + window_us * (1 - below / curr)
end
return {0, 0, math.max(1, math.ceil((drop_us - now_us) / 1000))}
