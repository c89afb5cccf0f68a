'use strict';
// run() with sync, async, throwing and rejecting functions, with and without
// a fallback. run() reads the real clock; stats read it too, so the counts
// below are in the current window.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, DowngradedError } = require('..');

function closedClient() {
  const client = new Client();
  client.setStrategy('closed', { visitThreshold: 0 });
  return client;
}

test('a sync function: its value, one visit, permit returned', () => {
  const client = new Client();
  assert.equal(client.run('p', () => 42), 42);
  const s = client.stats('p');
  assert.equal(s.visit, 1);
  assert.equal(s.concurrent, 0);
  assert.equal(s.exception, 0);
});

test('a throwing function: the error is rethrown and counted', () => {
  const client = new Client();
  const boom = new Error('boom');
  assert.throws(() => client.run('p', () => { throw boom; }), (e) => e === boom);
  const s = client.stats('p');
  assert.equal(s.exception, 1);
  assert.equal(s.concurrent, 0);
});

test('an async function holds its permit until it resolves', async () => {
  const client = new Client();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const pending = client.run('p', async () => { await gate; return 'done'; });
  assert.ok(pending instanceof Promise);
  assert.equal(client.stats('p').concurrent, 1);
  release();
  assert.equal(await pending, 'done');
  assert.equal(client.stats('p').concurrent, 0);
  assert.equal(client.stats('p').exception, 0);
});

test('a rejecting function: the rejection propagates and is counted', async () => {
  const client = new Client();
  const boom = new Error('async boom');
  await assert.rejects(client.run('p', async () => { throw boom; }), (e) => e === boom);
  const s = client.stats('p');
  assert.equal(s.exception, 1);
  assert.equal(s.concurrent, 0);
});

test('a thenable that is not a Promise is awaited too', async () => {
  const client = new Client();
  const thenable = { then(ok) { setImmediate(() => ok(7)); } };
  assert.equal(await client.run('p', () => thenable), 7);
  assert.equal(client.stats('p').concurrent, 0);
});

test('fn is called with no arguments', () => {
  const client = new Client();
  assert.equal(client.run('p', (...args) => args.length), 0);
  assert.equal(client.point('p').run((...args) => args.length), 0);
});

test('downgraded: fallback() instead of fn, with the arguments fn would have had (none)', () => {
  const client = closedClient();
  let called = false;
  const result = client.run('closed', () => { called = true; }, (...args) => `fallback with ${args.length} arguments`);
  assert.equal(result, 'fallback with 0 arguments');
  assert.equal(client.point('closed').run(() => 1, (...args) => args.length), 0);
  assert.equal(called, false);
  const s = client.stats('closed');
  assert.equal(s.downgrade, 2);
  assert.equal(s.concurrent, 0);
});

test('downgraded without fallback: a DowngradedError is thrown', () => {
  const client = closedClient();
  assert.throws(() => client.run('closed', () => 1), (e) => {
    assert.ok(e instanceof DowngradedError);
    assert.equal(e.code, 'SDS_DOWNGRADED');
    assert.ok(require('../lib/native.js').native.errorCodes().all.includes(e.code), 'a code of the core');
    assert.equal(e.reason, 'VISIT');
    assert.equal(e.point, 'closed');
    return true;
  });
  assert.equal(client.stats('closed').exception, 0);
});

test('downgraded async function without fallback: rejects', async () => {
  const client = closedClient();
  const result = client.run('closed', async () => 1);
  assert.ok(result instanceof Promise);
  await assert.rejects(result, DowngradedError);
});

test('an async fallback is returned as is', async () => {
  const client = closedClient();
  assert.equal(await client.run('closed', async () => 1, async () => 'later'), 'later');
});

test('a DowngradedError escaping fn is not counted as an exception', () => {
  const client = closedClient();
  assert.throws(() => client.run('p', () => client.run('closed', () => 1)), DowngradedError);
  assert.equal(client.stats('p').exception, 0);
  assert.equal(client.stats('p').concurrent, 0);
});

test('Point#run behaves as Client#run', async () => {
  const client = new Client();
  const point = client.point('p');
  assert.equal(point.run(() => 1), 1);
  await assert.rejects(point.run(async () => { throw new Error('x'); }));
  assert.equal(point.stats().visit, 2);
  assert.equal(point.stats().exception, 1);
});

// A result whose `then` cannot be read, or whose adoption throws: the call
// failed. The permit comes back, the exception is counted once, the error
// reaches the caller (a throw for a sync result, a rejection for a promise).
function oneSlotClient() {
  const client = new Client();
  client.setStrategy('s', { concurrentThreshold: 1 });
  return client;
}

function assertSettledAsFailure(client) {
  const s = client.stats('s');
  assert.equal(s.concurrent, 0, 'permit returned');
  assert.equal(s.exception, 1, 'counted once');
  assert.equal(client.run('s', () => 'next'), 'next', 'the next call gets the permit');
}

function revokedProxy() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

test('sync: a revoked Proxy as the result', () => {
  const client = oneSlotClient();
  assert.throws(() => client.run('s', () => revokedProxy()), TypeError);
  assertSettledAsFailure(client);
});

test('sync: a result whose then getter throws', () => {
  const client = oneSlotClient();
  const boom = new Error('then getter');
  const hostile = { get then() { throw boom; } };
  assert.throws(() => client.run('s', () => hostile), (e) => e === boom);
  assertSettledAsFailure(client);
});

test('sync: a revoked Proxy thrown by fn', () => {
  const client = oneSlotClient();
  const proxy = revokedProxy();
  assert.throws(() => client.run('s', () => { throw proxy; }), (e) => e === proxy);
  assertSettledAsFailure(client);
});

test('async: a promise whose constructor getter throws', async () => {
  const client = oneSlotClient();
  const boom = new Error('constructor getter');
  const promise = Promise.resolve(1);
  Object.defineProperty(promise, 'constructor', { get() { throw boom; } });
  await assert.rejects(client.run('s', () => promise), (e) => e === boom);
  assertSettledAsFailure(client);
});

test('async: a then getter that works once, then throws', async () => {
  const client = oneSlotClient();
  const boom = new Error('second read');
  let reads = 0;
  const hostile = {
    get then() {
      reads += 1;
      if (reads > 1) throw boom;
      return (ok) => ok('first read');
    },
  };
  assert.equal(await client.run('s', () => hostile), 'first read');
  assert.equal(client.stats('s').concurrent, 0);
  assert.equal(client.stats('s').exception, 0);
});

test('async: resolving to a revoked Proxy or a throwing then', async () => {
  for (const make of [revokedProxy, () => ({ get then() { throw new Error('getter'); } })]) {
    const client = oneSlotClient();
    await assert.rejects(client.run('s', async () => make()));
    assertSettledAsFailure(client);
    const other = oneSlotClient();
    await assert.rejects(other.run('s', () => ({ then(ok) { ok(make()); } })));
    assertSettledAsFailure(other);
  }
});

test('async: a then that throws when called', async () => {
  const client = oneSlotClient();
  const boom = new Error('then call');
  await assert.rejects(client.run('s', () => ({ then() { throw boom; } })), (e) => e === boom);
  assertSettledAsFailure(client);
});
