-- Fixed window opened at the first hit (the INCR + EXPIRE store of express-rate-limit,
-- rate-limiter-flexible and `limits`), in one script so the expiry is never lost: the first
-- request of a window sets its end ARGV[2] ms later, and every request until then counts.
-- KEYS[1]  limiter key (the window's count, expiring when the window ends)
-- ARGV[1]  limit
-- ARGV[2]  window in milliseconds
-- ARGV[3]  optional: the request's cost in units (rlcheck --cost): the window holds at most
--          ARGV[1] units; a cost above the limit can never pass: denied with no retry hint
--          (a bare 0), and not counted.
-- Returns {allowed (1|0), remaining, retry_ms}: retry_ms is the wait until the window ends,
-- 0 when allowed.
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[3]) or 1
if cost > limit then
  return 0
end
local count = redis.call('INCRBY', KEYS[1], cost)
if count == cost then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if count <= limit then
  return {1, limit - count, 0}
end
return {0, 0, math.max(0, redis.call('PTTL', KEYS[1]))}
