// lockbench adapter (../PROTOCOL.md) for the npm etcd3 client's Lock: a lease, then one
// transaction "create <namespace>/<key> with this lease if it does not exist". The library keeps
// the lease alive by itself and emits `lost` on it when a keep-alive says it expired or none
// succeeded for 2 x TTL: that event -> `lost`.
//
// - Lease: etcd leases are whole seconds, so a lease of lease_ms is ceil(lease_ms / 1000) s
//   (at least 1): never shorter than asked. The server raises a TTL below its minimum (1.5 x the
//   election timeout rounded up: 2 s with etcd's default flags) to that minimum. So init, given
//   options.lease_ms, grants a probe lease of that TTL, reads the TTL the server applies (a
//   keep-alive's answer), revokes it and answers it as lease_ms: a crashed holder's lock lives
//   that long, not the lease lockbench asked for. An acquire may ask for another lease than init
//   (the contract's do): its acquire_ok carries the lease its own lease got, when that differs
//   from the one asked. etcd3 drops the grant's TTL (Lease keeps only the ID), so the first grant
//   of each TTL asks etcd (LeaseTimeToLive's grantedTTL, beside the fence's read) and the answer
//   is kept per TTL: the server applies the same to every lease of that TTL.
// - Waiting: the library makes one attempt; we retry it every retry_delay_ms until wait_ms.
// - Fence: the lock key's create revision, read after the grant (omitted if that read fails or
//   the key is no longer ours).
// - Refusal: EtcdLockFailedError says the key existed. etcd3 retries a timed-out transaction
//   (its default policy), so that key may be our own earlier write: the library then revokes
//   our lease, ignoring failure. `held` only if the key we read afterwards is not on one of our
//   leases; otherwise `in-doubt`.
// - Renew: one keep-alive of the lease (keepaliveOnce); it renews the lease's original TTL.
// - Release: revoking the lease. The library's revoke drops etcd's "lease not found", and a
//   holder resumed from a pause past its TTL would answer release_ok for a lock that lapsed and
//   may be another's: we send the same RPC (lease.client.leaseRevoke, after lease.close(), as
//   lease.revoke() does) and keep its answer. `not-held` when the library has already reported
//   the lease lost (we then send nothing); in doubt when etcd says the lease is gone (the
//   library may have retried a revoke that had taken effect).
'use strict';
const { Etcd3, EtcdLockFailedError, EtcdLeaseInvalidError, GRPCDeadlineExceededError } = require('etcd3');
const { ProtocolError, abandonLateGrant, log, send, serve, sleep } = require('./protocol');

const grants = new Map(); // token (lease id) -> {lock, lost}
const appliedMsByTtl = new Map(); // TTL asked (s) -> the lease etcd applies to it (ms)
let locks; // the etcd3 namespace `<namespace>/`
let options;

function classify(error) {
  return error instanceof GRPCDeadlineExceededError ? 'timeout' : 'etcd-error';
}

function ttlSecondsOf(leaseMs) {
  return Math.max(1, Math.ceil(leaseMs / 1000));
}

async function appliedLeaseMs(leaseMs) {
  const ttlSeconds = ttlSecondsOf(leaseMs);
  const probe = locks.lease(ttlSeconds, { autoKeepAlive: false });
  try {
    await probe.grant();
    const { TTL } = await probe.keepaliveOnce();
    appliedMsByTtl.set(ttlSeconds, Number(TTL) * 1000);
    return Number(TTL) * 1000;
  } finally {
    await probe.revoke().catch((error) => log(`revoking the probe lease: ${error.message}`));
  }
}

// The lease etcd gave a granted lock's lease of ttlSeconds.
async function grantedLeaseMs(lock, leaseId, ttlSeconds) {
  const known = appliedMsByTtl.get(ttlSeconds);
  if (known) return known;
  try {
    const { grantedTTL } = await lock.lease.client.leaseTimeToLive({ ID: leaseId }, lock.callOptions);
    appliedMsByTtl.set(ttlSeconds, Number(grantedTTL) * 1000);
    return Number(grantedTTL) * 1000;
  } catch (error) {
    // Whole seconds at least: never shorter than asked, though etcd may have raised it further.
    log(`lease ${leaseId}: could not read the TTL etcd granted: ${error.message}`);
    return ttlSeconds * 1000;
  }
}

async function fenceOf(key, leaseId) {
  try {
    const holder = (await locks.get(key).exec()).kvs[0];
    if (holder?.lease === leaseId) return { fence: Number(holder.create_revision) };
    log(`acquire ${key}: the key is no longer on lease ${leaseId}: no fence`);
  } catch (error) {
    log(`acquire ${key}: could not read the create revision: ${error.message}`);
  }
  return {};
}

serve({
  classify,
  async init(request) {
    options = { retry_delay_ms: 5, command_timeout_ms: 1000, connect_timeout_ms: 1000, ...request.options };
    const servers = request.servers?.etcd ?? [];
    if (request.clients?.length && servers.length === 0) throw new ProtocolError('unsupported', 'needs etcd');
    if (servers.length) {
      const client = new Etcd3({
        hosts: servers.map((server) => `http://${server.host}:${server.port}`),
        dialTimeout: options.connect_timeout_ms,
        // A deadline on unary calls only: on a stream it would end the lease keep-alive.
        defaultCallOptions: (context) =>
          context.isStream ? {} : { deadline: new Date(Date.now() + options.command_timeout_ms) },
      });
      locks = client.namespace(`${request.namespace}/`);
    }
    const applied = servers.length && options.lease_ms > 0 ? { lease_ms: await appliedLeaseMs(options.lease_ms) } : {};
    return {
      ...applied,
      library: 'etcd3',
      version: require('./node_modules/etcd3/package.json').version,
      services: ['etcd'],
      capabilities: { fencing: true, auto_renewal: true, renew: true, lost_signal: true, concurrent: true },
    };
  },

  async acquire({ client, key, mode, lease_ms, wait_ms }) {
    if (mode !== 'exclusive') throw new ProtocolError('unsupported', 'etcd3 Lock has no shared mode');
    const ttlSeconds = ttlSecondsOf(lease_ms);
    const deadline = Date.now() + wait_ms;
    const ourLeases = [];
    for (;;) {
      const lock = locks.lock(key).ttl(ttlSeconds);
      const acquired = lock.acquire(); // creates lock.lease before it returns
      let lostBeforeGrant;
      let token;
      lock.lease.on('lost', (error) => {
        if (!token) return void (lostBeforeGrant = error);
        const grant = grants.get(token);
        if (!grant || grant.lost) return;
        grant.lost = true;
        send({ type: 'lost', client, key, token, text: error.message });
      });
      try {
        await acquired;
      } catch (error) {
        if (!(error instanceof EtcdLockFailedError)) throw error;
        ourLeases.push(await lock.leaseId());
        if (Date.now() + options.retry_delay_ms < deadline) {
          await sleep(options.retry_delay_ms);
          continue;
        }
        const holder = (await locks.get(key).exec()).kvs[0];
        if (holder && ourLeases.includes(holder.lease)) {
          throw new ProtocolError('in-doubt', `lock ${key} refused, but the key is on our lease ${holder.lease}`);
        }
        throw new ProtocolError('held', `lock ${key} is held by another client`);
      }
      token = await lock.leaseId();
      grants.set(token, { lock, lost: false });
      const [fence, appliedMs] = await Promise.all([fenceOf(key, token), grantedLeaseMs(lock, token, ttlSeconds)]);
      if (lostBeforeGrant) {
        grants.get(token).lost = true;
        // After our answer: a `lost` must follow the grant it is about.
        setImmediate(() => send({ type: 'lost', client, key, token, text: lostBeforeGrant.message }));
      }
      const applied = appliedMs !== lease_ms ? { lease_ms: appliedMs } : {};
      return { token, ...fence, ...applied, reentry: false };
    }
  },

  async release({ token }) {
    const grant = grants.get(token);
    if (!grant) throw new ProtocolError('not-held', 'no grant with this token');
    if (grant.lost) {
      grants.delete(token);
      throw new ProtocolError('not-held', 'the library reported this lease lost');
    }
    const { lease } = grant.lock;
    lease.close();
    try {
      await lease.client.leaseRevoke({ ID: token }, grant.lock.callOptions);
    } catch (error) {
      // Any other failure keeps the grant: a retried release is tried again.
      if (!(error instanceof EtcdLeaseInvalidError)) throw error;
      grants.delete(token);
      // "Lease not found" is no proof the lock was not held: etcd3 retries a revoke whose reply
      // was lost (a leader killed after committing it), and the retry finds the lease our first
      // attempt revoked. The keep-alive runs until now and the library has not reported the lease
      // lost, so the release may well have happened: in doubt, never `not-held` (seen in
      // etcd-leader-killed: a definite refusal of a release that had freed the lock).
      throw new ProtocolError('release-in-doubt', 'etcd: lease not found - revoked by a retried attempt, or lapsed');
    }
    grants.delete(token);
    return {};
  },

  async renew({ token }) {
    const grant = grants.get(token);
    if (!grant || grant.lost) throw new ProtocolError('not-held', 'no live grant with this token');
    try {
      await grant.lock.lease.keepaliveOnce();
    } catch (error) {
      if (error instanceof EtcdLeaseInvalidError) throw new ProtocolError('not-held', 'the lease has expired');
      throw error;
    }
    return {};
  },

  abandon: abandonLateGrant(grants, (grant) => grant.lock.release()),
});
