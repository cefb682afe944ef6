// The shared helper's late-grant path (../PROTOCOL.md, `late_grant`): two acquires of one key
// whose library answers after the helper answered `timeout` are each reported, granted then
// released (by abandonLateGrant), naming the request it answered. Run: node protocol_test.js
// (exit 0: passed).
'use strict';
const { spawn } = require('node:child_process');
const readline = require('node:readline');

// The adapter under test: its library grants each acquire 300 ms after the helper's budget
// (wait_ms 0 + command_timeout_ms 0 + 500 ms) ran out. abandonLateGrant releases the grant its
// token names, out of the map first: a release that finds it still there, or is handed another
// grant, fails (released ok: false).
const adapter = `
const { abandonLateGrant, serve, sleep } = require(${JSON.stringify(`${__dirname}/protocol.js`)});
const grants = new Map();
serve({
  init: async () => ({ library: 'late', version: '0', services: [], capabilities: {} }),
  acquire: async (request) => {
    await sleep(800);
    const token = 't' + request.id;
    grants.set(token, { token });
    return { token };
  },
  abandon: abandonLateGrant(grants, async (grant) => {
    if (grants.has(grant.token)) throw new Error('released while still in the map');
  }),
});
`;

function fail(why) {
  process.stderr.write(`protocol_test: ${why}\n`);
  process.exit(1);
}

const child = spawn(process.execPath, ['-e', adapter], { stdio: ['pipe', 'pipe', 'inherit'] });
const deadline = setTimeout(() => {
  child.kill('SIGKILL');
  fail('no two released late grants within 10 s');
}, 10000);
const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
const messages = [];
readline.createInterface({ input: child.stdout }).on('line', (line) => {
  messages.push(JSON.parse(line));
  if (messages.filter((m) => m.phase === 'released').length < 2) return;
  clearTimeout(deadline);
  child.stdin.end();
  const late = (id, phase) => messages.find((m) => m.type === 'late_grant' && m.id === id && m.phase === phase);
  for (const id of [2, 3]) {
    const timeout = messages.find((m) => m.in_reply_to === id);
    if (timeout?.type !== 'error' || timeout.code !== 'timeout') fail(`acquire ${id} answered ${JSON.stringify(timeout)}`);
    const granted = late(id, 'granted');
    const released = late(id, 'released');
    if (granted?.client !== 'c0-x' || granted.key !== 'k' || granted.token !== `t${id}`) {
      fail(`acquire ${id}'s late grant: ${JSON.stringify(granted)}`);
    }
    if (released?.ok !== true || released.token !== `t${id}`) fail(`acquire ${id}'s release: ${JSON.stringify(released)}`);
    if (messages.indexOf(granted) < messages.indexOf(timeout) || messages.indexOf(released) < messages.indexOf(granted)) {
      fail(`acquire ${id}'s messages out of order: ${JSON.stringify(messages)}`);
    }
  }
  process.stdout.write('protocol_test: passed\n');
});
child.on('exit', (code) => {
  if (code !== 0) fail(`the adapter exited with ${code}`);
});

send({ id: 1, type: 'init', clients: ['c0-x'], options: { command_timeout_ms: 0 } });
for (const id of [2, 3]) send({ id, type: 'acquire', client: 'c0-x', key: 'k', mode: 'exclusive', lease_ms: 1000, wait_ms: 0 });
