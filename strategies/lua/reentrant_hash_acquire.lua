-- Redisson RLock's acquire: the lock is a hash whose one field is its owner and whose value counts
-- the owner's re-entries. Free or already ours: count up and (re)start the lease.
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id.
-- Returns {1, count} when granted (count > 1 is a re-entry), or {0, pttl} while another owner
-- holds it: a waiter sleeps at most that long if no unlock message wakes it first.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, count}
end
return {0, redis.call('pttl', KEYS[1])}
