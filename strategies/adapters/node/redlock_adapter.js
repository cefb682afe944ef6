// lockbench adapter (../PROTOCOL.md) for node-redlock v5: Redlock over every Redis master given.
//
//   node redlock_adapter.js                 acquire / extend / release; renew = extend
//   node redlock_adapter.js --auto-extend   every acquire goes through redlock.using(), which
//                                           extends the lock by itself automaticExtensionThreshold
//                                           (500 ms) before it expires and aborts its signal when
//                                           an extension fails: the signal -> `lost`
// Capabilities are fixed for a process (the probe must tell them before any acquire), so
// auto-extension is a command-line choice, two strategies with one file: plain (renew, no
// auto_renewal, no lost signal) and --auto-extend (auto_renewal, lost_signal, no renew: using()
// keeps its lock object to itself).
//
// Redlock answers per server: a vote for, or against with the error (ResourceLockedError: the
// script ran and found the key another's; anything else: the outcome on that server is unknown).
// It throws ExecutionError when no attempt reached a quorum, and on an acquire it then deletes
// what it set, ignoring failures. So:
//   acquire refused     `refused` only if no server ever voted for (nothing was set) and every
//                       vote against was a definite refusal; otherwise `quorum-unknown` (in
//                       doubt). Never `held`: every server refusing does not show a holder -
//                       contenders that split the votes keep their keys through their retries
//                       (redlock's script refuses a key that exists, their own too) while nobody
//                       has a quorum, and `held` would make the checker look for one.
//   release/extend      `not-held` if every server answered definitely (fewer than a quorum
//                       had our value); otherwise `quorum-unknown` (in doubt)
// A connection that closed while the request was in flight makes every refusal in doubt
// (`resent-after-reconnect`): ioredis resends the commands it had sent on it, and a release
// script that had deleted our key answers the resend "not ours", an acquire script that had set
// it "exists" - definite answers for operations that happened.
'use strict';
const { randomUUID } = require('node:crypto');
const Redis = require('ioredis');
const { default: Redlock, ExecutionError, ResourceLockedError } = require('redlock');
const { ProtocolError, abandonLateGrant, connectionCloses, log, send, serve } = require('./protocol');

const autoExtend = process.argv.includes('--auto-extend');
const grants = new Map(); // token -> {lock} (plain) or {finish, done} (auto-extend)
let redlock;
let namespace;
let retry; // {retryDelay, retryJitter}
const closes = connectionCloses(); // of every master's connection

function classify(error) {
  return /timed out/i.test(String(error?.message)) ? 'timeout' : 'redis-error';
}

// Every vote of every attempt, once all are in (a server that does not answer votes against
// after ioredis's command timeout).
async function votes(error) {
  const attempts = await Promise.all(error.attempts);
  return {
    anyFor: attempts.some((stats) => stats.votesFor.size > 0),
    allDefinite: attempts.every((stats) =>
      [...stats.votesAgainst.values()].every((vote) => vote instanceof ResourceLockedError) &&
      stats.votesFor.size + stats.votesAgainst.size === stats.membershipSize),
  };
}

// `mark`: closes.mark() from before the request.
async function refusal(error, definiteCode, nothingMayBeSet, mark) {
  if (!(error instanceof ExecutionError)) return error;
  if (closes.closedSince(mark)) {
    return new ProtocolError('resent-after-reconnect', `${error.message} (a connection closed ` +
      'meanwhile and ioredis resent its commands: what their first run did is unknown)');
  }
  const { anyFor, allDefinite } = await votes(error);
  if (allDefinite && !(nothingMayBeSet && anyFor)) return new ProtocolError(definiteCode, error.message);
  return new ProtocolError('quorum-unknown', `${error.message} (some servers' outcome unknown)`);
}

function acquireSettings(wait_ms) {
  // One attempt is retryCount 0; redlock sleeps retryDelay +- retryJitter between attempts.
  return { ...retry, retryCount: wait_ms > 0 ? Math.ceil(wait_ms / retry.retryDelay) : 0 };
}

// using() holds the lock while its routine runs: the routine hands the grant out and waits for
// our release; using() then stops extending and releases.
function acquireWithAutoExtension(resource, { client, key, lease_ms, wait_ms }, token) {
  const settings = acquireSettings(wait_ms);
  // using() refuses a lease not 100 ms above the threshold; keep the library's 500 ms where it fits.
  if (lease_ms < 600) settings.automaticExtensionThreshold = Math.floor(lease_ms / 3);
  return new Promise((granted, refused) => {
    let finish;
    const finished = new Promise((resolve) => (finish = resolve));
    const done = redlock.using([resource], lease_ms, settings, async (signal) => {
      signal.addEventListener('abort', () => {
        if (grants.has(token)) send({ type: 'lost', client, key, token, text: String(signal.error?.message) });
      });
      granted({ finish, done });
      await finished;
    });
    done.catch(refused); // after a grant this is a no-op; release() awaits `done` itself
  });
}

serve({
  classify,
  async init(request) {
    const options = { retry_delay_ms: 5, command_timeout_ms: 1000, connect_timeout_ms: 1000, ...request.options };
    namespace = request.namespace;
    retry = { retryDelay: Math.max(1, options.retry_delay_ms), retryJitter: Math.floor(options.retry_delay_ms / 2) };
    const masters = (request.servers?.redis ?? []).filter((server) => server.role === 'master');
    if (request.clients?.length && masters.length === 0) throw new ProtocolError('unsupported', 'needs Redis masters');
    if (masters.length) {
      const clients = masters.map((master) => {
        const redis = new Redis({
          // The user's --redis as init names it (PROTOCOL.md): a unix socket or host and port,
          // with an ACL user and password where given.
          ...(master.unix_socket ? { path: master.unix_socket } : { host: master.host, port: master.port }),
          ...(master.user ? { username: master.user } : {}),
          ...(master.password ? { password: master.password } : {}),
          connectTimeout: options.connect_timeout_ms,
          commandTimeout: options.command_timeout_ms,
        });
        redis.on('error', (error) => log(`redis ${master.unix_socket ?? `${master.host}:${master.port}`}:`, error.message));
        closes.watch(redis);
        return redis;
      });
      // The instance settings are what release, extend and using()'s own extensions use.
      redlock = new Redlock(clients, { ...retry, retryCount: 3 });
      redlock.on('error', (error) => {
        if (!(error instanceof ResourceLockedError)) log('redlock:', error.message);
      });
    }
    return {
      library: 'redlock',
      // redlock's package.json is not among its exports, and its version field reads "v5.0.0-beta.2".
      version: require('./node_modules/redlock/package.json').version.replace(/^v/, ''),
      services: ['redis-masters'],
      capabilities: { renew: !autoExtend, auto_renewal: autoExtend, lost_signal: autoExtend, concurrent: true },
    };
  },

  async acquire(request) {
    const { key, mode, lease_ms, wait_ms } = request;
    if (mode !== 'exclusive') throw new ProtocolError('unsupported', 'Redlock has no shared mode');
    const resource = `${namespace}:${key}`;
    const mark = closes.mark();
    try {
      if (autoExtend) {
        const token = randomUUID();
        grants.set(token, await acquireWithAutoExtension(resource, request, token));
        return { token, reentry: false };
      }
      const lock = await redlock.acquire([resource], lease_ms, acquireSettings(wait_ms));
      grants.set(lock.value, { lock });
      return { token: lock.value, reentry: false };
    } catch (error) {
      throw await refusal(error, 'refused', true, mark);
    }
  },

  async release({ token }) {
    const grant = grants.get(token);
    if (!grant) throw new ProtocolError('not-held', 'no grant with this token');
    const mark = closes.mark();
    try {
      if (autoExtend) {
        grant.finish();
        await grant.done;
      } else {
        await redlock.release(grant.lock);
      }
    } catch (error) {
      const answer = await refusal(error, 'not-held', false, mark);
      if (answer.code === 'not-held') grants.delete(token);
      throw answer;
    }
    grants.delete(token);
    return {};
  },

  async renew({ token, lease_ms }) {
    if (autoExtend) throw new ProtocolError('unsupported', 'using() extends by itself and keeps its lock');
    const grant = grants.get(token);
    if (!grant) throw new ProtocolError('not-held', 'no grant with this token');
    const mark = closes.mark();
    try {
      grant.lock = await redlock.extend(grant.lock, lease_ms);
    } catch (error) {
      // extend() refuses a lock its own clock says expired before sending anything (no attempts).
      throw await refusal(error, 'not-held', false, mark);
    }
    return {};
  },

  // An auto-extended grant ends when its using() routine is told to finish.
  abandon: abandonLateGrant(grants, (grant) => {
    if (grant.finish) {
      grant.finish();
      return grant.done;
    }
    return redlock.release(grant.lock);
  }),
});
