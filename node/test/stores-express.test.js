'use strict';
// ExpressRateLimitStore method by method, against express-rate-limit's own
// MemoryStore given the same calls at the same (mocked) times.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { MemoryStore } = require('express-rate-limit');
const { ExpressRateLimitStore } = require('..');
const { random } = require('../testing/random.js');

const T0 = 1_700_000_000_000;

/** An answer as plain data: MemoryStore hands out its live record, which later calls change. */
function snapshot(info) {
  return info === undefined ? undefined : { totalHits: info.totalHits, resetTime: info.resetTime.getTime() };
}

/** Both stores, initialised for `windowMs` (both read the mocked Date.now). */
function pair(windowMs, options = {}) {
  const theirs = new MemoryStore();
  const ours = new ExpressRateLimitStore(options);
  theirs.init({ windowMs });
  ours.init({ windowMs });
  return { theirs, ours };
}

test('a random sequence of every method gets MemoryStore\'s answers', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const windowMs = 1000;
  const { theirs, ours } = pair(windowMs);
  t.after(() => { theirs.shutdown(); ours.shutdown(); });
  const next = random(25);
  const keys = ['alice', 'bob', 'carol', ''];
  const seen = { increment: 0, get: 0, decrement: 0, resetKey: 0, resetAll: 0 };
  for (let step = 0; step < 3000; step++) {
    const key = keys[Math.floor(next() * keys.length)];
    const roll = next();
    if (roll < 0.5) {
      seen.increment++;
      assert.deepEqual(snapshot(await ours.increment(key)), snapshot(await theirs.increment(key)), `step ${step}`);
    } else if (roll < 0.7) {
      seen.get++;
      assert.deepEqual(snapshot(await ours.get(key)), snapshot(await theirs.get(key)), `step ${step}`);
    } else if (roll < 0.85) {
      // MemoryStore starts a window of 0 hits when it decrements a key
      // without one; ours starts none (see the test below): only keys with
      // a live window are compared here.
      if ((await theirs.get(key)) === undefined) continue;
      seen.decrement++;
      await ours.decrement(key);
      await theirs.decrement(key);
    } else if (roll < 0.9) {
      seen.resetKey++;
      await ours.resetKey(key);
      await theirs.resetKey(key);
    } else if (roll < 0.905) {
      seen.resetAll++;
      await ours.resetAll();
      await theirs.resetAll();
    } else {
      t.mock.timers.tick(Math.floor(next() * 400));
    }
  }
  for (const [method, calls] of Object.entries(seen)) assert.ok(calls > 5, `${method} called ${calls} times`);
});

test('increment: 1 on a first hit, then one more per hit; resetTime is windowMs after the first hit', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const { ours } = pair(60_000);
  t.after(() => ours.shutdown());
  assert.deepEqual(snapshot(ours.increment('k')), { totalHits: 1, resetTime: T0 + 60_000 });
  t.mock.timers.tick(1500);
  assert.deepEqual(snapshot(ours.increment('k')), { totalHits: 2, resetTime: T0 + 60_000 });
  // The window ends at resetTime: the hit there starts the next one.
  t.mock.timers.tick(60_000 - 1500);
  assert.deepEqual(snapshot(ours.increment('k')), { totalHits: 1, resetTime: T0 + 120_000 });
});

test('get: undefined for an unknown key and once the window ended', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const { ours } = pair(1000);
  t.after(() => ours.shutdown());
  assert.equal(ours.get('k'), undefined);
  ours.increment('k');
  ours.increment('k');
  assert.deepEqual(snapshot(ours.get('k')), { totalHits: 2, resetTime: T0 + 1000 });
  t.mock.timers.tick(999);
  assert.equal(ours.get('k').totalHits, 2);
  t.mock.timers.tick(1);
  assert.equal(ours.get('k'), undefined);
});

test('decrement: one hit off, never below 0; a key without a window gets none (MemoryStore starts one)', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const { theirs, ours } = pair(1000);
  t.after(() => { theirs.shutdown(); ours.shutdown(); });
  ours.increment('k');
  ours.decrement('k');
  ours.decrement('k');
  assert.deepEqual(snapshot(ours.get('k')), { totalHits: 0, resetTime: T0 + 1000 });
  assert.equal(ours.increment('k').totalHits, 1);
  // The one difference from MemoryStore, documented in the README.
  ours.decrement('new');
  await theirs.decrement('new');
  assert.equal(ours.get('new'), undefined);
  assert.deepEqual(snapshot(await theirs.get('new')), { totalHits: 0, resetTime: T0 + 1000 });
});

test('resetKey forgets one key, resetAll every key', () => {
  const store = new ExpressRateLimitStore();
  store.init({ windowMs: 60_000 });
  for (const key of ['a', 'b', 'c']) store.increment(key);
  store.resetKey('a');
  assert.equal(store.get('a'), undefined);
  assert.equal(store.get('b').totalHits, 1);
  store.resetAll();
  assert.equal(store.get('b'), undefined);
  assert.equal(store.get('c'), undefined);
  assert.equal(store.increment('c').totalHits, 1);
  store.shutdown();
});

test('used before init: express-rate-limit\'s default window of 60 s', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const store = new ExpressRateLimitStore();
  assert.deepEqual(snapshot(store.increment('k')), { totalHits: 1, resetTime: T0 + 60_000 });
  // init with another window: a new table, so the old counts are gone.
  store.init({ windowMs: 1000 });
  assert.deepEqual(snapshot(store.increment('k')), { totalHits: 1, resetTime: T0 + 1000 });
  store.shutdown();
});

test('shutdown lets go of the table; a later call opens a new one', () => {
  const store = new ExpressRateLimitStore();
  store.init({ windowMs: 60_000 });
  store.increment('k');
  store.shutdown();
  assert.equal(store.get('k'), undefined);
  assert.equal(store.increment('k').totalHits, 1);
  store.shutdown();
});

test('localKeys and prefix as the Store contract says: private, shared, prefixed', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-express-store-'));
  try {
    assert.equal(new ExpressRateLimitStore().localKeys, true);
    assert.equal(new ExpressRateLimitStore().prefix, '');
    const file = path.join(dir, 'limits');
    const a = new ExpressRateLimitStore({ shared: file });
    const b = new ExpressRateLimitStore({ shared: file });
    const c = new ExpressRateLimitStore({ shared: file, prefix: 'login:' });
    assert.equal(a.localKeys, false);
    assert.equal(c.prefix, 'login:');
    for (const store of [a, b, c]) store.init({ windowMs: 60_000 });
    a.increment('k');
    a.increment('k');
    // One file, one count: another instance (another process alike) sees it.
    assert.equal(b.increment('k').totalHits, 3);
    // A prefix keeps a limiter's keys apart in the same file.
    assert.equal(c.increment('k').totalHits, 1);
    assert.equal(b.get('login:k').totalHits, 1);
    c.resetKey('k');
    assert.equal(b.get('login:k'), undefined);
    assert.equal(b.get('k').totalHits, 3);
    for (const store of [a, b, c]) store.shutdown();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('processes on one file must give the same windowMs and capacity: another is refused by name', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-express-store-'));
  try {
    const file = path.join(dir, 'limits');
    const first = new ExpressRateLimitStore({ shared: file });
    first.init({ windowMs: 60_000 });
    assert.throws(() => new ExpressRateLimitStore({ shared: file }).init({ windowMs: 1000 }), { code: 'SDS_LAYOUT_MISMATCH' });
    assert.throws(() => new ExpressRateLimitStore({ shared: file, capacity: 1024 }).init({ windowMs: 60_000 }),
      { code: 'SDS_LAYOUT_MISMATCH' });
    first.shutdown();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('counts stop at their cap and stay there until the window ends', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  // A window of 2^37 ms leaves 12 bits for a count (the core's bound).
  const store = new ExpressRateLimitStore();
  store.init({ windowMs: 2 ** 37 });
  let last;
  for (let i = 0; i < 5000; i++) last = store.increment('k');
  assert.equal(last.totalHits, 4095);
  store.shutdown();
});

test('bad options and windows are refused by name', () => {
  assert.throws(() => new ExpressRateLimitStore({ sharde: 'x' }), { code: 'SDS_INVALID_ARGUMENT', message: /sharde/ });
  assert.throws(() => new ExpressRateLimitStore({ mode: 0o600 }), /only for a shared table/);
  assert.throws(() => new ExpressRateLimitStore({ prefix: 5 }), /prefix must be a string/);
  const store = new ExpressRateLimitStore();
  assert.throws(() => store.init({ windowMs: 0 }), /at least 1/);
  // express-rate-limit only logs an error of init: the calls throw it too.
  assert.throws(() => store.increment('k'), /at least 1/);
  assert.throws(() => store.init({ windowMs: 1.5 }), /whole number/);
  // Longer than the core's table can time from a first hit.
  assert.throws(() => store.init({ windowMs: 2 ** 39 }));
});

test('in express-rate-limit on a real express server: limit 3, the 4th hit of a key is refused, another key is not', async (t) => {
  const http = require('node:http');
  const express = require('express');
  const { rateLimit } = require('express-rate-limit');
  const store = new ExpressRateLimitStore();
  const limiter = rateLimit({ windowMs: 60_000, limit: 3, store, keyGenerator: (req) => req.get('x-client') });
  const app = express();
  app.use(limiter);
  app.get('/', (req, res) => res.send('ok'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => { server.close(); store.shutdown(); });
  const status = (client) => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: server.address().port, path: '/', headers: { 'x-client': client } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
  const answers = [];
  for (const client of ['a', 'a', 'a', 'a', 'b']) answers.push(await status(client));
  assert.deepEqual(answers, [200, 200, 200, 429, 200]);
  assert.equal((await limiter.getKey('a')).totalHits, 4);
  limiter.resetKey('a');
  assert.equal(await limiter.getKey('a'), undefined);
  assert.equal(await status('a'), 200);
});
