-- The read-write lock's renewal (watchdog or renew()): extends only what this owner holds - its
-- write hold, and each of its read holds whose timeout key is still alive (a read hold that
-- expired is over and is not revived; another instance's readers are never touched, Redisson PR
-- #7098). The hash is extended to at least the lease and never shortened, so a short renewal
-- cannot cut a longer reader's hold (#2144).
-- KEYS[1] lock hash; KEYS[2] this owner's timeout-key prefix;
-- ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] owner's writer field.
-- Returns 1 if something was extended, 0 if this owner holds nothing here.
local lease = tonumber(ARGV[1])
local held = redis.call('hexists', KEYS[1], ARGV[3]) == 1
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2])) or 0
for i = 1, count do
    if redis.call('pexpire', KEYS[2] .. ':' .. i, lease) == 1 then
        held = true
    end
end
if not held then
    return 0
end
if redis.call('pttl', KEYS[1]) < lease then
    redis.call('pexpire', KEYS[1], lease)
end
return 1
