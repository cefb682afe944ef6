-- Extend the lease only if the caller still owns the lock: a renewal must never revive a lock
-- that expired and went to someone else (redis-semaphore #175).
-- KEYS[1] lock key; ARGV[1] the owner's token; ARGV[2] new lease in ms. Returns 1 or 0.
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
