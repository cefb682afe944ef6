-- Redisson RReadWriteLock's read acquire. One hash: field 'mode' (read|write), one field per
-- reader (owner -> read count) and the writer's field (owner:write -> write count). Every read
-- hold also gets its own timeout key with its own lease, so one reader's expiry never shortens
-- another's (#2144); the hash lives at least as long as its longest hold. Readers are admitted
-- whenever the mode is read (non-fair: a stream of readers starves writers, T12 a), and the
-- writer may take read holds too (downgrade).
-- KEYS[1] lock hash; KEYS[2] this owner's timeout-key prefix;
-- ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] owner's writer field.
-- Returns {1, count, reentry} when granted, {0, pttl} while a writer holds it.
local lease = tonumber(ARGV[1])
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
    redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1, 'px', lease)
    redis.call('pexpire', KEYS[1], lease)
    return {1, 1, 0}
end
local downgrade = mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1
if mode == 'read' or downgrade then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':' .. count, 1, 'px', lease)
    if redis.call('pttl', KEYS[1]) < lease then
        redis.call('pexpire', KEYS[1], lease)
    end
    local reentry = 0
    if count > 1 or downgrade then
        reentry = 1
    end
    return {1, count, reentry}
end
return {0, redis.call('pttl', KEYS[1])}
