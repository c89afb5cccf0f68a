'use strict';
// One clock: every call that defaults its time reads the addon's clock
// (sds-clock), never Date.now(). With Date.now() stuck in 1970, a call that
// read it would count or look in the wrong window.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, SlidingWindow } = require('..');

function withDateNowAtZero(fn) {
  const saved = Date.now;
  Date.now = () => 0;
  try {
    return fn();
  } finally {
    Date.now = saved;
  }
}

test('enter, exit, run, stats and windows default to the addon clock', () => {
  const client = new Client();
  const window = new SlidingWindow({ bucketMs: 3600000, buckets: 1, ring: 2 });
  const got = withDateNowAtZero(() => {
    const entry = client.enter('p');
    entry.exit();
    client.run('p', () => 1);
    client.point('p').enter().exit();
    window.increment();
    window.add(2);
    return {
      startMs: entry.startMs,
      stats: client.stats('p').visit,
      pointStats: client.point('p').stats().visit,
      sum: window.sum(),
      bucket: window.bucket(),
    };
  });
  const now = Date.now();
  assert.ok(Math.abs(got.startMs - now) < 5000, `${got.startMs} vs ${now}`);
  assert.deepEqual({ ...got, startMs: 0 }, { startMs: 0, stats: 3, pointStats: 3, sum: 3, bucket: 3 });
  // The same counts are found at an explicit time of now.
  assert.equal(client.stats('p', now).visit, 3);
  assert.equal(window.sum(now), 3);
});
