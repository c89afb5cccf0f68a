'use strict';
// Adaptive concurrency and pacing are the host's on a shared table: real
// processes (a `node:cluster` of 4 workers, each with its own client on one
// file) take turns as the test tells them over IPC. The limit grown by one
// worker's samples caps another's requests and a third's failure backs it
// off for all; paced requests entering in several workers at one instant
// get distinct slots. This file is both the test (the primary, which opens
// no table) and, run by cluster.fork, the workers (`serve`).
const cluster = require('node:cluster');
const { workerOrPrimary, stopWorkers } = require('../testing/cluster.js');
const path = require('node:path');
const { Client } = require('..');

const WORKERS = 4;
const T = 1_700_000_000_000;
const RATE = 20; // the paced point of the explicit test: 1000 / 20 = 50 ms apart

/** A worker: runs the primary's commands on its client, answers each. */
function serve() {
  const client = new Client({ capacity: 16, shared: process.env.SDS_TEST_TABLE });
  const open = new Map(); // tag -> entries this process entered
  const ops = {
    set: ({ point, strategy }) => client.setStrategy(point, strategy),
    stats: ({ point, nowMs }) => client.stats(point, nowMs),
    // `n` entries at `nowMs`, kept under `tag`; their reasons.
    enter: ({ point, nowMs, n, tag }) => {
      const entries = Array.from({ length: n }, () => client.enter(point, { nowMs }));
      open.set(tag, entries);
      return entries.map((e) => e.reason);
    },
    // The waits of `tag`'s entries (null: downgraded).
    waits: ({ tag }) => open.get(tag).map((e) => (e.downgraded ? null : e.waitMs)),
    // Exits `tag`'s entries at `nowMs`, the admitted ones failed if `error`.
    exit: ({ tag, nowMs, error }) => {
      for (const e of open.get(tag)) {
        if (error && !e.downgraded) e.error(new Error('overload'));
        e.exit(nowMs);
      }
      open.delete(tag);
    },
    // From wall-clock time `at` for `forMs` ms, entries on the wall clock
    // as fast as the loop goes, each exited at once: the slots (start +
    // wait) of the admitted ones, the count refused, the last start. The workers spin
    // for `at`'s last ms, so that they start together.
    burst: async ({ point, at, forMs }) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now() - 20)));
      while (Date.now() < at);
      const slots = [];
      let refused = 0;
      let lastStart = 0;
      // At least `forMs`, and on until this worker is refused once (the
      // queue is full): a loaded machine may give a worker little of the
      // first ms. Never past 5 s.
      while ((Date.now() < at + forMs || refused === 0) && Date.now() < at + 5_000) {
        const e = client.enter(point);
        if (e.downgraded) refused++;
        else slots.push([e.startMs + e.waitMs, e.waitMs]);
        lastStart = e.startMs;
        e.exit();
      }
      return { slots, refused, lastStart };
    },
  };
  process.on('message', async ({ id, op, args }) => {
    try {
      process.send({ id, pid: process.pid, result: await ops[op](args) });
    } catch (error) {
      process.send({ id, error: `${error.code ?? ''} ${error.message}` });
    }
  });
  process.send({ ready: process.pid });
}

workerOrPrimary(serve, primary, 'sds-node-adaptive-');

function primary(dir) {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const fs = require('node:fs');

  const file = path.join(dir, 'table.sds');
  const workers = [];
  let nextId = 0;
  const pending = new Map();

  /** Runs `op` in worker `w` and resolves with its answer. */
  function ask(w, op, args = {}) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      workers[w].send({ id, op, args });
    });
  }

  test.before(async () => {
    cluster.setupPrimary({ exec: __filename, silent: false });
    await Promise.all(Array.from({ length: WORKERS }, () => new Promise((resolve, reject) => {
      // The workers are no test processes of the runner.
      const worker = cluster.fork({ SDS_TEST_TABLE: file, NODE_TEST_CONTEXT: '' });
      workers.push(worker);
      worker.on('message', (m) => {
        if (m.ready) return resolve();
        const { resolve: ok, reject: fail } = pending.get(m.id);
        pending.delete(m.id);
        if (m.error) fail(new Error(m.error));
        else ok(m.result);
      });
      worker.once('exit', (code, signal) => reject(new Error(`worker exited early (${code ?? signal})`)));
    })));
    assert.equal(new Set(workers.map((w) => w.process.pid)).size, WORKERS);
  });

  test.after(async () => {
    await stopWorkers({ signal: 'SIGTERM' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('AIMD on a shared table: one worker\'s samples grow the limit that caps another; a third\'s failure backs it off for all', async () => {
    await ask(0, 'set', { point: 'a', strategy: { adaptiveConcurrency: 1, adaptiveMinLimit: 1, adaptiveInitialLimit: 2 } });
    assert.equal((await ask(1, 'stats', { point: 'a', nowMs: T })).adaptiveLimit, 2, 'the strategy set in worker 0');
    // Worker 0 holds the 2 permits: worker 1 is refused.
    assert.deepEqual(await ask(0, 'enter', { point: 'a', nowMs: T, n: 2, tag: 'x' }), [null, null]);
    assert.deepEqual(await ask(1, 'enter', { point: 'a', nowMs: T, n: 1, tag: 'x' }), ['CONCURRENT']);
    await ask(1, 'exit', { tag: 'x', nowMs: T }); // refused: no sample
    // Worker 0's samples: 2 -> 3 (2 in flight), then 3 at once: 3 -> 4 -> 5.
    await ask(0, 'exit', { tag: 'x', nowMs: T + 50 });
    assert.equal((await ask(0, 'enter', { point: 'a', nowMs: T + 100, n: 3, tag: 'y' })).filter((r) => r === null).length, 3);
    await ask(0, 'exit', { tag: 'y', nowMs: T + 150 });
    assert.equal((await ask(2, 'stats', { point: 'a', nowMs: T + 150 })).adaptiveLimit, 5);
    // Worker 1 is capped by that limit: 5 admitted, the 6th refused, and so
    // is worker 2 while worker 1 holds them.
    assert.deepEqual(await ask(1, 'enter', { point: 'a', nowMs: T + 200, n: 6, tag: 'z' }), [null, null, null, null, null, 'CONCURRENT']);
    assert.deepEqual(await ask(2, 'enter', { point: 'a', nowMs: T + 200, n: 1, tag: 'z' }), ['CONCURRENT']);
    await ask(2, 'exit', { tag: 'z', nowMs: T + 200 });
    const busy = await ask(3, 'stats', { point: 'a', nowMs: T + 200 });
    assert.deepEqual([busy.concurrent, busy.adaptiveLimit], [5, 5]);
    // Worker 1's 5 exits see 5, 4, 3, 2, 1 in flight: 5 -> 6 -> 7, then 3 < 7 / 2.
    await ask(1, 'exit', { tag: 'z', nowMs: T + 230 });
    const grown = await ask(3, 'stats', { point: 'a', nowMs: T + 230 });
    assert.deepEqual([grown.concurrent, grown.adaptiveLimit, grown.adaptiveRttUs], [0, 7, 30_000]);
    // Worker 2's one failed call: floor(7 * 0.9) = 6 for the host.
    assert.deepEqual(await ask(2, 'enter', { point: 'a', nowMs: T + 300, n: 1, tag: 'f' }), [null]);
    await ask(2, 'exit', { tag: 'f', nowMs: T + 310, error: true });
    assert.equal((await ask(0, 'stats', { point: 'a', nowMs: T + 310 })).adaptiveLimit, 6);
    assert.deepEqual(await ask(3, 'enter', { point: 'a', nowMs: T + 400, n: 7, tag: 'w' }), [null, null, null, null, null, null, 'CONCURRENT']);
    await ask(3, 'exit', { tag: 'w', nowMs: T + 400 });
  });

  test(`pacing at ${RATE}/s: ${WORKERS} workers entering at one explicit instant get distinct slots, 0 to 950 ms`, async () => {
    await ask(3, 'set', { point: 'paced', strategy: { tokenBucketGeneratedTokensInSecond: RATE, maxQueueingTimeMs: 950 } });
    const n = 5;
    const answers = await Promise.all(workers.map((_, w) => ask(w, 'enter', { point: 'paced', nowMs: T, n, tag: 'p' })));
    assert.ok(answers.every((reasons) => reasons.every((r) => r === null)), JSON.stringify(answers));
    const waits = await Promise.all(workers.map((_, w) => ask(w, 'waits', { tag: 'p' })));
    // Each worker's waits climb; together they are the 20 slots of the grid.
    for (const own of waits) {
      for (let i = 1; i < own.length; i++) assert.ok(own[i] > own[i - 1], JSON.stringify(waits));
    }
    assert.deepEqual(waits.flat().sort((x, y) => x - y), Array.from({ length: WORKERS * n }, (_, i) => (i * 1000) / RATE), JSON.stringify(waits));
    await Promise.all(workers.map((_, w) => ask(w, 'exit', { tag: 'p', nowMs: T })));
    const refused = await ask(0, 'enter', { point: 'paced', nowMs: T, n: 1, tag: 'q' });
    assert.deepEqual(refused, ['TOKEN_BUCKET'], 'the 21st would wait 1000 ms > 950');
    await ask(0, 'exit', { tag: 'q', nowMs: T });
  });

  test('pacing at 1000/s on the wall clock: workers racing for 40 ms take every 1 ms slot once, interleaved', async (t) => {
    // 1 ms apart, queue 10 s: the queue fills in a few ms of the workers'
    // loops (while they race), then all but about one a ms are refused.
    await ask(0, 'set', { point: 'live', strategy: { tokenBucketGeneratedTokensInSecond: 1_000, maxQueueingTimeMs: 10_000 } });
    const at = Date.now() + 300;
    const bursts = await Promise.all(workers.map((_, w) => ask(w, 'burst', { point: 'live', at, forMs: 40 })));
    const taken = bursts.flatMap(({ slots }, w) => slots.map(([slot, wait]) => [slot, w, wait])).sort((x, y) => x[0] - y[0]);
    const slots = taken.map(([slot]) => slot);
    const refused = bursts.reduce((sum, b) => sum + b.refused, 0);
    // Each worker's own slots climb; all of them together are one slot per
    // ms, none shared, none skipped, from the first entry's time. A slot is
    // skipped only when no worker ran during it (a loaded machine, before
    // the queue fills): then the next entry takes its own time, waiting 0.
    for (const { slots: own } of bursts) {
      for (let i = 1; i < own.length; i++) assert.ok(own[i][0] > own[i - 1][0], `a worker's slots ${own[i - 1]}, ${own[i]}`);
    }
    assert.equal(new Set(slots).size, slots.length, 'a slot given twice');
    for (let i = 1; i < slots.length; i++) {
      if (taken[i][2] === 0) assert.ok(slots[i] > slots[i - 1], `slots ${slots[i - 1] - slots[0]}, ${slots[i] - slots[0]}`);
      else assert.equal(slots[i] - slots[i - 1], 1, `slots ${slots[i - 1] - slots[0]}, ${slots[i] - slots[0]} (waited ${taken[i][2]} ms)`);
    }
    const skipped = slots.at(-1) - slots[0] + 1 - slots.length;
    // From the first start to 10 s after the last: the queue, never more.
    const lastStart = Math.max(...bursts.map((b) => b.lastStart));
    assert.ok(slots[0] >= at, `first slot ${slots[0] - at} ms after the start`);
    assert.ok(slots.at(-1) <= lastStart + 10_000, `last slot ${slots.at(-1) - lastStart} ms after the last start`);
    // Each worker was refused, so the queue was full: 10 s of slots, less
    // none (a slot is skipped only before it filled, and a refusal finds
    // the last one 10 s ahead).
    assert.ok(bursts.every((b) => b.refused > 0), `refused ${bursts.map((b) => b.refused)}`);
    assert.ok(slots.length >= 10_000, `${slots.length} admitted`);
    // They raced: in slot order, the owner changes more often than once per worker.
    let switches = 0;
    for (let i = 1; i < taken.length; i++) if (taken[i][1] !== taken[i - 1][1]) switches++;
    assert.ok(switches > WORKERS, `owner switches ${switches}`);
    t.diagnostic(`${slots.length} admitted (${bursts.map((b) => b.slots.length).join(' + ')}), ${refused} refused, ${skipped} slots skipped before the queue filled, owner switches in slot order: ${switches}`);
  });
}
