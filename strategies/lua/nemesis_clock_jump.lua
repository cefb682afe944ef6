-- The nemesis's emulation of a forward jump of the server's wall clock (T3), not a lock script:
-- Redis expires keys by gettimeofday(), so a jump of J ms makes every key with a TTL expire J ms
-- sooner. Applied to all keys at once inside one script, as the jump would be.
-- ARGV[1] the jump in ms. Returns how many keys with a TTL were shortened or expired.
local jump = tonumber(ARGV[1])
local cursor = '0'
local touched = 0
repeat
    local page = redis.call('scan', cursor, 'count', 1000)
    cursor = page[1]
    for _, key in ipairs(page[2]) do
        local ttl = redis.call('pttl', key)
        if ttl > 0 then
            if ttl <= jump then
                redis.call('del', key)
            else
                redis.call('pexpire', key, ttl - jump)
            end
            touched = touched + 1
        end
    end
until cursor == '0'
return touched
