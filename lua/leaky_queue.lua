-- Leaky-bucket queue (nginx limit_req without nodelay, traffic shapers): requests leave one
-- at a time, ARGV[2] per ARGV[3] ms; a request that finds the limiter busy waits its turn,
-- and is denied only when ARGV[1] requests already wait. The only state is when the next
-- request may leave, in microseconds of Redis TIME.
-- KEYS[1]  limiter key (a string holding that instant)
-- ARGV[1]  queue: how many requests may wait
-- ARGV[2]  requests per period
-- ARGV[3]  period in milliseconds
-- Returns {allowed (1|0), remaining, ms}: allowed, ms is how long the request must wait before
-- it leaves (the caller holds it that long) and remaining the free places in the queue;
-- denied, ms is the wait until a place frees.
local queue = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local period_us = tonumber(ARGV[3]) * 1000
local emission_us = period_us / rate

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local next_free = tonumber(redis.call('GET', KEYS[1]))
if next_free == nil or next_free < now then
  next_free = now
end

local wait_us = next_free - now
local longest_us = queue * emission_us
if wait_us > longest_us then
  return {0, 0, math.max(1, math.ceil((wait_us - longest_us) / 1000))}
end
local after = next_free + emission_us
redis.call('SET', KEYS[1], string.format('%d', after), 'PX',
           math.max(1, math.ceil((after - now) / 1000)))
return {1, math.floor((longest_us - wait_us) / emission_us), math.ceil(wait_us / 1000)}
