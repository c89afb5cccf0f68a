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

test('fn gets its entry and may mark an error without throwing', () => {
  const client = new Client();
  const result = client.run('p', (entry) => { entry.error(); return 'soft failure'; });
  assert.equal(result, 'soft failure');
  assert.equal(client.stats('p').exception, 1);
});

test('downgraded: fallback(reason) instead of fn', () => {
  const client = closedClient();
  let called = false;
  const result = client.run('closed', () => { called = true; }, (reason) => `fallback ${reason}`);
  assert.equal(result, 'fallback VISIT');
  assert.equal(called, false);
  const s = client.stats('closed');
  assert.equal(s.downgrade, 1);
  assert.equal(s.concurrent, 0);
});

test('downgraded without fallback: a DowngradedError is thrown', () => {
  const client = closedClient();
  assert.throws(() => client.run('closed', () => 1), (e) => {
    assert.ok(e instanceof DowngradedError);
    assert.equal(e.code, 'SDS_DOWNGRADED');
    assert.ok(require('../lib/native.js').native.errorCodes().includes(e.code), 'a code of the core');
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
