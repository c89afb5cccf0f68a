'use strict';
// The stores and the keyed API against their peers, in one process:
// - express-rate-limit's middleware per request (its defaults: X-RateLimit-*
//   headers, validations on; a key per client) with ExpressRateLimitStore
//   (private and shared), its own MemoryStore, and rate-limit-redis (ioredis,
//   a real redis-server over loopback that this program starts); each
//   store's increment alone beside it;
// - KeyedLimit.decide (a window from the first hit, as RateLimiterMemory
//   keeps) against rate-limiter-flexible's RateLimiterMemory.consume.
// Every case cycles over the same 1000 keys with limits never reached, so
// each measures the admitting path. Median wall ns/op of BENCH_ROUNDS rounds
// (default 5) after a warm-up round; awaited cases one call after another.
// Run: node bench/keyed-stores.js (from node/; needs redis-server, `make servers`).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { timeSync, timeAwaited, medians, printTable } = require('../testing/timing.js');
const { startRedis } = require('../testing/redis-server');
const { KeyedLimit, ExpressRateLimitStore } = require('..');

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 5;
const KEYS = Array.from({ length: 1000 }, (_, i) => `client-${i}`);
const WINDOW_MS = 60_000;
const NEVER = 1e9;
const MIDDLEWARE_OPS = 50_000;
const REDIS_OPS = 2_000;

/** The key of call i, cycling over KEYS. */
function keys() {
  let i = 0;
  return () => KEYS[(i = (i + 1) % KEYS.length)];
}

/**
 * express-rate-limit's middleware with `store`, called as express calls it,
 * on a request and a response that have what it reads and writes.
 */
function middlewareCase(store) {
  const { rateLimit } = require('express-rate-limit');
  const limiter = rateLimit({ windowMs: WINDOW_MS, limit: NEVER, store, keyGenerator: (req) => req.key });
  const next = keys();
  const noop = () => {};
  const response = {
    headersSent: false,
    setHeader: noop,
    append: noop,
    status() { return this; },
    send: noop,
    once: noop,
  };
  let passed = 0;
  const onNext = () => { passed++; };
  // A request object per call: the middleware's double-count check keys a
  // WeakMap by it.
  const run = () => limiter({ key: next(), ip: '127.0.0.1', headers: {}, app: { get: noop } }, response, onNext);
  return { run, passed: () => passed };
}

function storeCase(store) {
  const next = keys();
  return () => store.increment(next());
}

async function main() {
  const { MemoryStore } = require('express-rate-limit');
  const { RedisStore } = require('rate-limit-redis');
  const { RateLimiterMemory } = require('rate-limiter-flexible');
  const Redis = require('ioredis');

  const redis = await startRedis();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-bench-stores-'));
  const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
  await client.connect();
  try {
    const stores = {
      'ExpressRateLimitStore (private)': () => new ExpressRateLimitStore(),
      'ExpressRateLimitStore (shared)': () => new ExpressRateLimitStore({ shared: path.join(dir, 'express') }),
      MemoryStore: () => new MemoryStore(),
      'rate-limit-redis': () => new RedisStore({ sendCommand: (...args) => client.call(...args) }),
    };
    const middleware = {};
    const alone = {};
    for (const [name, make] of Object.entries(stores)) {
      const store = make();
      middleware[name] = middlewareCase(store);
      // The one the middleware initialised is not shared with another limiter.
      const solo = make();
      solo.init?.({ windowMs: WINDOW_MS });
      alone[name] = storeCase(solo);
    }

    const rule = { kind: 'fixedWindow', limit: 2 ** 23, periodMs: WINDOW_MS, windowFromFirstHit: true };
    const keyed = new KeyedLimit(rule);
    const keyedShared = KeyedLimit.shared(path.join(dir, 'keyed'), rule);
    const flexible = new RateLimiterMemory({ points: NEVER, duration: WINDOW_MS / 1000 });
    const nextKeyed = keys();
    const nextShared = keys();
    const nextFlexible = keys();

    let round = 0;
    const ns = await medians(ROUNDS, async (record) => {
      // Each round starts with another store: the first case of a round
      // runs on a heap the previous round left.
      const names = Object.keys(middleware);
      const order = names.map((_, i) => names[(i + round) % names.length]);
      round++;
      for (const name of order) {
        const ops = name === 'rate-limit-redis' ? REDIS_OPS : MIDDLEWARE_OPS;
        record(`express-rate-limit per request, ${name}`, await timeAwaited(middleware[name].run, ops));
      }
      for (const [name, increment] of Object.entries(alone)) {
        const ops = name === 'rate-limit-redis' ? REDIS_OPS : MIDDLEWARE_OPS;
        record(`store.increment alone (awaited), ${name}`, await timeAwaited(increment, ops));
      }
      record('KeyedLimit.decide (private)', timeSync(() => keyed.decide(nextKeyed())));
      record('KeyedLimit.decide (shared)', timeSync(() => keyedShared.decide(nextShared())));
      record('RateLimiterMemory.consume (awaited)', await timeAwaited(() => flexible.consume(nextFlexible()), MIDDLEWARE_OPS));
    });
    for (const [name, { passed }] of Object.entries(middleware)) {
      if (passed() === 0) throw new Error(`the middleware with ${name} never called next()`);
    }
    report(ns);
    keyed.close();
    keyedShared.close();
  } finally {
    client.disconnect();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function goal(text, ratio, met) {
  console.log(`goal: ${text}: ${ratio.toFixed(2)}x ${met ? 'met' : 'NOT met'}`);
}

function report(ns) {
  // Read from the files: not every package exports its package.json.
  const version = (name) => JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'node_modules', name, 'package.json'))).version;
  console.log(`node ${process.version}, express-rate-limit ${version('express-rate-limit')}, rate-limit-redis `
    + `${version('rate-limit-redis')}, ioredis ${version('ioredis')}, rate-limiter-flexible `
    + `${version('rate-limiter-flexible')}; median wall ns/op of ${ROUNDS} rounds, ${KEYS.length} keys`);
  const request = (name) => ns[`express-rate-limit per request, ${name}`];
  printTable(ns, 'express-rate-limit per request, MemoryStore', 'MemoryStore per request');
  for (const kind of ['private', 'shared']) {
    const ours = request(`ExpressRateLimitStore (${kind})`);
    const vsMemory = ours / request('MemoryStore');
    goal(`express-rate-limit per request, our store (${kind}) <= 1.2x MemoryStore`, vsMemory, vsMemory <= 1.2);
    const vsRedis = request('rate-limit-redis') / ours;
    goal(`our store (${kind}) >= 50x faster than rate-limit-redis per request`, vsRedis, vsRedis >= 50);
    // The middleware's own work bounds the ratio per request; the stores' calls alone:
    const alone = (name) => ns[`store.increment alone (awaited), ${name}`];
    const storeVsRedis = alone('rate-limit-redis') / alone(`ExpressRateLimitStore (${kind})`);
    console.log(`  (store.increment alone: rate-limit-redis / ours (${kind}) = ${storeVsRedis.toFixed(1)}x; `
      + `ours / MemoryStore = ${(alone(`ExpressRateLimitStore (${kind})`) / alone('MemoryStore')).toFixed(2)}x)`);
  }
  for (const kind of ['private', 'shared']) {
    const ratio = ns['RateLimiterMemory.consume (awaited)'] / ns[`KeyedLimit.decide (${kind})`];
    goal(`KeyedLimit.decide (${kind}) >= 2x faster than RateLimiterMemory.consume`, ratio, ratio >= 2);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
