-- Redisson RReadWriteLock's write unlock, with the unlock latch (see reentrant_hash_release.lua).
-- When the writer's count reaches 0 the lock goes, or - if the writer still holds read holds - it
-- becomes a read lock (downgrade). Either way every waiter is woken: readers may all enter now
-- (Redisson publishes nothing on a downgrade; waiting readers then sleep out the TTL).
-- KEYS[1] lock hash; KEYS[2] channel; KEYS[3] latch of this request;
-- ARGV[1] owner's writer field; ARGV[2] lease ms; ARGV[3] latch TTL ms.
-- Returns 1 this write hold is over, 0 the writer still holds a write re-entry, -1 not held.
local done = redis.call('get', KEYS[3])
if done then
    return tonumber(done)
end
local function answer(result)
    redis.call('set', KEYS[3], result, 'px', ARGV[3])
    return result
end
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return answer(-1)
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return answer(0)
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) == 1 then
    redis.call('del', KEYS[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call('publish', KEYS[2], '1')
return answer(1)
