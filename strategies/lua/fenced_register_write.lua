-- The protected resource's fenced register (engine/resource.cpp), not a lock: it accepts a write
-- only if its fencing number is at least the highest it has accepted, so a paused holder's late
-- write is refused once a newer holder has written (Kleppmann's storage-side check, T1/T13).
-- KEYS[1] register hash {value, fence}; ARGV[1] fencing number; ARGV[2] value.
-- Returns 1 if written, 0 if refused as stale.
local highest = tonumber(redis.call('hget', KEYS[1], 'fence'))
if highest ~= nil and tonumber(ARGV[1]) < highest then
    return 0
end
redis.call('hset', KEYS[1], 'value', ARGV[2], 'fence', ARGV[1])
return 1
