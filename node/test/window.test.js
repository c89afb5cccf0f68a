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

test('a Sentinel-like window: 500 ms x 2 over a ring of 4', () => {
  const w = new SlidingWindow({ bucketMs: 500, buckets: 2, ring: 4 });
  w.add(5, 1000);
  w.add(2, 1600);
  assert.equal(w.sum(1700), 7);
  assert.equal(w.sum(2100), 2);
  assert.equal(w.lastWholeCycle(2100), 7);
});

test('last whole cycle of 10 buckets', () => {
  const w = new SlidingWindow({ bucketMs: 1000, buckets: 10 });
  w.add(4, 100000);
  w.add(6, 109999);
  assert.equal(w.lastWholeCycle(109999), 0);
  assert.equal(w.lastWholeCycle(110000), 10);
  assert.equal(w.lastWholeCycle(120000), 0);
});

test('the real clock is the default time', () => {
  const w = new SlidingWindow({ bucketMs: 60000, buckets: 1, ring: 2 });
  assert.ok(w.increment().total >= 1);
});
