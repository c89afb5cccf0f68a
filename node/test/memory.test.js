'use strict';
// The native memory of a client is reported to V8, so dropped clients are
// collected under memory pressure without anyone calling gc(). A default
// client holds about 1.6 MB of slots behind a few hundred bytes of
// JavaScript objects: unreported, 3000 dropped clients reached about 4.9 GB.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const CLIENTS = 3000;
const BOUND_MB = 1024;

test(`${CLIENTS} dropped default clients stay under ${BOUND_MB} MB RSS without gc()`, () => {
  // N-API runs finalizers from the event loop, so the loop yields now and
  // then, as a server between requests does.
  const script = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    (async () => {
      let peak = 0;
      for (let i = 0; i < ${CLIENTS}; i++) {
        const client = new Client();
        client.enter('p').exit();
        if (i % 100 === 99) await new Promise(setImmediate);
        peak = Math.max(peak, process.memoryUsage.rss());
      }
      console.log(JSON.stringify({ peakMb: Math.round(peak / 2 ** 20), gc: typeof gc }));
    })();
  `;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const { peakMb, gc } = JSON.parse(out);
  assert.equal(gc, 'undefined', 'the child cannot call gc()');
  assert.ok(peakMb < BOUND_MB, `peak RSS ${peakMb} MB, bound ${BOUND_MB} MB`);
});
