// node-redlock's release when the connection breaks after the server ran it: the release script's
// reply is lost and the connection reset (what `drop-replies` does when it ends), ioredis
// reconnects and resends the script, which then finds the key gone and answers "not ours". The
// release happened (the key is gone), so the adapter must answer it in doubt, never `not-held`.
// Starts its own redis-server and a proxy in front of it. Run: node redlock_release_resent_test.js
// (exit 0: passed).
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const readline = require('node:readline');
const Redis = require('ioredis');

function fail(why) {
  process.stderr.write(`redlock_release_resent_test: ${why}\n`);
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

function startAdapter() {
  const child = spawn(process.execPath, [`${__dirname}/redlock_adapter.js`],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const waiting = new Map(); // id -> resolve
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    waiting.get(message.in_reply_to)?.(message);
    waiting.delete(message.in_reply_to);
  });
  let nextId = 1;
  return (request) => new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ ...request, id, client: 'c0' })}\n`);
  });
}

async function granted(call, key) {
  const answer = await call({ type: 'acquire', key, mode: 'exclusive', lease_ms: 10000, wait_ms: 0 });
  if (answer.type !== 'acquire_ok') fail(`acquire of ${key} answered ${JSON.stringify(answer)}`);
  return answer.token;
}

async function main() {
  const direct = await startRedis();
  const { proxy, port } = await startProxy(direct.options.port);
  const call = startAdapter();
  const init = await call({
    type: 'init', clients: ['c0'], namespace: 'resent',
    servers: { redis: [{ host: '127.0.0.1', port, role: 'master' }] },
    options: { connect_timeout_ms: 1000, command_timeout_ms: 1000, retry_delay_ms: 5 },
  });
  if (init.type !== 'init_ok') fail(`init answered ${JSON.stringify(init)}`);
  // A first release loads the release script, so that the next one runs it by its hash at once.
  const warmUp = await granted(call, 'warm-up');
  const warmRelease = await call({ type: 'release', key: 'warm-up', token: warmUp });
  if (warmRelease.type !== 'release_ok') fail(`release of warm-up answered ${JSON.stringify(warmRelease)}`);

  const token = await granted(call, 'k');
  if ((await direct.get('resent:k')) !== token) fail('the grant left no key on the server');
  proxy.armed = true;
  const answer = await call({ type: 'release', key: 'k', token });
  if (proxy.dropped !== 1) fail(`the proxy dropped ${proxy.dropped} replies, expected the release's`);
  if ((await direct.get('resent:k')) !== null) fail('the release did not delete the key');
  if (answer.type !== 'error' || ['not-held', 'held', 'refused', 'unsupported'].includes(answer.code)) {
    fail(`a release that deleted the key answered ${JSON.stringify(answer)}, expected an error in doubt`);
  }
  process.stdout.write(`release resent after a reset answered ${answer.code}: ${answer.text}\n`);
  process.exit(0);
}

main().catch((error) => fail(error?.stack ?? error));
