-- Generic cell rate algorithm (as go-redis/redis_rate and redis-cell): ARGV[2] requests per
-- ARGV[3] ms with bursts of up to ARGV[1]. The only state is the theoretical arrival time
-- (TAT) in microseconds of Redis TIME.
-- KEYS[1]  limiter key (a string holding the TAT)
-- ARGV[1]  burst
-- ARGV[2]  requests per period
-- ARGV[3]  period in milliseconds
-- ARGV[4]  optional: now in unix milliseconds from the caller's clock (rlcheck --time-source
--          client); absent or not a number, the script reads Redis TIME (microseconds), one
--          clock for every caller
-- ARGV[5]  optional: the request's cost, in requests' worth of emission (rlcheck --cost;
--          default 1)
-- Returns {allowed (1|0), remaining, retry_ms until the request would be allowed}. A cost
-- above the burst can never pass: denied with no retry hint (a bare 0).
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local period_us = tonumber(ARGV[3]) * 1000
local emission_us = period_us / rate
local tolerance_us = emission_us * burst
local cost = tonumber(ARGV[5]) or 1
if cost > burst then
  return 0
end

local now
local given_ms = tonumber(ARGV[4])
if given_ms then
  now = given_ms * 1000
else
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
  tat = now
end

local new_tat = tat + emission_us * cost
local allow_at = new_tat - tolerance_us
local diff = now - allow_at
if diff < 0 then
  return {0, 0, math.ceil(-diff / 1000)}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
           math.max(1, math.ceil((new_tat - now) / 1000)))
return {1, math.floor(diff / emission_us), 0}
