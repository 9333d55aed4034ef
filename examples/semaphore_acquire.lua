-- A Redis semaphore's acquire: at most ARGV[1] holders at once. Each holder is a member of a
-- sorted set scored by when its lease ends; a holder that never releases (it crashed) loses
-- its place when the lease ends. Released by semaphore_release.lua.
-- KEYS[1]  the semaphore (a sorted set: member = holder, score = lease end in ms of Redis TIME)
-- ARGV[1]  how many may hold it at once
-- ARGV[2]  lease in milliseconds (longer than anyone holds it)
-- ARGV[3]  the holder's member, unique per acquire (the release names it again)
-- Returns {allowed (1|0), free places left}.
local cap = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])

local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= cap then
  return {0, 0}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, cap - held - 1}
