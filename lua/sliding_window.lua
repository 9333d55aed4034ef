-- Sliding-window log limiter: at most ARGV[1] admissions in any ARGV[2] ms.
-- KEYS[1]  limiter key (a ZSET of admission times)
-- ARGV[1]  limit
-- ARGV[2]  window in milliseconds
-- ARGV[3]  member unique to this request (a timestamp alone collides within a millisecond)
-- ARGV[4]  optional: now in unix milliseconds from the caller's clock (rlcheck --time-source
--          client); absent or not a number, the script reads Redis TIME, one clock for
--          every caller
-- Returns {allowed (1|0), remaining, retry_ms}: retry_ms is the wait until the oldest
-- admission leaves the window, 0 when allowed.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now
local given_ms = tonumber(ARGV[4])
if given_ms then
  now = given_ms
else
  local t = redis.call('TIME')
  now = t[1] * 1000 + math.floor(t[2] / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, oldest[2] + window - now}
