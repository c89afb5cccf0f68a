'use strict';
// Adaptive concurrency (issue 27) through the public API: the core finds
// the limit (core/src/adaptive); these check that the binding hands over
// the strategy fields, that an entry's exit is the sample (with its
// failure), and that the stats and messages come back as the core gives
// them. Explicit times throughout: an RTT here is exit - enter, in µs.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client, DowngradedError } = require('..');

const T = 1_700_000_000_000;
const AIMD = 1;
const VEGAS = 2;
const GRADIENT2 = 3;
const GRADIENT = 4;
const KNEE = 5;

function adaptive(strategy) {
  const client = new Client({ capacity: 8 });
  client.setStrategy('p', strategy);
  return client.point('p');
}

/** The four adaptive stats of a point at `at`. */
function inputs(point, at) {
  const { adaptiveLimit, adaptiveMinRttUs, adaptiveRttUs, adaptiveLongRttUs } = point.stats(at);
  return { adaptiveLimit, adaptiveMinRttUs, adaptiveRttUs, adaptiveLongRttUs };
}

/**
 * The first min-RTT measurement: `samples` + 1 requests of `rttMs` from
 * `at`, `gapMs` apart, the limit at its minimum (3) until the last; the
 * time after them.
 */
function gatherMinRtt(point, at, samples, rttMs, gapMs) {
  for (let i = 0; i <= samples; i++) {
    point.enter({ nowMs: at }).exit(at + rttMs);
    at += gapMs;
    if (i < samples) assert.equal(point.stats(at).adaptiveLimit, 3, `sample ${i}`);
  }
  return at;
}

/** `n` entries at `at`; asserts each one's reason (`null`: admitted). */
function enterAll(point, at, reasons) {
  return reasons.map((want, i) => {
    const e = point.enter({ nowMs: at });
    assert.equal(e.reason, want, `entry ${i} at +${at - T}`);
    return e;
  });
}

test('AIMD: the initial limit caps the requests in flight; the refused one is CONCURRENT and no sample', () => {
  const point = adaptive({ adaptiveConcurrency: AIMD, adaptiveMinLimit: 1, adaptiveInitialLimit: 2 });
  assert.deepEqual(inputs(point, T), { adaptiveLimit: 2, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  const [a, b, refused] = enterAll(point, T, [null, null, 'CONCURRENT']);
  assert.equal(point.stats(T).concurrent, 2);
  refused.exit(T + 5_000); // a refused request: no sample, even a slow one
  assert.deepEqual(inputs(point, T), { adaptiveLimit: 2, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  // The first exit: 1 left in flight + itself = 2 >= 2 / 2, so +1; the
  // second: 1 < 3 / 2, unchanged. The RTT shown is the last sample's.
  a.exit(T + 40);
  b.exit(T + 50);
  assert.deepEqual(inputs(point, T + 50), { adaptiveLimit: 3, adaptiveMinRttUs: 0, adaptiveRttUs: 50_000, adaptiveLongRttUs: 0 });
  assert.equal(point.stats(T + 50).concurrent, 0);
});

test('AIMD: grows by one per sample while the point is busy, not while it idles', () => {
  const point = adaptive({ adaptiveConcurrency: AIMD, adaptiveMinLimit: 1, adaptiveInitialLimit: 4 });
  // One at a time: 1 in flight < 4 / 2, so no growth however many.
  for (let i = 0; i < 10; i++) point.enter({ nowMs: T + i * 10 }).exit(T + i * 10 + 5);
  assert.equal(point.stats(T + 100).adaptiveLimit, 4);
  // Four at once (all the limit admits): the exits see 4, 3, 2, 1 in
  // flight (the ones still open and the ending one): 4 -> 5 (4 >= 4 / 2),
  // 5 -> 6 (3 >= 5 / 2), then 2 < 6 / 2 and 1: unchanged.
  let at = T + 1_000;
  const open = enterAll(point, at, [null, null, null, null, 'CONCURRENT']);
  open.pop().exit(at);
  for (const e of open) e.exit(at + 20);
  assert.equal(point.stats(at + 20).adaptiveLimit, 6);
  // Busy again at the new limit: 6 admitted, the 7th refused; the exits
  // at 6, 5, 4 in flight: 6 -> 7 -> 8 -> 9, then 3 < 9 / 2.
  at += 1_000;
  const again = enterAll(point, at, [null, null, null, null, null, null, 'CONCURRENT']);
  for (const e of again) e.exit(at + 20);
  assert.equal(point.stats(at + 20).adaptiveLimit, 9);
});

test('AIMD: a failed call backs the limit off x 0.9 (rounded down): error(), a throwing run, a rejected run, a timeout', async () => {
  const point = adaptive({ adaptiveConcurrency: AIMD, adaptiveMinLimit: 1, adaptiveInitialLimit: 50, timeoutThreshold: 1_000 });
  point.enter({ nowMs: T }).error(new Error('overload')).exit(T + 10);
  assert.equal(point.stats(T + 10).adaptiveLimit, 45);
  assert.equal(point.stats(T + 10).exception, 1);
  // Slower than timeoutThreshold is a drop too, though it did not throw.
  point.enter({ nowMs: T + 100 }).exit(T + 1_101);
  assert.deepEqual(inputs(point, T + 1_101), { adaptiveLimit: 40, adaptiveMinRttUs: 0, adaptiveRttUs: 1_001_000, adaptiveLongRttUs: 0 });
  assert.equal(point.stats(T + 1_101).timeout, 1);
  // run (on the wall clock from here): a throw and a rejection are failures.
  assert.throws(() => point.run(() => { throw new Error('sync'); }), /sync/);
  assert.equal(point.stats().adaptiveLimit, 36); // floor(40 * 0.9)
  await assert.rejects(point.run(async () => { throw new Error('async'); }), /async/);
  assert.equal(point.stats().adaptiveLimit, 32);
  // A run that succeeds is a plain sample (1 in flight: no growth at 32).
  assert.equal(point.run(() => 'ok'), 'ok');
  assert.equal(point.stats().adaptiveLimit, 32);
  // Never below the minimum.
  const floor = adaptive({ adaptiveConcurrency: AIMD, adaptiveMinLimit: 3, adaptiveInitialLimit: 3 });
  floor.enter({ nowMs: T }).error(new Error('x')).exit(T + 1);
  assert.equal(floor.stats(T + 1).adaptiveLimit, 3);
});

test('AIMD: run on a point at its limit falls back with CONCURRENT, and the fallback is no sample', () => {
  const point = adaptive({ adaptiveConcurrency: AIMD, adaptiveMinLimit: 1, adaptiveInitialLimit: 1 });
  const held = point.enter({ nowMs: T });
  assert.equal(point.run(() => 'work', () => 'fallback'), 'fallback');
  assert.throws(() => point.run(() => 'work'), (e) => e instanceof DowngradedError && e.reason === 'CONCURRENT');
  assert.equal(point.stats(T).adaptiveLimit, 1);
  held.exit(T + 30); // 0 + 1 in flight >= 1 / 2: +1
  assert.equal(point.stats(T + 30).adaptiveLimit, 2);
});

test('Vegas: adaptiveMinRttUs is the no-load RTT (the least sample), adaptiveRttUs the last; starts at its default 20', () => {
  const point = adaptive({ adaptiveConcurrency: VEGAS });
  assert.equal(point.stats(T).adaptiveLimit, 20);
  const sample = (at, ms) => point.enter({ nowMs: at }).exit(at + ms);
  sample(T, 40);
  assert.deepEqual(inputs(point, T + 40), { adaptiveLimit: 20, adaptiveMinRttUs: 40_000, adaptiveRttUs: 40_000, adaptiveLongRttUs: 0 });
  sample(T + 100, 30);
  assert.deepEqual(inputs(point, T + 130), { adaptiveLimit: 20, adaptiveMinRttUs: 30_000, adaptiveRttUs: 30_000, adaptiveLongRttUs: 0 });
  // Slower samples leave the no-load RTT; one request in flight is under
  // half the limit, so the limit stays (Vegas's app-limited rule).
  sample(T + 200, 60);
  sample(T + 300, 45);
  assert.deepEqual(inputs(point, T + 345), { adaptiveLimit: 20, adaptiveMinRttUs: 30_000, adaptiveRttUs: 45_000, adaptiveLongRttUs: 0 });
  // Busy with no queue (every RTT = the no-load RTT): queue 0 <= log10 L,
  // so L + 6 * log10 L: 20 -> 26 per sample while in flight >= L / 2.
  const open = enterAll(point, T + 1_000, Array(20).fill(null));
  const refused = point.enter({ nowMs: T + 1_000 });
  assert.equal(refused.reason, 'CONCURRENT');
  refused.exit(T + 1_000);
  open[0].exit(T + 1_030);
  assert.equal(point.stats(T + 1_030).adaptiveLimit, 26);
  for (const e of open.slice(1)) e.exit(T + 1_030);
});

test('Gradient2 and Envoy\'s gradient show their inputs', () => {
  const g2 = adaptive({ adaptiveConcurrency: GRADIENT2 });
  let at = T;
  for (const ms of [10, 20, 30, 40]) {
    g2.enter({ nowMs: at }).exit(at + ms);
    at += 100;
  }
  // The long RTT is the plain mean of the first 10 samples: 25 ms here; it
  // is also the RTT the limit is judged against (adaptiveMinRttUs).
  assert.deepEqual(inputs(g2, at), { adaptiveLimit: 20, adaptiveMinRttUs: 25_000, adaptiveRttUs: 40_000, adaptiveLongRttUs: 25_000 });

  // Envoy: the limit reads its minimum (3) while the first min-RTT
  // measurement gathers 50 samples, then returns to where it was.
  const envoy = adaptive({ adaptiveConcurrency: GRADIENT, adaptiveInitialLimit: 10 });
  assert.equal(envoy.stats(T).adaptiveLimit, 10);
  at = gatherMinRtt(envoy, T, 50, 20, 30);
  const s = inputs(envoy, at);
  assert.equal(s.adaptiveLimit, 10);
  // The p50 of 50 samples of 20 ms from the 16 µs-bucket histogram, and
  // the target: min RTT + 25 %.
  assert.ok(Math.abs(s.adaptiveMinRttUs - 20_000) <= 1_000, `min RTT ${s.adaptiveMinRttUs}`);
  assert.equal(s.adaptiveLongRttUs, Math.floor(s.adaptiveMinRttUs * 1.25));
});

test('KNEE measures its min RTT, then doubles the limit per busy window without a queue; the decision follows', () => {
  const point = adaptive({ adaptiveConcurrency: KNEE });
  assert.deepEqual(inputs(point, T), { adaptiveLimit: 3, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  // The min RTT: the p50 of 100 requests sent after the first sample, the
  // limit at its minimum (3) meanwhile.
  let at = gatherMinRtt(point, T, 100, 40, 50);
  const measured = inputs(point, at);
  assert.equal(measured.adaptiveLimit, 3);
  assert.equal(measured.adaptiveRttUs, 40_000);
  assert.ok(measured.adaptiveMinRttUs >= 36_000 && measured.adaptiveMinRttUs <= 40_000, `min RTT ${measured.adaptiveMinRttUs}`);
  // The long RTT is the latency it settles at: min RTT / (1 - 4 %).
  assert.equal(measured.adaptiveLongRttUs, Math.floor((measured.adaptiveMinRttUs * 100) / 96));
  // The slow start: a busy window (2 of 3 in flight), 25 samples over
  // 100 ms at the min RTT: the limit doubles.
  at += 100;
  for (let i = 0; i < 13; i++, at += 10) {
    const pair = enterAll(point, at, [null, null]);
    for (const e of pair) e.exit(at + 40);
  }
  const doubled = inputs(point, at + 40);
  assert.equal(doubled.adaptiveLimit, 6);
  assert.equal(doubled.adaptiveMinRttUs, measured.adaptiveMinRttUs);
  const seven = enterAll(point, at + 50, [null, null, null, null, null, null, 'CONCURRENT']);
  assert.equal(point.stats(at + 50).concurrent, 6);
  for (const e of seven) e.exit(at + 90);
});

test('changing the algorithm or its limits starts afresh; another field or the same row keeps the limit', () => {
  const client = new Client({ capacity: 4 });
  const row = { adaptiveConcurrency: AIMD, adaptiveMinLimit: 1, adaptiveInitialLimit: 2 };
  client.setStrategy('p', row);
  const point = client.point('p');
  const grow = (at) => {
    const open = enterAll(point, at, Array(point.stats(at).adaptiveLimit).fill(null));
    for (const e of open) e.exit(at + 10);
  };
  grow(T);
  grow(T + 100);
  const grown = point.stats(T + 200).adaptiveLimit;
  assert.ok(grown >= 4, `grown to ${grown}`);
  client.setStrategy('p', row);
  assert.equal(point.stats(T + 200).adaptiveLimit, grown, 'the same row again');
  client.setStrategy('p', { ...row, timeoutThreshold: 500, visitThreshold: 1_000 });
  assert.equal(point.stats(T + 200).adaptiveLimit, grown, 'other fields changed');
  client.setStrategy('p', { ...row, adaptiveConcurrency: VEGAS });
  assert.deepEqual(inputs(point, T + 200), { adaptiveLimit: 2, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  point.enter({ nowMs: T + 300 }).exit(T + 330);
  assert.equal(point.stats(T + 330).adaptiveMinRttUs, 30_000);
  client.setStrategy('p', row);
  assert.deepEqual(inputs(point, T + 400), { adaptiveLimit: 2, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 }, 'back to AIMD: afresh, not the old AIMD limit');
  grow(T + 500);
  assert.equal(point.stats(T + 600).adaptiveLimit, 3);
  client.setStrategy('p', { ...row, adaptiveMaxLimit: 500 });
  assert.equal(point.stats(T + 600).adaptiveLimit, 2, 'new bounds: afresh');
  grow(T + 700);
  client.removeStrategy('p');
  assert.deepEqual(inputs(point, T + 800), { adaptiveLimit: 0, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 }, 'no row: zeros');
  client.setStrategy('p', { ...row, adaptiveMaxLimit: 500 });
  assert.equal(point.stats(T + 800).adaptiveLimit, 2, 'removed then set: afresh');
  // Turned off: concurrentThreshold decides again, the stats read 0.
  client.setStrategy('p', { concurrentThreshold: 1 });
  assert.deepEqual(inputs(point, T + 900), { adaptiveLimit: 0, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  enterAll(point, T + 900, [null, 'CONCURRENT']).forEach((e) => e.exit(T + 900));
});

// The adaptive row's verdicts, word for word (conformance/strategies.json's
// last cases), as an object and as JSON text; the old strategy stays.
const refusals = [
  [{ adaptiveConcurrency: 6 }, 'invalid strategy: adaptiveConcurrency must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), 4 (GRADIENT) or 5 (KNEE), or negative: off'],
  [{ adaptiveConcurrency: 1, concurrentThreshold: 10 }, 'invalid strategy: concurrentThreshold must be negative with adaptiveConcurrency (the limit is found from latency)'],
  [{ adaptiveMaxLimit: 10 }, 'invalid strategy: adaptiveMaxLimit needs adaptiveConcurrency'],
  [{ adaptiveConcurrency: 2, adaptiveMinLimit: 0 }, 'invalid strategy: adaptiveMinLimit must be >= 1 (or negative: the algorithm\'s default)'],
  [{ adaptiveConcurrency: 2, adaptiveMaxLimit: 1_000_001 }, 'invalid strategy: adaptiveMaxLimit must be <= 1000000'],
  [{ adaptiveConcurrency: 1, adaptiveMaxLimit: 10 }, 'invalid strategy: adaptiveMaxLimit must be >= the minimum limit'],
  [{ adaptiveConcurrency: 3, adaptiveInitialLimit: 500 }, 'invalid strategy: adaptiveInitialLimit must be within the minimum and maximum limits'],
];

test('the adaptive row\'s messages, word for word, as an object and as JSON', () => {
  const client = new Client({ capacity: 2 });
  client.setStrategy('p', { adaptiveConcurrency: VEGAS, adaptiveMaxLimit: 99 });
  const before = client.strategy('p');
  for (const [strategy, message] of refusals) {
    for (const input of [strategy, JSON.stringify(strategy)]) {
      assert.throws(() => client.setStrategy('p', input), (e) => {
        assert.equal(e.code, 'SDS_INVALID_STRATEGY', JSON.stringify(strategy));
        assert.equal(e.message, message);
        return true;
      });
      assert.deepEqual(client.strategy('p'), before, 'the old strategy stays');
    }
  }
  // The same texts as the shared cases.
  const cases = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'conformance', 'strategies.json'), 'utf8')).cases;
  const shared = cases.filter((c) => /adaptive/.test(c.json) && c.error).map((c) => c.message);
  assert.deepEqual(shared.sort(), refusals.map(([, m]) => m).sort());
  // Accepted: the bounds read back; the algorithm's defaults stay -1.
  client.setStrategy('p', { adaptiveConcurrency: GRADIENT2, adaptiveMinLimit: 5, adaptiveMaxLimit: 500, adaptiveInitialLimit: 50 });
  const read = client.strategy('p');
  assert.deepEqual(
    [read.adaptiveConcurrency, read.adaptiveMinLimit, read.adaptiveMaxLimit, read.adaptiveInitialLimit, read.concurrentThreshold],
    [3, 5, 500, 50, -1],
  );
  client.setStrategy('p', { adaptiveConcurrency: AIMD });
  assert.deepEqual(Object.values(client.strategy('p')).slice(-4), [1, -1, -1, -1]);
  assert.equal(client.point('p').stats(T).adaptiveLimit, 20, 'AIMD\'s default initial limit');
});

test('without the row the four stats are 0, and index.d.ts declares every stat of the core in its order', () => {
  const client = new Client({ capacity: 2 });
  client.setStrategy('p', { concurrentThreshold: 3 });
  const e = client.enter('p', { nowMs: T });
  e.exit(T + 20);
  const stats = client.stats('p', T + 20);
  assert.deepEqual(inputs(client.point('p'), T + 20), { adaptiveLimit: 0, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0 });
  const typings = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const body = typings.match(/export interface Stats \{([\s\S]*?)\n\}/)[1];
  const declared = [...body.matchAll(/^ {2}(\w+): /gm)].map((m) => m[1]);
  assert.deepEqual(declared, Object.keys(stats));
});
