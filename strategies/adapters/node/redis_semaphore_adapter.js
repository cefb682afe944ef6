// lockbench adapter (../PROTOCOL.md) for redis-semaphore's Mutex on one Redis master, as its users
// run it: refresh on (every 0.8 x lease, the library's default) and onLockLost -> `lost`.
//
// What the library tells its user, and what we answer:
//   tryAcquire() false      every SET NX it sent was refused (or none was sent) -> `held`, unless
//                           the connection closed meanwhile: ioredis resends a SET NX in flight
//                           after the reconnect, and one whose first run set our key is refused
//                           by it -> `resent-after-reconnect` (in doubt); the key is then read,
//                           and if it holds our identifier (the token), that grant is reported
//                           and released (`late_grant`, PROTOCOL.md)
//   tryAcquire() throws     a SET NX may have been applied -> `timeout` / `redis-error` (in doubt)
//   onLockLost(err)         its refresh found the key gone or another's -> `lost`
//   release()               never says whether the key was still ours (its delete-if-equal
//                           script's answer is dropped): `not-held` when the library already knows
//                           it lost the lock (it then sends nothing); `release_ok` only within the
//                           lease of the last SET or refresh the library sent and saw succeed (the
//                           key cannot have expired, so it was ours); after that,
//                           `release-unconfirmed` (in doubt): a process resumed from a pause
//                           releases a key that may have expired and be another client's by now,
//                           and `release_ok` would tell the checker it held the lock until then
//   renew                   no public call (refresh is automatic) -> `unsupported`
// The library names its key `mutex:<key>`; ioredis's keyPrefix puts it under the namespace:
// `<namespace>:mutex:<key>`.
'use strict';
const { randomUUID } = require('node:crypto');
const Redis = require('ioredis');
const { Mutex } = require('redis-semaphore');
const { ProtocolError, abandonLateGrant, connectionCloses, log, send, serve } = require('./protocol');

const grants = new Map(); // token -> {mutex, client, key, lost, lease_ms, confirmedAt}
let redis;
let options;
const closes = connectionCloses();
const DELETE_IF_OURS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

function classify(error) {
  return /timed out/i.test(String(error?.message)) ? 'timeout' : 'redis-error';
}

// The user's --redis as init names it (PROTOCOL.md): a unix socket or host and port, with an
// ACL user and password where given.
function ioredisAddress(server) {
  return {
    ...(server.unix_socket ? { path: server.unix_socket } : { host: server.host, port: server.port }),
    ...(server.user ? { username: server.user } : {}),
    ...(server.password ? { password: server.password } : {}),
  };
}

// An acquire answered in doubt after ioredis resent its SET: the resend's refusal came after the
// first run's effect, so the key tells whether that run granted us the lock (it still holds our
// token, within its lease). Nobody else knows that grant: lockbench hears of it and of our release.
async function releaseResentGrant(request, token) {
  const lockKey = `mutex:${request.key}`; // under the namespace: ioredis's keyPrefix
  const late = { type: 'late_grant', client: request.client, key: request.key, id: request.id, token };
  try {
    if ((await redis.get(lockKey)) !== token) return;
  } catch (error) {
    log(`reading ${lockKey} after a resent acquire:`, error?.message ?? error);
    return;
  }
  log(`acquire of ${request.key} was granted by its first SET: releasing it`);
  send({ ...late, phase: 'granted' });
  try {
    const deleted = await redis.eval(DELETE_IF_OURS, 1, lockKey, token);
    send({ ...late, phase: 'released', ok: deleted === 1, ...(deleted === 1 ? {} : { text: 'the key had expired' }) });
  } catch (error) {
    send({ ...late, phase: 'released', ok: false, text: String(error?.message ?? error) });
  }
}

serve({
  classify,
  async init(request) {
    options = { retry_delay_ms: 5, command_timeout_ms: 1000, connect_timeout_ms: 1000, ...request.options };
    const servers = request.servers?.redis ?? [];
    const master = servers.find((server) => server.role === 'master');
    const sentinels = servers.filter((server) => server.role === 'sentinel');
    if (request.clients?.length && !master && !sentinels.length) {
      throw new ProtocolError('unsupported', 'needs one Redis master');
    }
    if (master || sentinels.length) {
      const common = {
        keyPrefix: `${request.namespace}:`,
        connectTimeout: options.connect_timeout_ms,
        commandTimeout: options.command_timeout_ms,
      };
      // On a Sentinel deployment ioredis finds the master through the sentinels, as its users
      // configure it: it asks them again on every reconnect (the demoted master's CLIENT KILL
      // forces one) and, with failoverDetector, as soon as they announce +switch-master.
      redis = new Redis(sentinels.length
        ? {
          ...common,
          sentinels: sentinels.map(({ host, port }) => ({ host, port })),
          name: sentinels[0].master_name,
          sentinelCommandTimeout: options.command_timeout_ms,
          failoverDetector: true,
        }
        : { ...common, ...ioredisAddress(master) });
      redis.on('error', (error) => log('redis:', error.message));
      closes.watch(redis);
    }
    return {
      library: 'redis-semaphore',
      version: require('./node_modules/redis-semaphore/package.json').version,
      services: ['redis'],
      capabilities: { auto_renewal: true, lost_signal: true, concurrent: true },
    };
  },

  async acquire({ id, client, key, mode, lease_ms, wait_ms }) {
    if (mode !== 'exclusive') throw new ProtocolError('unsupported', 'Mutex has no shared mode');
    const token = randomUUID();
    // When the SET NX that won was sent (monotonic: a pause or a skewed wall clock leaves it
    // true): the key's lease started later, when Redis ran it. tryAcquire() retries for up to
    // wait_ms, so the time before the call would leave a fresh grant's lease half spent.
    let setSent = performance.now();
    const timedRedis = new Proxy(redis, {
      get(target, property) {
        if (property === 'set') {
          return (...args) => {
            setSent = performance.now();
            return target.set(...args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const mutex = new Mutex(timedRedis, key, {
      identifier: token, // the key's value: a late grant is found by it
      lockTimeout: lease_ms,
      // The library's loop runs while Date.now() < start + acquireTimeout: a budget of 0 would
      // make no attempt at all, so "one attempt" is an attempts limit.
      acquireTimeout: wait_ms > 0 ? wait_ms : options.command_timeout_ms,
      acquireAttemptsLimit: wait_ms > 0 ? Infinity : 1,
      retryInterval: options.retry_delay_ms,
      onLockLost(error) {
        const grant = grants.get(token);
        if (!grant) return;
        grant.lost = true;
        send({ type: 'lost', client, key, token, text: error.message });
      },
    });
    const mark = closes.mark();
    if (!(await mutex.tryAcquire())) {
      if (closes.closedSince(mark)) {
        releaseResentGrant({ id, client, key }, token); // after this answer: it reads the server
        throw new ProtocolError('resent-after-reconnect', `lock ${key} refused after the connection ` +
          'closed and ioredis resent the SET in flight, whose first run may have set our key');
      }
      throw new ProtocolError('held', `lock ${key} is held by another client`);
    }
    const grant = { mutex, client, key, lost: false, lease_ms, confirmedAt: setSent };
    if (typeof mutex._refresh === 'function') {
      const refresh = mutex._refresh.bind(mutex);
      mutex._refresh = async () => {
        const refreshSent = performance.now();
        const refreshed = await refresh();
        if (refreshed) grant.confirmedAt = Math.max(grant.confirmedAt, refreshSent);
        return refreshed;
      };
    }
    grants.set(token, grant);
    return { token, reentry: false };
  },

  async release({ token }) {
    const grant = grants.get(token);
    if (!grant) throw new ProtocolError('not-held', 'no grant with this token');
    if (grant.lost || !grant.mutex.isAcquired) {
      grants.delete(token);
      throw new ProtocolError('not-held', 'the library reported this lock lost');
    }
    await grant.mutex.release(); // a failure keeps the grant: a retried release is tried again
    grants.delete(token);
    // Read after the answer: the delete ran before it, so within the lease it found our key.
    if (performance.now() - grant.confirmedAt >= grant.lease_ms) {
      throw new ProtocolError('release-unconfirmed',
        `released after the lease (${grant.lease_ms} ms) since the library last confirmed the key: ` +
        'redis-semaphore does not say whether it was still ours');
    }
    return {};
  },

  async renew() {
    throw new ProtocolError('unsupported', 'redis-semaphore refreshes by itself and has no renew call');
  },

  abandon: abandonLateGrant(grants, (grant) => grant.mutex.release()),
});
