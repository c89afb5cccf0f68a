'use strict';
// An entry collected without exit() gives its permit back (exiting as a
// failure) and a process warning names its point.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

/** Runs `body` (an async function body) in a child with gc() exposed; its printed JSON. */
function inChild(body) {
  const script = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const warnings = [];
    process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
    const tick = () => new Promise((resolve) => setTimeout(resolve, 20));
    async function collect() { await tick(); gc(); await tick(); }
    (async () => { ${body} })();
  `;
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' }));
}

test('a dropped entry returns its permit and warns with the point name', () => {
  const out = inChild(`
    const client = new Client();
    client.setStrategy('leaky', { concurrentThreshold: 1 });
    (() => { client.enter('leaky'); })();
    const held = client.stats('leaky').concurrent;
    await collect();
    const after = client.stats('leaky');
    const next = client.enter('leaky');
    console.log(JSON.stringify({ held, concurrent: after.concurrent, exception: after.exception,
      next: next.reason, warnings }));
    next.exit();
  `);
  assert.equal(out.held, 1);
  assert.equal(out.concurrent, 0);
  assert.equal(out.exception, 1, 'counted as a failed request');
  assert.equal(out.next, null, 'the permit is usable again');
  assert.equal(out.warnings.length, 1);
  assert.equal(out.warnings[0].code, 'SDS_ENTRY_NOT_EXITED');
  assert.match(out.warnings[0].message, /"leaky"/);
});

test('a dropped entry is no timeout and no latency sample: when it ended is unknown', () => {
  const out = inChild(`
    const client = new Client();
    client.setStrategy('slow', { timeoutThreshold: 1 });
    client.setStrategy('adaptive', {
      concurrentThreshold: -1, adaptiveConcurrency: 1, adaptiveMinLimit: 1, adaptiveInitialLimit: 20,
    });
    (() => { client.enter('slow'); client.enter('adaptive'); })();
    await collect();
    const slow = client.stats('slow');
    const adaptive = client.stats('adaptive');
    console.log(JSON.stringify({ slow: [slow.exception, slow.timeout, slow.concurrent],
      adaptive: [adaptive.exception, adaptive.adaptiveLimit, adaptive.concurrent], warnings: warnings.length }));
  `);
  // Exited as failed (exitError), the adaptive entry would be an AIMD drop
  // (limit 20 -> 18) and the slow one a timeout (collected >= 20 ms later).
  assert.deepEqual(out, { slow: [1, 0, 0], adaptive: [1, 20, 0], warnings: 2 });
});

test('many entries dropped in one tick all come back', () => {
  const out = inChild(`
    const client = new Client();
    client.setStrategy('loop', { concurrentThreshold: 5000 });
    for (let i = 0; i < 3000; i++) client.enter('loop');
    const held = client.stats('loop').concurrent;
    await collect();
    console.log(JSON.stringify({ held, concurrent: client.stats('loop').concurrent, warnings: warnings.length }));
  `);
  assert.deepEqual(out, { held: 3000, concurrent: 0, warnings: 3000 });
});

test('exited entries, across ticks or not, and downgraded ones are never settled again', () => {
  const out = inChild(`
    const client = new Client();
    client.setStrategy('p', { concurrentThreshold: 1 });
    client.setStrategy('closed', { visitThreshold: 0 });
    (() => { client.enter('p').exit(); })();
    await (async () => { const e = client.enter('p'); await tick(); e.exit(); })();
    await client.run('p', async () => { await tick(); });
    (() => { client.enter('closed'); })();
    await collect();
    const s = client.stats('p');
    console.log(JSON.stringify({ concurrent: s.concurrent, exception: s.exception, warnings }));
  `);
  assert.deepEqual(out, { concurrent: 0, exception: 0, warnings: [] });
});

test('run() of a promise that never settles, dropped, returns its permit', () => {
  const out = inChild(`
    const client = new Client();
    client.setStrategy('stuck', { concurrentThreshold: 1 });
    client.run('stuck', () => new Promise(() => {}));
    const held = client.stats('stuck').concurrent;
    await collect();
    console.log(JSON.stringify({ held, concurrent: client.stats('stuck').concurrent, warnings: warnings.length }));
  `);
  assert.deepEqual(out, { held: 1, concurrent: 0, warnings: 1 });
});
