-- A sliding-log rate limiter counted in units: at most LIMIT units in any WINDOW_MS, each
-- request costing COST units (LLM tokens, a query's cost, a bulk call's items). Test it with
--   rlcheck redis --script examples/limiter_cost.lua --arg '{limit}' --arg '{window_ms}' \
--     --arg '{cost}' --arg '{uuid}' --cost-dist 1:60,5:30,10:10
--
-- KEYS[1]  the limiter key: a sorted set of admissions, member "COST:ID", score the time
-- ARGV[1]  limit: units allowed in any window
-- ARGV[2]  window in milliseconds
-- ARGV[3]  this request's cost in units
-- ARGV[4]  a member unique to this request
--
-- Returns {allowed, remaining, retry_ms}: remaining units after this request, and when
-- denied the wait until enough of the oldest admissions leave for this cost to fit. A request
-- costing more than the limit can never pass: it is denied with no retry hint (a bare 0).
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])

local t = redis.call('TIME')
local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)

redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now_ms - window_ms)
if cost > limit then
  return 0
end

local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local used = 0
for i = 1, #entries, 2 do
  used = used + tonumber(string.match(entries[i], '^(%d+):'))
end
if used + cost <= limit then
  redis.call('ZADD', KEYS[1], now_ms, cost .. ':' .. ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window_ms)
  return {1, limit - used - cost, 0}
end

-- Oldest first: the wait until the units that leave make room for this cost.
local need = used + cost - limit
local freed = 0
for i = 1, #entries, 2 do
  freed = freed + tonumber(string.match(entries[i], '^(%d+):'))
  if freed >= need then
    return {0, limit - used, tonumber(entries[i + 1]) + window_ms - now_ms}
  end
end
return {0, limit - used, window_ms}
