-- sliding.lua  KEYS[1]=制限キー  ARGV[1]=上限  ARGV[2]=窓(ms)  ARGV[3]=リクエスト ID
local limit  = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t   = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, oldest[2] + window - now}
