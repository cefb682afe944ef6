// The line protocol of ../PROTOCOL.md, shared by the node adapters: one JSON object a line on
// stdin and stdout, logs on stderr. An adapter supplies one async handler per request type.
'use strict';
const readline = require('node:readline');

// An error whose `code` the adapter chose (PROTOCOL.md, "Errors"); any other error an adapter
// throws is answered with the code its classify() gives, in doubt unless it says otherwise.
class ProtocolError extends Error {
  constructor(code, text) {
    super(text);
    this.code = code;
  }
}

function log(...parts) {
  process.stderr.write(`${new Date().toISOString()} ${parts.join(' ')}\n`);
}

// Writes to a pipe are synchronous on Linux: a line is out before the next statement runs, also
// before process.exit().
function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

// handlers: {init, acquire, release, renew} (async, request => extra answer fields),
// classify(error) => code for errors the handler did not classify, abandon(request, result)
// for an answer that came too late to be sent (an acquire that succeeded after we answered
// `timeout` must not leave the lock held by nobody who knows its token): it releases that grant
// and returns the release's promise (abandonLateGrant builds one). lockbench hears of both ends
// (PROTOCOL.md, `late_grant`): without them its history has only the in-doubt acquire to
// explain another client's `held`.
function serve(handlers) {
  let commandTimeoutMs = 1000;
  let pending = 0;
  let stdinClosed = false;
  const exitIfIdle = () => {
    if (stdinClosed && pending === 0) process.exit(0);
  };

  // A library promise that never settles (a rejected refresh nobody awaits, a stream that is
  // never answered) must not crash the adapter nor leave lockbench without an answer.
  process.on('unhandledRejection', (error) => log('unhandled rejection:', error?.stack ?? error));

  async function answer(request) {
    if (request.type === 'time') return { unix_ms: Date.now() };
    if (request.type === 'init') commandTimeoutMs = request.options?.command_timeout_ms ?? commandTimeoutMs;
    const handler = handlers[request.type];
    if (!handler) throw new ProtocolError('unsupported', `request type ${request.type} is not supported`);
    return handler(request);
  }

  async function lateSuccess(request, value) {
    if (request.type !== 'acquire') return void handlers.abandon?.(request, value);
    const late = { type: 'late_grant', client: request.client, key: request.key, id: request.id };
    if (typeof value?.token === 'string') late.token = value.token;
    send({ ...late, phase: 'granted' });
    try {
      await handlers.abandon?.(request, value);
      send({ ...late, phase: 'released', ok: true });
    } catch (error) {
      log(`releasing the late grant of ${request.key}:`, error?.stack ?? error);
      send({ ...late, phase: 'released', ok: false, text: String(error?.message ?? error) });
    }
  }

  async function handle(request) {
    pending += 1;
    // Answer before lockbench's own limit (wait_ms + command timeout + 1 s) calls us late.
    const budgetMs = (request.wait_ms ?? 0) + commandTimeoutMs + 500;
    const tooLate = Symbol('too late');
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve(tooLate), budgetMs);
    });
    const work = answer(request);
    try {
      const result = await Promise.race([work, late]);
      if (result === tooLate) {
        work.then((value) => lateSuccess(request, value), () => {});
        throw new ProtocolError('timeout', `no outcome from the library within ${budgetMs} ms`);
      }
      send({ in_reply_to: request.id, type: `${request.type}_ok`, ...result });
    } catch (error) {
      const code = error instanceof ProtocolError ? error.code : (handlers.classify?.(error) ?? 'error');
      if (!(error instanceof ProtocolError)) log(`${request.type} ${request.id}:`, error?.stack ?? error);
      send({ in_reply_to: request.id, type: 'error', code, text: String(error?.message ?? error) });
    } finally {
      clearTimeout(timer);
      pending -= 1;
      exitIfIdle();
    }
  }

  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      log('ignoring a line that is not JSON:', line);
      return;
    }
    handle(request);
  });
  // Release nothing: lockbench has released what it holds, or is testing what happens when we
  // do not. Answers still in flight are sent first (each is bounded by its budget above).
  lines.on('close', () => {
    stdinClosed = true;
    exitIfIdle();
  });
}

// The abandon() of an adapter that keeps its grants in `grants` (token => grant): the late
// acquire's grant, taken out of the map and released by `release(grant)` (its promise).
function abandonLateGrant(grants, release) {
  return (request, result) => {
    if (request.type !== 'acquire') return;
    log(`releasing ${request.key}: granted after its answer was sent`);
    const grant = grants.get(result.token);
    grants.delete(result.token);
    if (!grant) throw new Error('no grant under its token: nothing released');
    return release(grant);
  };
}

// ioredis resends the commands still awaiting their replies when a connection closes and
// reconnects (autoResendUnfulfilledCommands, its default): a script that ran before the close
// runs again, and its second answer ("not ours", "exists") tells the first run's effect, not a
// refusal. A library's definite answer is definite only if none of its connections closed while
// the request was in flight. watch(redis) counts an ioredis client's closes; mark() before the
// request, closedSince(mark) after it.
function connectionCloses() {
  let closes = 0;
  return {
    watch(redis) {
      redis.on('close', () => {
        closes += 1;
      });
    },
    mark: () => closes,
    closedSince: (mark) => closes !== mark,
  };
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { ProtocolError, abandonLateGrant, connectionCloses, log, send, serve, sleep };
