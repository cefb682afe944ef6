-- Redisson RReadWriteLock's read unlock, with the unlock latch (see reentrant_hash_release.lua).
-- Drops this owner's newest read hold and its timeout key; in read mode the hash then lives as
-- long as the longest remaining reader's timeout key, and goes (waking waiters) when none is left.
-- KEYS[1] lock hash; KEYS[2] channel; KEYS[3] latch of this request;
-- KEYS[4] this owner's timeout-key prefix; KEYS[5] the prefix of every reader's timeout keys;
-- ARGV[1] owner id; ARGV[2] latch TTL ms.
-- Returns 1 this owner's read holds are over, 0 it still holds a read re-entry, -1 not held.
local done = redis.call('get', KEYS[3])
if done then
    return tonumber(done)
end
local function answer(result)
    redis.call('set', KEYS[3], result, 'px', ARGV[2])
    return result
end
local mode = redis.call('hget', KEYS[1], 'mode')
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not mode or not count then
    return answer(-1)
end
count = redis.call('hincrby', KEYS[1], ARGV[1], -1)
redis.call('del', KEYS[4] .. ':' .. (count + 1))
local result = 0
if count <= 0 then
    redis.call('hdel', KEYS[1], ARGV[1])
    result = 1
end
if mode == 'write' then
    -- A downgrading writer dropped a read hold: its write lease still governs the hash.
    return answer(result)
end
local longest = -2
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    if field ~= 'mode' and string.sub(field, -6) ~= ':write' then
        local n = tonumber(redis.call('hget', KEYS[1], field)) or 0
        for i = n, 1, -1 do
            local ttl = redis.call('pttl', KEYS[5] .. ':' .. field .. ':rwlock_timeout:' .. i)
            if ttl > longest then
                longest = ttl
            end
        end
    end
end
if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
else
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], '0')
end
return answer(result)
