-- The watchdog's renewal: extend the lease only while the owner's field is still there, so a
-- renewal never revives a lock that expired or went to someone else.
-- KEYS[1] lock hash; ARGV[1] owner id; ARGV[2] lease ms. Returns 1 if extended, 0 if not held.
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 1
end
return 0
