'use strict';
// Warm-up, pacing and the slow-call rate through the public API (issue 27):
// the decisions at explicit times (the core decides; these check that the
// binding gives its waits, reasons and messages as they are), then the
// sugar: run and the Express middleware really wait a paced request's
// turn before its work starts, measured with performance.now().
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client, web } = require('..');

const T = 1_700_000_000_000;
// How late a timer may fire on a loaded, shared machine and still be "on
// time" here (below the 50 ms steps, so a request that did not wait still
// fails); Node never fires one early by more than its 1 ms rounding.
const LATE_MS = 40;
// How early a wait's timer may fire by the wall clock: Node counts a
// timer's delay from the event loop's cached time, which lags while the
// loop works.
const EARLY_MS = 10;

function paced(rate, maxQueueingTimeMs, extra = {}) {
  const client = new Client({ capacity: 8 });
  client.setStrategy('p', { tokenBucketGeneratedTokensInSecond: rate, maxQueueingTimeMs, ...extra });
  return client.point('p');
}

/** The wait of each of `n` entries at `at` (exited at once), `null` for a downgraded one. */
function waits(point, at, n) {
  return Array.from({ length: n }, () => {
    const e = point.enter({ nowMs: at });
    e.exit(at);
    return e.downgraded ? null : e.waitMs;
  });
}

test('pacing: a burst at one instant waits 0, 100, ... 500 ms at 10/s, then TOKEN_BUCKET with no wait', () => {
  const point = paced(10, 500);
  assert.deepEqual(waits(point, T, 8), [0, 100, 200, 300, 400, 500, null, null]);
  const refused = point.enter({ nowMs: T });
  assert.equal(refused.reason, 'TOKEN_BUCKET');
  assert.equal(refused.waitMs, 0, 'a downgraded entry never waits');
  // 250 ms later the slots go on from 600 ms: 350 and 450 ms away.
  assert.deepEqual(waits(point, T + 250, 3), [350, 450, null]);
  // Drained: the next runs at once; Client#enter reads the same bits.
  assert.deepEqual(waits(point, T + 2_000, 2), [0, 100]);
  const byName = point.client.enter('p', { nowMs: T + 2_000 });
  assert.equal(byName.waitMs, 200);
  byName.exit(T + 2_000);
});

test('pacing: waits round up to whole ms (3/s), a queue of 0 is a strict rate, rate 0 closes', () => {
  assert.deepEqual(waits(paced(3, 2_000), T, 5), [0, 334, 667, 1_000, 1_334]);
  const strict = paced(10, 0);
  assert.deepEqual(waits(strict, T, 2), [0, null]);
  assert.deepEqual(waits(strict, T + 99, 1), [null]);
  assert.deepEqual(waits(strict, T + 100, 2), [0, null]);
  assert.deepEqual(waits(paced(0, 1_000), T, 1), [null]);
});

test('pacing: the longest queue, 65535 ms, fits the packed entry', () => {
  const point = paced(1, 65_535);
  const got = waits(point, T, 67);
  assert.deepEqual(got.slice(0, 3), [0, 1_000, 2_000]);
  assert.equal(got[65], 65_000);
  assert.equal(got[66], null);
});

test('pacing: a paced request is timed from when it may run (enter + waitMs)', () => {
  const point = paced(2, 1_000, { timeoutThreshold: 100 });
  const first = point.enter({ nowMs: T });
  const second = point.enter({ nowMs: T });
  assert.equal(second.waitMs, 500);
  first.exit(T + 50);
  second.exit(T + 550); // 50 ms after it could start
  assert.equal(point.stats(T + 600).timeout, 0);
  const third = point.enter({ nowMs: T + 600 });
  third.exit(T + 600 + third.waitMs + 101);
  assert.equal(point.stats(T + 2_000).timeout, 1);
});

test('pacing without a token-bucket rate, or not paced: every wait is 0', () => {
  const client = new Client({ capacity: 4 });
  client.setStrategy('plain', { tokenBucketGeneratedTokensInSecond: 10, tokenBucketSize: 20 });
  assert.deepEqual(waits(client.point('plain'), T, 3), [0, 0, 0]);
  assert.deepEqual(waits(client.point('none'), T, 2), [0, 0]);
});

test('warm-up: 10/s over 10 s, cold factor 3: 3 admitted in the first second, climbing to 10 and staying', () => {
  const client = new Client({ capacity: 4 });
  client.setStrategy('p', { tokenBucketGeneratedTokensInSecond: 10, warmUpPeriodSec: 10, coldFactor: 3 });
  const point = client.point('p');
  const perSecond = [];
  for (let k = 0; k < 40; k++) {
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      const at = T + k * 1_000 + i * 50;
      const e = point.enter({ nowMs: at });
      e.exit(at);
      if (!e.downgraded) admitted++;
      else assert.equal(e.reason, 'TOKEN_BUCKET');
      assert.equal(e.waitMs, 0, 'warm-up alone never makes a request wait');
    }
    perSecond.push(admitted);
  }
  assert.equal(perSecond[0], 3, perSecond.join());
  for (let k = 1; k < perSecond.length; k++) assert.ok(perSecond[k - 1] <= perSecond[k], perSecond.join());
  const full = perSecond.indexOf(10);
  assert.ok(full >= 8 && full <= 25, `full rate at second ${full}: ${perSecond.join()}`);
  assert.ok(perSecond.slice(full).every((n) => n === 10), perSecond.join());
});

test('warm-up with pacing: cold 10/3 per second, so 300 ms apart', () => {
  const point = paced(10, 1_000, { warmUpPeriodSec: 10, coldFactor: 3 });
  assert.deepEqual(waits(point, T, 5), [0, 300, 600, 900, null]);
});

test('slow-call rate: SLOW_CALL_RATE past the share of slow calls, then DELAY, then a probe that does not wait', () => {
  const client = new Client({ capacity: 4 });
  const strategy = { timeoutThreshold: 100, slowCallRateThreshold: 50, slowCallRateStart: 3, delayTime: 10_000, retryInterval: 1_000 };
  client.setStrategy('p', strategy);
  assert.deepEqual(client.strategy('p'), { ...client.strategy('p'), ...strategy });
  const point = client.point('p');
  const call = (at, ms) => {
    const e = point.enter({ nowMs: at });
    assert.equal(e.downgraded, false, `at +${at - T}`);
    e.exit(at + ms);
  };
  call(T, 10);
  call(T + 200, 150); // slow
  call(T + 400, 150); // slow
  const downgrades = [];
  client.on('downgrade', (name, reason) => downgrades.push(reason));
  const tripped = point.enter({ nowMs: T + 600 });
  assert.equal(tripped.reason, 'SLOW_CALL_RATE');
  tripped.exit(T + 600);
  const delayed = point.enter({ nowMs: T + 700 });
  assert.equal(delayed.reason, 'DELAY');
  delayed.exit(T + 700);
  assert.deepEqual(downgrades, ['SLOW_CALL_RATE', 'DELAY']);
  const probe = point.enter({ nowMs: T + 1_700 });
  assert.equal(probe.downgraded, false);
  assert.equal(probe.waitMs, 0, 'a probe has a generation in those bits, not a wait');
  probe.exit(T + 1_710);
  const samples = client.metrics({ nowMs: T + 2_000 }).find((f) => f.name === 'sds_point_downgrades').samples;
  assert.equal(samples.find((s) => s.labels.reason === 'SLOW_CALL_RATE').value, 1);
});

test('slow-call rate below its start is not judged', () => {
  const client = new Client({ capacity: 4 });
  client.setStrategy('p', { timeoutThreshold: 100, slowCallRateThreshold: 10, slowCallRateStart: 5 });
  for (let i = 0; i < 5; i++) {
    const e = client.enter('p', { nowMs: T + i * 10 });
    assert.equal(e.downgraded, false, `visit ${i + 1}`);
    e.exit(T + i * 10 + 500);
  }
  assert.equal(client.enter('p', { nowMs: T + 100 }).reason, 'SLOW_CALL_RATE');
});

test('the new fields are validated with the core messages, word for word, as objects and as JSON', () => {
  const cases = [
    [{ slowCallRateThreshold: 10 },
      'invalid strategy: slowCallRateThreshold needs a timeoutThreshold > 0: the time above which a call is slow'],
    [{ timeoutThreshold: 5, slowCallRateThreshold: 101 },
      'invalid strategy: slowCallRateThreshold must be within 0..=100 (or negative: off)'],
    [{ coldFactor: 1 }, 'invalid strategy: coldFactor must be > 1'],
    [{ coldFactor: 1.5 }, 'invalid strategy: coldFactor must be an integer'],
    [{ warmUpPeriodSec: 10 },
      'invalid strategy: warmUpPeriodSec needs tokenBucketGeneratedTokensInSecond: the rate it shapes (>= 1 to warm up)'],
    [{ tokenBucketGeneratedTokensInSecond: 0, warmUpPeriodSec: 10 },
      'invalid strategy: warmUpPeriodSec needs tokenBucketGeneratedTokensInSecond: the rate it shapes (>= 1 to warm up)'],
    [{ tokenBucketGeneratedTokensInSecond: 10, warmUpPeriodSec: 0 },
      'invalid strategy: warmUpPeriodSec must be >= 1 s (or negative: no warm-up)'],
    [{ maxQueueingTimeMs: 100 },
      'invalid strategy: maxQueueingTimeMs needs tokenBucketGeneratedTokensInSecond: the rate it shapes (>= 1 to warm up)'],
    [{ tokenBucketGeneratedTokensInSecond: 10, maxQueueingTimeMs: 65_536 },
      'invalid strategy: maxQueueingTimeMs must be <= 65535 ms (or negative: no pacing)'],
    [{ tokenBucketGeneratedTokensInSecond: 10, tokenBucketSize: 20, maxQueueingTimeMs: 100 },
      'invalid strategy: tokenBucketSize must not exceed the rate with warmUpPeriodSec or maxQueueingTimeMs (they have no burst)'],
  ];
  for (const [strategy, message] of cases) {
    for (const input of [strategy, JSON.stringify(strategy)]) {
      const client = new Client({ capacity: 2 });
      client.setStrategy('p', { visitThreshold: 7 });
      assert.throws(() => client.setStrategy('p', input), { code: 'SDS_INVALID_STRATEGY', message }, JSON.stringify(strategy));
      assert.equal(client.strategy('p').visitThreshold, 7, 'the old strategy stays');
    }
  }
  const client = new Client({ capacity: 2 });
  client.setStrategy('p', { tokenBucketGeneratedTokensInSecond: 10, warmUpPeriodSec: 5, coldFactor: 5, maxQueueingTimeMs: 65_535 });
  const read = client.strategy('p');
  assert.equal(read.maxQueueingTimeMs, 65_535);
  assert.equal(read.coldFactor, 5);
});

test('the defaults of the new fields, and index.d.ts declares every field and reason of the core', () => {
  const client = new Client({ capacity: 2 });
  client.setStrategy('p', {});
  const defaults = client.strategy('p');
  assert.equal(Object.keys(defaults).length, 22);
  assert.deepEqual(
    [defaults.slowCallRateThreshold, defaults.slowCallRateStart, defaults.warmUpPeriodSec, defaults.coldFactor, defaults.maxQueueingTimeMs],
    [-1, 0, -1, 3, -1],
  );
  const typings = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const strategyBody = typings.match(/export interface Strategy \{([\s\S]*?)\n\}/)[1];
  const declared = [...strategyBody.matchAll(/^ {2}(\w+)\?: number \| null$/gm)].map((m) => m[1]);
  assert.deepEqual(declared, Object.keys(defaults), 'index.d.ts Strategy: the core fields in their order');
  const reasonBody = typings.match(/export type Reason =([\s\S]*?)\n\n/)[1];
  const reasons = [...reasonBody.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
  const samples = client.metrics({ nowMs: T }).find((f) => f.name === 'sds_point_downgrades').samples;
  assert.deepEqual(reasons.sort(), samples.map((s) => s.labels.reason).sort(), 'index.d.ts Reason: the core reasons');
});

// The sugar. Real time: a paced point with rate 20/s gives waits 50 ms apart.

test('run: no timer when the wait is 0 (a sync fn still returns its value, not a promise)', () => {
  const point = paced(20, 1_000);
  assert.equal(point.run(() => 7), 7);
  const client = new Client({ capacity: 2 });
  assert.equal(client.run('free', () => 8), 8);
});

test('run: each request of a burst starts its fn after its wait (performance.now, within a few ms)', async () => {
  const point = paced(20, 1_000);
  const t0 = performance.now();
  const starts = [];
  const results = [];
  for (let i = 0; i < 6; i++) {
    const fn = i % 2 === 0 ? () => starts.push(performance.now() - t0) && i : async () => starts.push(performance.now() - t0) && i;
    results.push(point.run(fn));
  }
  assert.equal(results[0], 0, 'the first runs at once, synchronously');
  assert.ok(results.slice(1).every((r) => r instanceof Promise), 'the waiting ones are promises');
  assert.deepEqual(await Promise.all(results), [0, 1, 2, 3, 4, 5]);
  // The slots are 50 ms apart from the first; the calls took well under a
  // ms, so each waited its slot less the time the earlier calls took.
  const late = starts.map((at, i) => at - 50 * i);
  assert.ok(late.every((d) => d >= -EARLY_MS && d <= LATE_MS), `starts ${starts.map((s) => s.toFixed(1))}`);
  assert.equal(point.stats().concurrent, 0, 'every entry exited');
});

test('run: a paced fn that throws after its wait rejects and counts the exception; the fallback of a refusal does not wait', async () => {
  const point = paced(10, 100);
  assert.equal(point.run(() => 'first'), 'first');
  const boom = new Error('boom');
  const t0 = performance.now();
  await assert.rejects(point.run(() => { throw boom; }), boom);
  const waited = performance.now() - t0;
  assert.ok(waited >= 100 - EARLY_MS && waited <= 100 + LATE_MS, `${waited} ms`);
  const t1 = performance.now();
  // The next slot is 100 ms away (within the maximum), the one after 200 ms: refused.
  const queued = point.run(() => 'queued');
  assert.equal(point.run(() => 'never', () => 'fallback'), 'fallback');
  assert.ok(performance.now() - t1 < 5, 'no timer for a refusal');
  assert.equal(await queued, 'queued');
  assert.equal(point.stats().exception, 1);
});

test('Express middleware: a paced route calls next() after each request\'s wait', async (t) => {
  const client = new Client({ capacity: 4 });
  client.setStrategy('paced', { tokenBucketGeneratedTokensInSecond: 20, maxQueueingTimeMs: 1_000 });
  const guard = web.express({ client, point: 'paced' });
  const handled = [];
  const server = http.createServer((req, res) => {
    guard(req, res, () => {
      handled.push(performance.now());
      res.end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const get = () => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
  const statuses = await Promise.all(Array.from({ length: 6 }, get));
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
  handled.sort((a, b) => a - b);
  const gaps = handled.slice(1).map((at, i) => at - handled[i]);
  // Slots 50 ms apart; the requests reach the server within a few ms of
  // each other, each gap is 50 ms give or take the timers' lateness.
  assert.ok(gaps.every((g) => g >= 50 - LATE_MS && g <= 50 + LATE_MS), `gaps ${gaps.map((g) => g.toFixed(1))}`);
  const span = handled[5] - handled[0];
  // The first handler may run late itself (a loaded machine), the rest on
  // their slots: the span may fall short by that lateness.
  assert.ok(span >= 250 - LATE_MS && span <= 250 + LATE_MS, `span ${span.toFixed(1)}`);
  agent.destroy();
});

test('Fastify plugin: a paced route runs its handler after each request\'s wait', async (t) => {
  const Fastify = require('fastify');
  const client = new Client({ capacity: 4 });
  client.setStrategy('paced', { tokenBucketGeneratedTokensInSecond: 20, maxQueueingTimeMs: 1_000 });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(web.fastify, { client, point: 'paced' });
  const handled = [];
  app.get('/', async () => {
    handled.push(performance.now());
    return 'ok';
  });
  await app.ready();
  const start = performance.now();
  const replies = await Promise.all(Array.from({ length: 5 }, () => app.inject({ url: '/' })));
  assert.deepEqual(replies.map((r) => r.statusCode), [200, 200, 200, 200, 200]);
  // Slots 50 ms apart from the first request's entry (it waited 0), which
  // is at or after \`start\`: each handler runs about at its slot. Measured
  // from \`start\`, not from the first handler, which a loaded machine may
  // run late itself; a wait's timer may fire early (EARLY_MS).
  const late = handled.map((at, i) => at - start - 50 * i);
  assert.ok(late.every((d) => d >= -EARLY_MS && d <= LATE_MS), `handled at ${handled.map((at) => (at - start).toFixed(1))}`);
});

test('Express middleware: a request whose client leaves during its wait never reaches the handler', async (t) => {
  const client = new Client({ capacity: 4 });
  client.setStrategy('paced', { tokenBucketGeneratedTokensInSecond: 4, maxQueueingTimeMs: 1_000, concurrentThreshold: 10 });
  const guard = web.express({ client, point: 'paced' });
  let handled = 0;
  const server = http.createServer((req, res) => guard(req, res, () => {
    handled++;
    res.end('ok');
  }));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const first = await new Promise((resolve) => http.get({ host: '127.0.0.1', port, path: '/' }, (res) => res.resume().on('end', () => resolve(res.statusCode))));
  assert.equal(first, 200);
  // The next slot is 250 ms away: the client gives up after 50.
  const req = http.get({ host: '127.0.0.1', port, path: '/' });
  req.on('error', () => {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  req.destroy();
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(handled, 1);
  assert.equal(client.stats('paced').concurrent, 0, 'its permit came back when it closed');
  assert.equal(client.stats('paced').visit, 2);
});
