-- Sliding-window log limiter: at most ARGV[1] admissions in any ARGV[2] ms.
-- KEYS[1]  limiter key (a ZSET of admission times)
-- ARGV[1]  limit
-- ARGV[2]  window in milliseconds
-- ARGV[3]  member unique to this request (a timestamp alone collides within a millisecond)
-- ARGV[4]  optional: now in unix milliseconds from the caller's clock (rlcheck --time-source
--          client); absent or not a number, the script reads Redis TIME, one clock for
--          every caller
-- ARGV[5]  optional: the request's cost in units (rlcheck --cost). Given, members are
--          "COST:ARGV[3]" and the window holds at most ARGV[1] units; a cost above the limit
--          can never pass: denied with no retry hint (a bare 0).
-- Returns {allowed (1|0), remaining, retry_ms}: retry_ms is the wait until the oldest
-- admission (with costs: enough of the oldest for this cost) leaves the window, 0 when
-- allowed.
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
local cost = tonumber(ARGV[5])
if cost then
  if cost > limit then
    return 0
  end
  local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  local used = 0
  for i = 1, #entries, 2 do
    used = used + tonumber(string.match(entries[i], '^(%d+):'))
  end
  if used + cost <= limit then
    redis.call('ZADD', KEYS[1], now, cost .. ':' .. ARGV[3])
    redis.call('PEXPIRE', KEYS[1], window)
    return {1, limit - used - cost, 0}
  end
  local freed = 0
  for i = 1, #entries, 2 do
    freed = freed + tonumber(string.match(entries[i], '^(%d+):'))
    if freed >= used + cost - limit then
      return {0, limit - used, entries[i + 1] + window - now}
    end
  end
  return {0, limit - used, window}
end
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, oldest[2] + window - now}
