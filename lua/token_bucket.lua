-- Token bucket: capacity ARGV[1] tokens, refilled by ARGV[2] tokens every ARGV[3] ms,
-- one token per request. State is a hash {tokens, ts} stamped with Redis TIME, so every
-- client shares one clock.
-- KEYS[1]  limiter key (a HASH)
-- ARGV[1]  capacity (the burst)
-- ARGV[2]  tokens added per refill period
-- ARGV[3]  refill period in milliseconds
-- ARGV[4]  optional: now in unix milliseconds from the caller's clock (rlcheck --time-source
--          client); absent or not a number, the script reads Redis TIME, one clock for
--          every caller
-- ARGV[5]  optional: the request's cost in tokens (rlcheck --cost; default 1)
-- Returns {allowed (1|0), remaining whole tokens, retry_ms until its tokens are there}. A cost
-- above the capacity can never pass: denied with no retry hint (a bare 0).
local capacity = tonumber(ARGV[1])
local refill_tokens = tonumber(ARGV[2])
local period_ms = tonumber(ARGV[3])
local rate = refill_tokens / period_ms -- tokens per millisecond
local cost = tonumber(ARGV[5]) or 1
if cost > capacity then
  return 0
end
local now
local given_ms = tonumber(ARGV[4])
if given_ms then
  now = given_ms
else
  local t = redis.call('TIME')
  now = t[1] * 1000 + t[2] / 1000
end

local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate)

local allowed = 0
local retry_ms = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry_ms = math.ceil((cost - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
-- The key lives until the bucket would be full again; after that it carries no information.
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((capacity - tokens) / rate)))
return {allowed, math.floor(tokens), retry_ms}
