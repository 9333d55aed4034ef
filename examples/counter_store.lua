-- A fixed-window counter in the shape of the Redis stores of express-rate-limit and
-- rate-limiter-flexible: INCR, PEXPIRE when the count is new (the window opens at the first
-- hit), reply {hits, ttl_ms}. The caller admits while hits <= limit and tells a denied client
-- to come back in ttl_ms. rlcheck reads that shape with --reply counter:
--
--   rlcheck redis --script examples/counter_store.lua --reply counter \
--     --contract fixed --anchor first-hit -l 10 -w 1s --rate 40/s --duration 3s -r 1
--
-- KEYS[1]  the counter
-- ARGV[1]  limit (unused here: the caller compares)
-- ARGV[2]  window in milliseconds
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return {hits, redis.call('PTTL', KEYS[1])}
