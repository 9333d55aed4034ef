-- The first version of examples/limiter.lua, kept to show what rlcheck catches. Do not use it.
--
-- A fixed counter: INCR, admit while the count is at most LIMIT. It counts exactly (the script
-- is atomic, so no request slips through), but it never gives the key an expiry. Once a client
-- has used up its LIMIT, the count never goes down and the client is denied forever.
--
--   rlcheck redis --script examples/limiter_v1.lua      # exits 1: key-ttl fails
--
-- rlcheck's `key-ttl` check fails on every run: after the run the key exists with no TTL.
-- Under a load that lasts longer than a window, `utilisation` fails too (denied while the
-- window had room). The fix is the sliding log in examples/limiter.lua (or a PEXPIRE here).
--
-- KEYS[1]  the limiter key: a counter
-- ARGV[1]  limit
-- ARGV[2]  window in milliseconds (only used for the retry hint: the bug)
-- ARGV[3]  unused
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])

local count = redis.call('INCR', KEYS[1])
-- BUG: no PEXPIRE KEYS[1] window_ms when count == 1, so the counter lives forever.
if count <= limit then
  return {1, limit - count, 0}
end
return {0, 0, window_ms}
