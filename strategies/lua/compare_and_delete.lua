-- Release only if the caller still owns the lock (redis.io's single-instance pattern).
-- KEYS[1] lock key; ARGV[1] the owner's token. Returns 1 if deleted, 0 if not the owner.
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
