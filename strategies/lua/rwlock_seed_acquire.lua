-- Seed 001's read-write lock acquire, kept as written: a writer key and a shared reader counter,
-- NO expiry on either (a crashed holder blocks the lock forever) and no owner recorded.
-- KEYS[1] writer key; KEYS[2] reader counter; ARGV[1] 'READ' or 'WRITE'.
local mode = ARGV[1]
if mode == 'READ' then
    if redis.call('exists', KEYS[1]) == 1 then
        return 'WRITE_LOCKED'
    end
    redis.call('incr', KEYS[2])
    return 'SUCCESS'
elseif mode == 'WRITE' then
    if redis.call('exists', KEYS[2]) == 1 then
        return 'READ_LOCKED'
    elseif redis.call('exists', KEYS[1]) == 1 then
        return 'WRITE_LOCKED'
    end
    redis.call('setnx', KEYS[1], 'LOCKED')
    return 'SUCCESS'
end
return 'BAD_MODE'
