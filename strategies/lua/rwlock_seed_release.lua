-- Seed 001's release, kept as written: not bound to the owner, so a reader that never acquired
-- (an unlock in a `finally` after a failed acquire) decrements someone else's read hold.
-- KEYS[1] writer key; KEYS[2] reader counter; ARGV[1] 'READ' or 'WRITE'.
local mode = ARGV[1]
if mode == 'READ' then
    if redis.call('decr', KEYS[2]) <= 0 then
        redis.call('del', KEYS[2])
    end
    return 'SUCCESS'
elseif mode == 'WRITE' then
    redis.call('del', KEYS[1])
    return 'SUCCESS'
end
return 'BAD_MODE'
