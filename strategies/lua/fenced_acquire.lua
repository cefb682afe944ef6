-- SET NX PX and the fencing number in one atomic step, so no two grants can share a number and
-- a number is never issued without its grant (Kleppmann's fencing tokens; Redisson RFencedLock).
-- KEYS[1] lock key; KEYS[2] fence counter (no TTL: it must outlive every lock);
-- ARGV[1] token; ARGV[2] lease ms. Returns the fencing number (>= 1), or 0 if the lock is held.
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return redis.call('incr', KEYS[2])
end
return 0
