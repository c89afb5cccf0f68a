'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { SlidingWindow } = require('..');

test('SDS defaults: 1 s buckets, a 10 s window', () => {
  const w = new SlidingWindow();
  assert.deepEqual([w.bucketMs, w.buckets, w.ring], [1000, 10, 30]);
  assert.deepEqual(w.increment(100000), { bucket: 1, total: 1 });
  assert.deepEqual(w.increment(100999), { bucket: 2, total: 2 });
  assert.deepEqual(w.add(3, 109000), { bucket: 3, total: 5 });
  assert.equal(w.sum(110000), 3); // bucket 100 left the window
  assert.equal(w.bucket(100500), 2);
});

/** A window of `options` after `adds`, each `[n, nowMs]`. */
function windowAfter(options, ...adds) {
  const w = new SlidingWindow(options);
  for (const [n, nowMs] of adds) w.add(n, nowMs);
  return w;
}

test('a Sentinel-like window: 500 ms x 2 over a ring of 4', () => {
  const w = windowAfter({ bucketMs: 500, buckets: 2, ring: 4 }, [5, 1000], [2, 1600]);
  assert.equal(w.sum(1700), 7);
  assert.equal(w.sum(2100), 2);
  assert.equal(w.lastWholeCycle(2100), 7);
});

test('last whole cycle of 10 buckets', () => {
  const w = windowAfter({ bucketMs: 1000, buckets: 10 }, [4, 100000], [6, 109999]);
  assert.equal(w.lastWholeCycle(109999), 0);
  assert.equal(w.lastWholeCycle(110000), 10);
  assert.equal(w.lastWholeCycle(120000), 0);
});

test('the real clock is the default time', () => {
  const w = new SlidingWindow({ bucketMs: 60000, buckets: 1, ring: 2 });
  assert.ok(w.increment().total >= 1);
});

test('addAt: a late event in its own bucket while the ring holds it, else at the present', () => {
  const w = windowAfter(undefined, [2, 5000]); // 1 s x 10, ring 30
  assert.equal(w.addAt(3000, 4, 12000), 4);
  assert.equal(w.bucket(3500), 4);
  assert.equal(w.sum(12000), 6);
  assert.equal(w.addAt(3000, 1, 40000), 1); // the ring no longer holds 3 s
  assert.equal(w.bucket(40000), 1);
  assert.equal(w.addAt(41000, 2, 40000), 3); // a start after the present
  assert.equal(w.addAt(39000, 2n ** 64n - 1n, 40000), 2 ** 32 - 1);
});

test('set, fetchMax and clearNextCycle', () => {
  const w = new SlidingWindow();
  assert.equal(w.set(7, 50000), undefined);
  assert.equal(w.fetchMax(9, 50000), 9);
  assert.equal(w.fetchMax(2, 50000), 9);
  w.set(2n ** 64n - 1n, 51000);
  assert.equal(w.bucket(51000), 2 ** 32 - 1);
  w.set(5, 61000); // in the cycle after 50 s's
  assert.equal(w.clearNextCycle(50000), undefined);
  assert.equal(w.bucket(61000), 0);
  assert.equal(w.bucket(50000), 9);
});

test('n and value: a number up to 2^53 or a bigint below 2^64', () => {
  const w = new SlidingWindow();
  assert.deepEqual(w.add(2n ** 32n, 1000), { bucket: 2 ** 32 - 1, total: 2 ** 32 - 1 });
  assert.deepEqual(w.add(0n, 2000), { bucket: 0, total: 2 ** 32 - 1 });
  assert.equal(w.fetchMax(2n ** 64n - 1n, 3000), 2 ** 32 - 1);
  const message = /n must be a non-negative integer below 2\^64 \(a number or a BigInt\)/;
  for (const n of [-1n, 2n ** 64n, -1, 1.5, '1', null, true]) {
    for (const call of [() => w.add(n, 4000), () => w.addAt(4000, n, 4000)]) {
      assert.throws(call, (e) => e.code === 'SDS_INVALID_ARGUMENT', String(n));
    }
    assert.throws(() => w.set(n, 4000), (e) => e.code === 'SDS_INVALID_ARGUMENT');
    assert.throws(() => w.fetchMax(n, 4000), (e) => e.code === 'SDS_INVALID_ARGUMENT');
  }
  assert.throws(() => w.add(-1n, 4000), { message });
  for (const at of [-1, undefined, 1.5, 4000n]) {
    assert.throws(() => w.addAt(at, 1, 4000), { code: 'SDS_INVALID_ARGUMENT', message: /atMs: time must be/ });
  }
  assert.equal(w.bucket(4000), 0); // refused calls changed nothing
});
