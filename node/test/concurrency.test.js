'use strict';
// 100 async calls at once against concurrentThreshold = 10: never more than
// 10 run, the others fall back with CONCURRENT, every permit comes back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('..');

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

test('100 concurrent async runs never hold more than 10 permits', async () => {
  const client = new Client();
  client.setStrategy('db', { concurrentThreshold: 10 });
  const gate = deferred();
  let running = 0;
  let peak = 0;
  const calls = Array.from({ length: 100 }, () => client.run('db', async () => {
    running += 1;
    peak = Math.max(peak, running);
    assert.ok(client.stats('db').concurrent <= 10);
    await gate.promise;
    running -= 1;
    return 'ran';
  }, () => 'fallback'));
  assert.equal(client.stats('db').concurrent, 10);
  gate.resolve();
  const results = await Promise.all(calls);
  assert.equal(peak, 10);
  assert.equal(results.filter((r) => r === 'ran').length, 10);
  assert.equal(results.filter((r) => r === 'fallback').length, 90);
  assert.equal(client.stats('db').downgrade, 90);
  assert.equal(client.stats('db').concurrent, 0);
});

test('staggered async runs reuse permits and stay within 10', async () => {
  const client = new Client();
  client.setStrategy('db', { concurrentThreshold: 10 });
  let running = 0;
  let peak = 0;
  let ran = 0;
  const calls = [];
  for (let i = 0; i < 100; i++) {
    calls.push(client.run('db', async () => {
      running += 1;
      peak = Math.max(peak, running);
      // Different lengths, so calls finish and free permits in between.
      for (let t = 0; t < (i % 7) + 1; t++) await new Promise((r) => setImmediate(r));
      running -= 1;
      ran += 1;
    }, () => {}));
    if (i % 5 === 4) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(calls);
  assert.ok(peak <= 10, `peak ${peak}`);
  assert.ok(ran > 10, `only ${ran} ran: permits were not reused`);
  assert.equal(client.stats('db').concurrent, 0);
});
