// An adapter over ioredis when the connection breaks after the server ran a command: its reply is
// lost and the connection reset (what `drop-replies` does when it ends), ioredis reconnects and
// resends the command, whose second run answers as if the first had not happened. The adapter
// must answer such an operation in doubt, never with a definite refusal:
//   node ioredis_resend_test.js redlock           a release whose script deleted the key: the
//                                                 resend finds it gone ("not ours", not `not-held`)
//   node ioredis_resend_test.js redis-semaphore   an acquire whose SET NX set the key: the resend
//                                                 finds it taken ("exists", not `held`); the
//                                                 adapter then reports that grant and releases it
// Starts its own redis-server and a proxy in front of it; exit 0: passed.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const readline = require('node:readline');
const Redis = require('ioredis');

function fail(why) {
  process.stderr.write(`ioredis_resend_test: ${why}\n`);
  process.exit(1);
}

const children = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));
setTimeout(() => fail('not finished within 30 s'), 30000).unref();

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no'], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(server);
  server.on('exit', (status) => fail(`redis-server exited (status ${status})`));
  const direct = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 20 });
  direct.on('error', () => {}); // refused until the server listens: ioredis retries
  await direct.ping();
  return direct;
}

// Forwards every connection to the server; once armed, the next reply is dropped and both ends
// of its connection reset.
function startProxy(serverPort) {
  const proxy = { armed: false, dropped: 0 };
  const listener = net.createServer((client) => {
    const server = net.connect(serverPort, '127.0.0.1');
    client.on('data', (data) => server.write(data));
    server.on('data', (data) => {
      if (proxy.armed) {
        proxy.armed = false;
        proxy.dropped += 1;
        client.resetAndDestroy();
        server.destroy();
        return;
      }
      client.write(data);
    });
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  return new Promise((resolve) => {
    listener.listen(0, '127.0.0.1', () => resolve({ proxy, port: listener.address().port }));
  });
}

function startAdapter(file) {
  const child = spawn(process.execPath, [`${__dirname}/${file}`],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const waiting = new Map(); // id -> resolve
  const unsolicited = [];
  let onUnsolicited = () => {};
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.in_reply_to === undefined) {
      unsolicited.push(message);
      onUnsolicited();
      return;
    }
    waiting.get(message.in_reply_to)?.(message);
    waiting.delete(message.in_reply_to);
  });
  let nextId = 1;
  const call = (request) => new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ ...request, id, client: 'c0' })}\n`);
  });
  // Resolves with the first `count` unsolicited messages once they came.
  call.unsolicited = (count) => new Promise((resolve) => {
    onUnsolicited = () => {
      if (unsolicited.length >= count) resolve(unsolicited.slice(0, count));
    };
    onUnsolicited();
  });
  return call;
}

async function granted(call, key) {
  const answer = await call({ type: 'acquire', key, mode: 'exclusive', lease_ms: 10000, wait_ms: 0 });
  if (answer.type !== 'acquire_ok') fail(`acquire of ${key} answered ${JSON.stringify(answer)}`);
  return answer.token;
}

const DEFINITE = ['not-held', 'held', 'refused', 'unsupported'];

function expectInDoubt(answer, what) {
  if (answer.type !== 'error' || DEFINITE.includes(answer.code)) {
    fail(`${what} answered ${JSON.stringify(answer)}, expected an error in doubt`);
  }
  process.stdout.write(`${what} answered ${answer.code}: ${answer.text}\n`);
}

const CASES = {
  async redlock(call, direct, proxy) {
    const token = await granted(call, 'k');
    if ((await direct.get('resent:k')) !== token) fail('the grant left no key on the server');
    proxy.armed = true;
    const answer = await call({ type: 'release', key: 'k', token });
    if ((await direct.get('resent:k')) !== null) fail('the release did not delete the key');
    return [answer, 'a release that deleted the key'];
  },
  async 'redis-semaphore'(call, direct, proxy) {
    proxy.armed = true;
    const answer = await call({ type: 'acquire', key: 'k', mode: 'exclusive', lease_ms: 10000, wait_ms: 0 });
    // The grant its first SET made is reported and released (PROTOCOL.md, `late_grant`).
    const [granted, released] = await call.unsolicited(2);
    const expected = { type: 'late_grant', client: 'c0', key: 'k', id: answer.in_reply_to };
    for (const [message, phase] of [[granted, 'granted'], [released, 'released']]) {
      const fields = { ...expected, phase };
      if (Object.entries(fields).some(([name, value]) => message[name] !== value) ||
          typeof message.token !== 'string') {
        fail(`expected ${JSON.stringify(fields)} with a token, got ${JSON.stringify(message)}`);
      }
    }
    if (released.ok !== true || released.token !== granted.token) fail(`the release failed: ${JSON.stringify(released)}`);
    if ((await direct.get('resent:mutex:k')) !== null) fail('the late grant was not released');
    return [answer, 'an acquire that set the key'];
  },
};
const ADAPTERS = { redlock: 'redlock_adapter.js', 'redis-semaphore': 'redis_semaphore_adapter.js' };

async function main(which) {
  if (!CASES[which]) fail(`usage: node ioredis_resend_test.js ${Object.keys(CASES).join('|')}`);
  const direct = await startRedis();
  const { proxy, port } = await startProxy(direct.options.port);
  const call = startAdapter(ADAPTERS[which]);
  const init = await call({
    type: 'init', clients: ['c0'], namespace: 'resent',
    servers: { redis: [{ host: '127.0.0.1', port, role: 'master' }] },
    options: { connect_timeout_ms: 1000, command_timeout_ms: 1000, retry_delay_ms: 5 },
  });
  if (init.type !== 'init_ok') fail(`init answered ${JSON.stringify(init)}`);
  // A first grant and release: the connection is ready (its INFO answered) and the scripts
  // loaded, so that the proxy drops the reply of the operation under test, run by its hash.
  const warmUp = await granted(call, 'warm-up');
  const warmRelease = await call({ type: 'release', key: 'warm-up', token: warmUp });
  if (warmRelease.type !== 'release_ok') fail(`release of warm-up answered ${JSON.stringify(warmRelease)}`);
  const [answer, what] = await CASES[which](call, direct, proxy);
  if (proxy.dropped !== 1) fail(`the proxy dropped ${proxy.dropped} replies, expected one`);
  expectInDoubt(answer, what);
  process.exit(0);
}

main(process.argv[2]).catch((error) => fail(error?.stack ?? error));
