-- Redisson RLock's unlock with its unlock latch. The answer is kept under a key named after the
-- request id, so a release sent again after a lost reply gets the first answer back instead of
-- decrementing a second time and freeing an outer re-entry under its holder (T7, Redisson #4871).
-- KEYS[1] lock hash; KEYS[2] unlock channel; KEYS[3] latch of this request;
-- ARGV[1] owner id; ARGV[2] lease ms; ARGV[3] latch TTL ms.
-- Returns 1 released (waiters are told), 0 still held (the count went down), -1 not held.
local done = redis.call('get', KEYS[3])
if done then
    return tonumber(done)
end
local result
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    result = -1
elseif redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    result = 0
else
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], '0')
    result = 1
end
redis.call('set', KEYS[3], result, 'px', ARGV[3])
return result
