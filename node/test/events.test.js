'use strict';
// 'downgrade' events come from JavaScript (an EventEmitter), with the time
// of the decision; no native callback keeps the process alive.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Client } = require('..');

test('a downgrade emits (point, reason, timeMs)', () => {
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 1 });
  const events = [];
  client.on('downgrade', (...args) => events.push(args));
  client.enter('p', { nowMs: 100000 }).exit(100000);
  assert.deepEqual(events, []);
  client.enter('p', { nowMs: 100001 }).exit(100001);
  client.point('p').enter({ nowMs: 100002 }).exit(100002);
  assert.deepEqual(events, [['p', 'VISIT', 100001], ['p', 'VISIT', 100002]]);
});

test('the default clock stamps events with the entry start time', () => {
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 0 });
  let seen;
  client.once('downgrade', (point, reason, timeMs) => { seen = timeMs; });
  const before = Date.now();
  const entry = client.enter('p');
  entry.exit();
  assert.equal(seen, entry.startMs);
  // The coarse clock may lag the precise one by a tick (a few ms).
  assert.ok(Math.abs(entry.startMs - before) < 1000, `${entry.startMs} vs ${before}`);
});

/** The process warnings emitted while `fn` runs (they arrive on a later tick). */
async function warningsDuring(fn) {
  const seen = [];
  const listener = (warning) => seen.push(warning);
  process.on('warning', listener);
  try {
    fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

test('a throwing listener is a warning: enter returns its entry, run its fallback', async () => {
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 0 });
  client.on('downgrade', () => { throw new Error('listener broke'); });
  let entry;
  let result;
  const warnings = await warningsDuring(() => {
    entry = client.enter('p', { nowMs: 100000 });
    result = client.run('p', () => 'work', () => 'fallback');
  });
  assert.equal(entry.reason, 'VISIT');
  assert.equal(entry.exit(100000), true);
  assert.equal(result, 'fallback');
  assert.equal(warnings.length, 2);
  for (const w of warnings) {
    assert.equal(w.code, 'SDS_LISTENER_ERROR');
    assert.match(w.message, /a 'downgrade' listener of point "p" threw: Error: listener broke/);
  }
  assert.equal(client.stats('p', 100000).concurrent, 0);
});

test('a listener throwing what cannot be shown is still a warning', async () => {
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 0 });
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  client.on('downgrade', () => { throw proxy; });
  const warnings = await warningsDuring(() => client.enter('p', { nowMs: 100000 }).exit(100000));
  assert.deepEqual(warnings.map((w) => w.code), ['SDS_LISTENER_ERROR']);
});

test('a process with a client and listeners exits on its own', () => {
  const script = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const c = new Client();
    c.on('downgrade', () => {});
    c.setStrategy('p', { visitThreshold: 0 });
    c.run('p', () => 1, () => 2);
    c.point('p').enter().exit();
  `;
  const { status, signal } = spawnSync(process.execPath, ['-e', script], { timeout: 20000 });
  assert.equal(signal, null);
  assert.equal(status, 0);
});
