-- Concurrency cap (a Redis semaphore with leases): at most ARGV[1] requests in progress at
-- once. Each admission holds a place, a member of a sorted set scored by when its lease ends,
-- until the caller releases it (ZREM KEYS[1] ARGV[3]) once its reply is sent; a caller that
-- never does (it crashed) loses the place when the lease ends, so a lost release cannot shrink
-- the cap for ever.
-- KEYS[1]  limiter key (a sorted set: member = request, score = lease end in ms of Redis TIME)
-- ARGV[1]  cap: requests in progress at once
-- ARGV[2]  lease in milliseconds (longer than any request is held)
-- ARGV[3]  the request's member, unique per request
-- ARGV[4]  optional: how long each holder is held before its release, in milliseconds
-- Returns {allowed (1|0), remaining, ms}: allowed, remaining is the free places left; denied,
-- ms is the wait until a place may free: with ARGV[4], until the earliest holder's hold ends
-- (no release comes sooner); without, until the earliest lease ends (the latest one frees).
local cap = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local hold = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= cap then
  local earliest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local ends = tonumber(earliest[2])
  if hold then
    ends = ends - lease + hold  -- every lease is as long: the earliest to end came in first
  end
  return {0, 0, math.max(1, ends - now)}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, cap - held - 1, 0}
