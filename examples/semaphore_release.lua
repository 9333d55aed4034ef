-- A Redis semaphore's release (semaphore_acquire.lua): gives the holder's place back.
-- KEYS[1]  the semaphore
-- ARGV[3]  the holder's member, as the acquire was given it
return redis.call('ZREM', KEYS[1], ARGV[3])
