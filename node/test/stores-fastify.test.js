'use strict';
// FastifyRateLimitStore method by method, against @fastify/rate-limit's own
// LocalStore given the same calls at the same (mocked) times.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const LocalStore = require('@fastify/rate-limit/store/LocalStore');
const { FastifyRateLimitStore } = require('..');
const { random } = require('../testing/random.js');

const T0 = 1_700_000_000_000;

/** A callback store call as its answer, copied (LocalStore hands out its live record). */
function call(store, method, key, timeWindow, max) {
  let answer;
  store[method](key, (err, res) => {
    if (err) throw err;
    answer = { current: res.current, ttl: res.ttl };
  }, timeWindow, max);
  assert.ok(answer, `${method} answered synchronously`);
  return answer;
}

/** The plugin's params as it builds them for a store (the defaults of index.js). */
const PARAMS = { continueExceeding: false, exponentialBackoff: false, max: 5, timeWindow: 1000 };

test('a random sequence of incr and read over two window lengths gets LocalStore\'s answers', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const theirs = new LocalStore(false, false);
  const Ours = FastifyRateLimitStore.with({});
  const ours = new Ours(PARAMS);
  t.after(() => ours.close());
  const next = random(11);
  const keys = ['127.0.0.1', '::1', 'user-7'];
  let incr = 0;
  let read = 0;
  for (let step = 0; step < 3000; step++) {
    const key = keys[Math.floor(next() * keys.length)];
    // One window length per key, as a route's fixed timeWindow gives.
    const timeWindow = key === 'user-7' ? 250 : 1000;
    const roll = next();
    if (roll < 0.6) {
      incr++;
      assert.deepEqual(call(ours, 'incr', key, timeWindow, 5), call(theirs, 'incr', key, timeWindow, 5), `step ${step}`);
    } else if (roll < 0.8) {
      read++;
      assert.deepEqual(call(ours, 'read', key, timeWindow, 5), call(theirs, 'read', key, timeWindow, 5), `step ${step}`);
    } else {
      t.mock.timers.tick(Math.floor(next() * 200));
    }
  }
  assert.ok(incr > 100 && read > 100);
});

test('incr: current counts every hit, ttl the ms left of the window from the first hit', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const Ours = FastifyRateLimitStore.with({});
  const store = new Ours(PARAMS);
  t.after(() => store.close());
  assert.deepEqual(call(store, 'incr', 'k', 60_000, 2), { current: 1, ttl: 60_000 });
  t.mock.timers.tick(100);
  assert.deepEqual(call(store, 'incr', 'k', 60_000, 2), { current: 2, ttl: 59_900 });
  // Past max the count goes on (the plugin's ban compares current - max).
  assert.deepEqual(call(store, 'incr', 'k', 60_000, 2), { current: 3, ttl: 59_900 });
  t.mock.timers.tick(59_900);
  assert.deepEqual(call(store, 'incr', 'k', 60_000, 2), { current: 1, ttl: 60_000 });
});

test('read: { current: 0, ttl: 0 } without a live window, and never counts', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const Ours = FastifyRateLimitStore.with({});
  const store = new Ours(PARAMS);
  t.after(() => store.close());
  assert.deepEqual(call(store, 'read', 'k', 1000), { current: 0, ttl: 0 });
  call(store, 'incr', 'k', 1000);
  assert.deepEqual(call(store, 'read', 'k', 1000), { current: 1, ttl: 1000 });
  assert.deepEqual(call(store, 'read', 'k', 1000), { current: 1, ttl: 1000 });
  t.mock.timers.tick(1000);
  assert.deepEqual(call(store, 'read', 'k', 1000), { current: 0, ttl: 0 });
});

test('child: a route\'s keys apart from the parent\'s and other routes\', as LocalStore\'s children', () => {
  const theirs = new LocalStore(false, false);
  const ours = new FastifyRateLimitStore(PARAMS);
  const route = (url) => ({ ...PARAMS, routeInfo: { method: 'GET', url } });
  const stores = [[theirs, theirs.child(route('/a')), theirs.child(route('/b'))],
    [ours, ours.child(route('/a')), ours.child(route('/b'))]];
  const answers = stores.map(([root, a, b]) => [
    call(root, 'incr', 'k', 1000).current,
    call(root, 'incr', 'k', 1000).current,
    call(a, 'incr', 'k', 1000).current,
    call(b, 'incr', 'k', 1000).current,
    call(a, 'incr', 'k', 1000).current,
  ]);
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[1], [1, 2, 1, 1, 2]);
  ours.close();
});

test('shared: each window length is its own file <shared>.<timeWindow>ms, seen by every store opening it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-fastify-store-'));
  try {
    const base = path.join(dir, 'limits');
    const One = FastifyRateLimitStore.with({ shared: base, capacity: 256 });
    const Two = FastifyRateLimitStore.with({ shared: base, capacity: 256 });
    const one = new One(PARAMS);
    const two = new Two(PARAMS);
    call(one, 'incr', 'k', 60_000);
    call(one, 'incr', 'k', 60_000);
    call(one, 'incr', 'k', 1000);
    assert.equal(call(two, 'incr', 'k', 60_000).current, 3);
    assert.equal(call(two, 'read', 'k', 1000).current, 1);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['limits.1000ms', 'limits.60000ms']);
    // A child of either names a route's keys alike.
    const route = { ...PARAMS, routeInfo: { method: 'POST', url: '/login' } };
    call(one.child(route), 'incr', 'k', 60_000);
    assert.equal(call(two.child(route), 'incr', 'k', 60_000).current, 2);
    one.close();
    two.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('continueExceeding and exponentialBackoff are refused with what works instead', () => {
  for (const name of ['continueExceeding', 'exponentialBackoff']) {
    assert.throws(() => new FastifyRateLimitStore({ ...PARAMS, [name]: true }),
      { code: 'SDS_INVALID_ARGUMENT', message: new RegExp(`does not serve ${name}.*timeWindow`) });
    const store = new FastifyRateLimitStore(PARAMS);
    assert.throws(() => store.child({ ...PARAMS, [name]: true, routeInfo: {} }), new RegExp(name));
  }
  assert.throws(() => FastifyRateLimitStore.with({ shared: '' }), /shared must be a name or a path/);
  assert.throws(() => FastifyRateLimitStore.with({ size: 1 }), /"size"/);
});

test('a timeWindow of 0 counts every hit as a first one, as LocalStore', () => {
  const theirs = new LocalStore(false, false);
  const ours = new FastifyRateLimitStore(PARAMS);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(call(ours, 'incr', 'k', 0, 5), call(theirs, 'incr', 'k', 0, 5));
    assert.deepEqual(call(ours, 'incr', 'k', 0, 5), { current: 1, ttl: 0 });
  }
  assert.deepEqual(call(ours, 'read', 'k', 0, 5), call(theirs, 'read', 'k', 0, 5));
});

test('an error of the table reaches the callback, not a throw', () => {
  const store = new FastifyRateLimitStore(PARAMS);
  let error;
  store.incr('k', (err) => { error = err; }, 1.5, 5);
  assert.match(error.message, /whole number of ms/);
});

test('in @fastify/rate-limit: max 3, the 4th hit of a key is refused with its headers; a refused option fails the registration', async () => {
  const Fastify = require('fastify');
  const app = Fastify();
  await app.register(require('@fastify/rate-limit'), {
    max: 3,
    timeWindow: 60_000,
    store: FastifyRateLimitStore,
    keyGenerator: (req) => req.headers['x-client'],
  });
  app.get('/', async () => 'ok');
  const answers = [];
  for (const client of ['a', 'a', 'a', 'a', 'b']) {
    const res = await app.inject({ method: 'GET', url: '/', headers: { 'x-client': client } });
    answers.push([res.statusCode, res.headers['x-ratelimit-remaining']]);
  }
  assert.deepEqual(answers, [[200, '2'], [200, '1'], [200, '0'], [429, '0'], [200, '2']]);
  await app.close();

  const bad = Fastify();
  bad.register(require('@fastify/rate-limit'), { continueExceeding: true, store: FastifyRateLimitStore });
  await assert.rejects(bad.ready(), /does not serve continueExceeding/);
});
