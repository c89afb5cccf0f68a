'use strict';
// Pacing in real use (issue 27): an Express service in front of a downstream
// that takes at most R calls per wall-clock second (it answers 429 beyond
// that) gets a burst of 10R requests at once. The service's point paces the
// downstream's rate (tokenBucketGeneratedTokensInSecond R, a queue long
// enough for the whole burst), through the three ways the package offers:
// the Express middleware, point.run, and enter + entry.waitMs by hand.
// Both servers are started here on free loopback ports; about 10 s.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');
const express = require('express');
const { Client, web } = require('..');

const R = 20; // the downstream's calls per second, and the point's rate
const STEP_MS = 1000 / R;
const BURST = 10 * R;
// A timer fires at or after its time, and a loaded machine adds a few ms
// (the median gap stays within 0.2 ms of STEP_MS; single calls up to 64 ms
// late seen on the shared 2-core VM while CI ran other suites). The slots
// themselves, the core's decision, hold exactly R in any 1 s (checked on
// the hand-written route's startMs + waitMs). What the downstream sees is
// those slots plus each call's lateness: a window [t, t + 1000) holds the R
// calls of its slots, plus one when an arrival R slots later is a fraction
// of a ms less late (every run shows it), plus one more for every STEP_MS a
// call from before the window was late. So the test measures the worst
// lateness and allows R + 1 + floor(worst / STEP_MS): on a quiet machine
// R + 1. A call more than MAX_LATE_MS late fails the test outright.
const MAX_LATE_MS = 10 * STEP_MS;
const allowance = (worstLateMs) => 1 + Math.floor(worstLateMs / STEP_MS);

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function get(port, path, agent) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      })
      .on('error', reject);
  });
}

/** The most of `times` (ms, sorted) in any window [t, t + 1000). */
function maxInAnySecond(times) {
  let most = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    while (j < times.length && times[j] < times[i] + 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

test(`a burst of ${BURST} through a point paced at ${R}/s: the downstream sees at most ${R} a second`, { timeout: 60_000 }, async (t) => {
  // The downstream: counts calls per wall-clock second (checked against the
  // limit and the measured allowance once the burst is over).
  const perSecond = new Map();
  const arrivals = [];
  const downstream = http.createServer((req, res) => {
    arrivals.push(performance.now());
    const second = Math.floor(Date.now() / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    res.end('done');
  });
  const downstreamPort = await listen(downstream);
  t.after(() => downstream.close());

  // The service.
  const client = new Client({ capacity: 8 });
  client.setStrategy('downstream', { tokenBucketGeneratedTokensInSecond: R, maxQueueingTimeMs: 12_000 });
  const point = client.point('downstream');
  const toDownstream = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const callDownstream = () => get(downstreamPort, '/', toDownstream);
  const started = []; // performance.now() when each call's work started
  const entries = []; // [startMs, waitMs] of the hand-written route
  const app = express();
  app.get('/mw', web.express({ client, point: 'downstream' }), async (req, res) => {
    started.push(performance.now());
    const d = await callDownstream();
    res.status(d.status).send(d.body);
  });
  app.get('/run', async (req, res) => {
    const d = await point.run(() => {
      started.push(performance.now());
      return callDownstream();
    });
    res.status(d.status).send(d.body);
  });
  app.get('/enter', async (req, res) => {
    const entry = point.enter();
    if (entry.downgraded) return res.status(503).send(entry.reason);
    entries.push([entry.startMs, entry.waitMs]);
    if (entry.waitMs > 0) await sleep(entry.waitMs);
    started.push(performance.now());
    try {
      const d = await callDownstream();
      res.status(d.status).send(d.body);
    } finally {
      entry.exit();
    }
  });
  const service = http.createServer(app);
  const servicePort = await listen(service);
  t.after(() => service.close());

  // The burst: 10R requests at once, a third to each route.
  const toService = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const routes = ['/mw', '/run', '/enter'];
  const t0 = performance.now();
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => get(servicePort, routes[i % 3], toService)));
  const took = performance.now() - t0;
  toService.destroy();
  toDownstream.destroy();

  // Every request went through: none refused by the point.
  const statuses = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  assert.deepEqual(statuses, { 200: BURST }, JSON.stringify(statuses));
  assert.equal(arrivals.length, BURST);

  // The sugar's view: the k-th call started STEP_MS * k after the first,
  // within a few ms (timers fire late, never early).
  started.sort((a, b) => a - b);
  // How far each call is from its slot, the slots placed where most calls
  // are (the median offset), so that one late first call moves nothing.
  const offSlot = (times) => {
    const offsets = times.map((at, k) => at - k * STEP_MS);
    const middle = [...offsets].sort((a, b) => a - b)[offsets.length >> 1];
    return offsets.map((o) => o - middle);
  };
  const worst = Math.max(...offSlot(started).map(Math.abs));
  const gaps = started.slice(1).map((at, k) => at - started[k]).sort((a, b) => a - b);
  const medianGap = gaps[gaps.length >> 1];
  assert.ok(Math.abs(medianGap - STEP_MS) <= 2, `median gap ${medianGap.toFixed(2)} ms`);
  assert.ok(worst <= MAX_LATE_MS, `a call ${worst.toFixed(1)} ms off its slot: ${offSlot(started).map((d) => d.toFixed(0))}`);

  // The downstream's view: at most R + the allowance for the lateness seen,
  // in every wall-clock second and any 1 s window.
  arrivals.sort((a, b) => a - b);
  const late = offSlot(arrivals);
  const spread = Math.max(...late) - Math.min(...late);
  const ALLOWANCE = allowance(Math.max(worst, spread));
  const counts = [...perSecond.values()];
  const mostPerSecond = Math.max(...counts);
  const mostInWindow = maxInAnySecond(arrivals);
  assert.ok(mostPerSecond <= R + ALLOWANCE, `per wall-clock second: ${counts} (allowance ${ALLOWANCE})`);
  assert.ok(mostInWindow <= R + ALLOWANCE, `in a 1 s window: ${mostInWindow} (allowance ${ALLOWANCE})`);

  // The core's slots: every hand-written entry runs at startMs + waitMs on
  // one grid STEP_MS apart, one request a slot: at most R in any 1 s.
  const runAt = entries.map(([start, wait]) => start + wait).sort((a, b) => a - b);
  assert.equal(runAt.length, Math.floor(BURST / 3)); // the i with i % 3 === 2
  assert.ok(runAt.every((at) => (at - runAt[0]) % STEP_MS === 0), `slots ${runAt.map((at) => at - runAt[0])}`);
  assert.ok(runAt.every((at, i) => i === 0 || at > runAt[i - 1]), 'one request a slot');
  assert.ok(runAt.at(-1) - runAt[0] <= (BURST - 1) * STEP_MS, 'the slots of one burst');
  const waits = entries.map(([, wait]) => wait).sort((a, b) => a - b);
  assert.ok(waits[0] < STEP_MS * 3 && waits.at(-1) >= (BURST - 3) * STEP_MS - 500, `waits ${waits[0]}..${waits.at(-1)}`);

  t.diagnostic(
    `${BURST} requests in ${(took / 1000).toFixed(2)} s; downstream most per wall-clock second ${mostPerSecond}, ` +
      `in any 1 s window ${mostInWindow} (limit ${R}, allowance ${ALLOWANCE}); waits ${waits[0]}..${waits.at(-1)} ms; ` +
      `gaps between calls median ${medianGap.toFixed(2)} ms (min ${gaps[0].toFixed(1)}, max ${gaps.at(-1).toFixed(1)}); ` +
      `worst call ${worst.toFixed(1)} ms off its slot; arrivals within ${spread.toFixed(1)} ms of each other's slots`,
  );
});
