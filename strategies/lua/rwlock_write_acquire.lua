-- Redisson RReadWriteLock's write acquire: only on a free lock, or re-entry by the writer. There
-- is no upgrade: a reader asking for the write lock waits until its own read holds end (T12 b).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner's writer field (owner:write).
-- Returns {1, count} when granted (count > 1 is a re-entry), {0, pttl} while it is held.
local lease = tonumber(ARGV[1])
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
    redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
    redis.call('pexpire', KEYS[1], lease)
    return {1, 1}
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    -- As Redisson does it: a re-entry ADDS its lease to what is left (T12 d; asked about in #2144).
    redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + lease)
    return {1, count}
end
return {0, redis.call('pttl', KEYS[1])}
