'use strict';
// KeyedLimit's own surface: keys as strings and bytes, argument and rule
// errors by code and core message, close, shared files, and a shared table
// seen from child processes (this file forked with `child` as argv[2]).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { KeyedLimit } = require('..');

// A forked child: opens the shared file it is given, decides `calls` times
// at one instant, reports how many were admitted, and exits.
if (process.argv[2] === 'child') {
  process.once('message', ({ file, rule, calls, at }) => {
    const limit = KeyedLimit.shared(file, rule, { capacity: 64 });
    let admitted = 0;
    for (let i = 0; i < calls; i++) if (limit.decide('client-1', 1, at).admitted) admitted += 1;
    process.send({ admitted, stats: limit.stats() }, () => process.exit(0));
  });
  return;
}

const RATE = { kind: 'rate', limit: 2, periodMs: 1000 };
const WINDOW = { kind: 'fixedWindow', limit: 3, periodMs: 60000 };

function tmpDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-keyed-api-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function throwsCode(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code, `code of ${e.message}`);
    if (message instanceof RegExp) assert.match(e.message, message);
    else if (message !== undefined) assert.equal(e.message, message);
    return true;
  });
}

test('a decision is a plain object of six fields, in ms', () => {
  const limit = new KeyedLimit(RATE, { capacity: 16 });
  const d = limit.decide('a', 1, 10000);
  assert.deepEqual(d, { admitted: true, limit: 2, remaining: 1, resetMs: 500, retryAfterMs: 0, windowMs: 1000 });
  assert.equal(Object.getPrototypeOf(d), Object.prototype);
  limit.decide('a', 1, 10000);
  assert.deepEqual(limit.decide('a', 1, 10000), {
    admitted: false, limit: 2, remaining: 0, resetMs: 1000, retryAfterMs: 500, windowMs: 1000,
  });
  // A cost above the burst never fits: Infinity, not a huge number.
  assert.equal(limit.decide('b', 3, 10000).retryAfterMs, Infinity);
  assert.deepEqual(limit.peek('a', 10500), {
    admitted: true, limit: 2, remaining: 1, resetMs: 500, retryAfterMs: 0, windowMs: 1000,
  });
});

test('without nowMs the addon clock decides (cost defaults to 1)', () => {
  const limit = new KeyedLimit({ kind: 'fixedWindow', limit: 5, period_ms: 3600000, window_from_first_hit: true });
  const d = limit.decide('a');
  assert.equal(d.remaining, 4);
  assert.ok(d.resetMs > 3590000 && d.resetMs <= 3600000, `resetMs ${d.resetMs}`);
  assert.equal(limit.count('a').count, 1);
  assert.equal(limit.capacity, 65536);
  assert.equal(limit.path, null);
});

test('kind reads back each rule\'s kind, also after close', () => {
  for (const kind of ['rate', 'fixedWindow', 'slidingWindow', 'inFlight']) {
    const rule = kind === 'inFlight' ? { kind, limit: 1 } : { kind, limit: 1, periodMs: 1000 };
    const limit = new KeyedLimit(rule, { capacity: 8 });
    assert.equal(limit.kind, kind);
    limit.close();
    assert.equal(limit.kind, kind);
  }
});

test('a string key is its UTF-8 bytes: Buffer, Uint8Array and subarrays name the same key', () => {
  const limit = new KeyedLimit({ kind: 'rate', limit: 1, periodMs: 60000 }, { capacity: 64 });
  assert.equal(limit.decide('é', 1, 1000).admitted, true);
  assert.equal(limit.decide(Buffer.from([0xc3, 0xa9]), 1, 1000).admitted, false);
  assert.equal(limit.decide(new Uint8Array([0xc3, 0xa9]), 1, 1000).admitted, false);
  assert.equal(limit.decide(Buffer.from('xxé').subarray(2), 1, 1000).admitted, false);
  assert.equal(limit.decide('e\u0301', 1, 1000).admitted, true);
  assert.equal(limit.decide('', 1, 1000).admitted, true);
  assert.equal(limit.decide(Buffer.alloc(0), 1, 1000).admitted, false);
  assert.equal(limit.decide(new Uint8Array(0), 1, 1000).admitted, false);
  // U+FFFD itself is a key (only a lone surrogate is refused).
  assert.equal(limit.decide('\ufffd', 1, 1000).admitted, true);
  assert.equal(limit.decide(Buffer.from('\ufffd'), 1, 1000).admitted, false);
  assert.equal(limit.stats().resident, 4);
});

test('long keys, read past the stack buffer, are whole', () => {
  const limit = new KeyedLimit({ kind: 'rate', limit: 1, periodMs: 60000 }, { capacity: 64 });
  // Around the 1 KiB stack buffer, with 2-, 3- and 4-byte characters at the cut.
  for (const tail of ['é', '€', '😀', 'a']) {
    for (let n = 1010; n <= 1030; n++) {
      const key = 'k'.repeat(n) + tail;
      assert.equal(limit.decide(key, 1, 1000).admitted, true, `${n} + ${tail}`);
      assert.equal(limit.decide(Buffer.from(key), 1, 1000).admitted, false, `${n} + ${tail} as bytes`);
      // A key one character shorter is another key.
      assert.equal(limit.peek([...key].slice(0, -1).join(''), 1000).remaining, 1, `${n} + ${tail} cut`);
    }
  }
  const huge = 'x'.repeat(100000);
  assert.equal(limit.decide(huge, 1, 1000).admitted, true);
  assert.equal(limit.decide(Buffer.from(huge), 1, 1000).admitted, false);
  assert.equal(limit.decide(huge + 'y', 1, 1000).admitted, true);
});

test('what is not a key is refused, naming its type', () => {
  const limit = new KeyedLimit(RATE, { capacity: 16 });
  const notAKey = /^key must be a string, a Buffer or a Uint8Array, got /;
  for (const key of [undefined, null, 42, true, 10n, Symbol('k'), {}, [1], new Uint16Array(2), new ArrayBuffer(2), () => 1]) {
    throwsCode(() => limit.decide(key, 1, 1000), 'SDS_INVALID_ARGUMENT', notAKey);
  }
  throwsCode(() => limit.decide(42), 'SDS_INVALID_ARGUMENT', 'key must be a string, a Buffer or a Uint8Array, got a number');
  // A lone surrogate has no UTF-8 form: replacing it would merge it with U+FFFD.
  // The core's message, as Java's.
  throwsCode(() => limit.decide('a\ud800', 1, 1000), 'SDS_INVALID_ARGUMENT',
    'key is not valid UTF-16: lone surrogate U+D800 at index 1');
  throwsCode(() => limit.decide('x'.repeat(3000) + '\udc00', 1, 1000), 'SDS_INVALID_ARGUMENT',
    'key is not valid UTF-16: lone surrogate U+DC00 at index 3000');
  assert.equal(limit.stats().resident, 0);
});

test('costs, units and times are checked; cost 0 is the core\'s error', () => {
  const limit = new KeyedLimit(RATE, { capacity: 16 });
  throwsCode(() => limit.decide('a', 0, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be >= 1');
  for (const cost of [-1, 1.5, NaN, Infinity, 2 ** 32]) {
    throwsCode(() => limit.decide('a', cost, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be an integer from 1 to 4294967295');
  }
  // Another type is judged by the core too: Python's message for '2', true and null.
  for (const cost of ['2', true, null, 2n]) {
    throwsCode(() => limit.decide('a', cost, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be an integer from 1 to 4294967295');
  }
  throwsCode(() => limit.decide('a', 1, -5), 'SDS_INVALID_ARGUMENT', /^nowMs: /);
  // Two bad arguments: the time, then the cost, then the key, as Python and Java check them.
  throwsCode(() => limit.decide(5, 1.5, -5), 'SDS_INVALID_ARGUMENT', /^nowMs: /);
  throwsCode(() => limit.decide(5, 1.5, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be an integer from 1 to 4294967295');
  throwsCode(() => limit.decide('a', 1, '1000'), 'SDS_INVALID_ARGUMENT', /^nowMs: /);
  throwsCode(() => limit.peek('a', null), 'SDS_INVALID_ARGUMENT', /^nowMs: /);
  assert.equal(limit.decide('a', 2 ** 32 - 1, 1000).retryAfterMs, Infinity);
  assert.equal(limit.stats().resident, 0, 'no refused call took a cell');
});

test('window counts: increment, decrement, count; units 0 is refused', () => {
  const limit = new KeyedLimit(WINDOW, { capacity: 16 });
  assert.deepEqual(limit.increment('a', 1, 1000), { count: 1, previous: 0, resetMs: 59000 });
  assert.deepEqual(limit.increment('a', 5, 2000), { count: 6, previous: 0, resetMs: 58000 });
  assert.deepEqual(limit.decrement('a', 2, 3000), { count: 4, previous: 0, resetMs: 57000 });
  assert.deepEqual(limit.count('a', 4000), { count: 4, previous: 0, resetMs: 56000 });
  assert.deepEqual(limit.count('never-seen', 4000), { count: 0, previous: 0, resetMs: 0 });
  throwsCode(() => limit.increment('a', 0, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be >= 1');
  throwsCode(() => limit.decrement('a', 0, 1000), 'SDS_INVALID_ARGUMENT', 'cost must be >= 1');
  throwsCode(() => limit.increment('a', null, 1000), 'SDS_INVALID_ARGUMENT', 'units must be an integer from 1 to 4294967295');
  throwsCode(() => limit.decrement('a', -1, 1000), 'SDS_INVALID_ARGUMENT', 'units must be an integer from 1 to 4294967295');
  const rate = new KeyedLimit(RATE, { capacity: 16 });
  throwsCode(() => rate.count('a', 1000), 'SDS_INVALID_ARGUMENT', 'only a window rule counts hits');
  throwsCode(() => rate.release('a'), 'SDS_INVALID_ARGUMENT', 'only an inFlight rule gives units back');
});

test('in flight: release gives units back; reset and resetAll forget keys', () => {
  const limit = new KeyedLimit({ kind: 'inFlight', limit: 2 }, { capacity: 16 });
  assert.equal(limit.decide('a', 2, 1000).admitted, true);
  assert.equal(limit.decide('a', 1, 1000).admitted, false);
  assert.equal(limit.release('a'), true);
  assert.equal(limit.decide('a', 1, 1000).remaining, 0);
  assert.equal(limit.release('a', 5), true);
  assert.equal(limit.release('nobody'), false);
  throwsCode(() => limit.release('a', 0), 'SDS_INVALID_ARGUMENT', 'cost must be >= 1');
  const window = new KeyedLimit(WINDOW, { capacity: 16 });
  window.decide('a', 1, 1000);
  window.decide(Buffer.from('b'), 1, 1000);
  assert.equal(window.reset('a'), true);
  assert.equal(window.reset('a'), false);
  assert.equal(window.peek('a', 1000).remaining, 3);
  window.decide('c', 1, 1000);
  assert.equal(window.resetAll(), 2);
  assert.equal(window.resetAll(), 0);
  assert.deepEqual(window.stats(), {
    capacity: 16, resident: 0, evictions: 0, lossyEvictions: 0, admitted: 3, refused: 0,
  });
});

test('stats count admitted and refused decisions exactly, in the core\'s names and order', (t) => {
  const RATE3 = { kind: 'rate', limit: 3, periodMs: 60000 };
  const limit = new KeyedLimit(RATE3, { capacity: 16 });
  assert.deepEqual(limit.stats(), {
    capacity: 16, resident: 0, evictions: 0, lossyEvictions: 0, admitted: 0, refused: 0,
  });
  const admitted = [1, 2, 3, 4, 5].map(() => limit.decide('k', 1, 1000).admitted);
  assert.deepEqual(admitted, [true, true, true, false, false]);
  limit.peek('k', 1000);
  throwsCode(() => limit.decide('k', 0, 1000), 'SDS_INVALID_ARGUMENT');
  assert.deepEqual(limit.stats(), {
    capacity: 16, resident: 1, evictions: 0, lossyEvictions: 0, admitted: 3, refused: 2,
  }, 'peek and a throwing call are not decisions');
  const typings = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const body = typings.match(/export interface KeyStats \{([\s\S]*?)\n\}/)[1];
  const declared = [...body.matchAll(/^ {2}(\w+): /gm)].map((m) => m[1]);
  assert.deepEqual(Object.keys(limit.stats()), declared, 'index.d.ts declares every field in order');

  // Two handles on one shared file: one table, so one set of counts.
  const file = path.join(tmpDir(t), 'stats.sds');
  const a = KeyedLimit.shared(file, RATE3, { capacity: 16 });
  const b = KeyedLimit.shared(file, RATE3, { capacity: 16 });
  for (const handle of [a, b, a, b, a]) handle.decide('k', 1, 1000);
  b.decide('other', 4, 1000);
  const expected = { capacity: 16, resident: 1, evictions: 0, lossyEvictions: 0, admitted: 3, refused: 3 };
  assert.deepEqual(a.stats(), expected);
  assert.deepEqual(b.stats(), expected);
  a.close();
  b.close();
});

test('bad rules are refused with the core\'s code and message', () => {
  const cases = [
    [{ kind: 'rate', limit: 0, periodMs: 1000 }, 'SDS_INVALID_STRATEGY', 'invalid key rule: limit must be >= 1'],
    [{ limit: 1, periodMs: 1000 }, 'SDS_INVALID_STRATEGY', 'invalid key rule: kind is required'],
    [{}, 'SDS_INVALID_STRATEGY', 'invalid key rule: kind is required'],
    [{ kind: 'rate', limit: 1, periodMs: 1000, perodMs: 5 }, 'SDS_UNKNOWN_FIELD', 'unknown key rule field "perodMs"'],
    [{ kind: 'rate', limit: 1, periodMs: 1000, period_ms: 1000 }, 'SDS_INVALID_STRATEGY', 'invalid key rule: "periodMs" is given twice'],
    ['{"kind": "rate", "limit": 1', 'SDS_INVALID_JSON', /./],
    [42, 'SDS_INVALID_ARGUMENT', 'rule must be an object, got a number'],
    [undefined, 'SDS_INVALID_ARGUMENT', 'rule must be an object, got undefined'],
  ];
  for (const [rule, code, message] of cases) {
    throwsCode(() => new KeyedLimit(rule), code, message);
  }
  // The same rule as an object and as JSON text decide alike.
  const rule = { kind: 'rate', limit: 1, periodMs: 1000, exceptions: [['vip', 3]] };
  for (const given of [rule, JSON.stringify(rule)]) {
    const limit = new KeyedLimit(given, { capacity: 8 });
    assert.equal(limit.decide('vip', 3, 1000).admitted, true);
    assert.equal(limit.decide('x', 2, 1000).retryAfterMs, Infinity);
  }
});

test('capacity and options', () => {
  assert.equal(new KeyedLimit(RATE, { capacity: 5 }).capacity, 8);
  throwsCode(() => new KeyedLimit(RATE, { capacity: 0 }), 'SDS_INVALID_CAPACITY', /^a key table needs 1\.\.=/);
  throwsCode(() => new KeyedLimit(RATE, { capacity: -4 }), 'SDS_INVALID_CAPACITY');
  throwsCode(() => new KeyedLimit(RATE, { capacity: 2 ** 60 }), 'SDS_INVALID_CAPACITY');
  throwsCode(() => new KeyedLimit(RATE, { capacity: 1.5 }), 'SDS_INVALID_ARGUMENT', 'capacity must be an integer');
  throwsCode(() => new KeyedLimit(RATE, { capacity: 8, mode: 0o600 }), 'SDS_INVALID_ARGUMENT', /unknown KeyedLimit option key "mode"/);
  throwsCode(() => new KeyedLimit(RATE, 8), 'SDS_INVALID_ARGUMENT', /KeyedLimit option must be an object/);
});

test('close frees the table: later calls throw SDS_CLOSED', () => {
  const limit = new KeyedLimit(RATE, { capacity: 8 });
  limit.decide('a', 1, 1000);
  limit.close();
  limit.close();
  for (const call of [() => limit.decide('a', 1, 1000), () => limit.peek('a'), () => limit.reset('a'),
    () => limit.resetAll(), () => limit.stats(), () => limit.count('a')]) {
    throwsCode(call, 'SDS_CLOSED', 'this KeyedLimit is closed');
  }
  assert.equal(limit.capacity, 8);
  assert.equal(limit.path, null);
});

test('a shared table: two handles on one file count once; mismatches are refused', (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'keys.sds');
  const a = KeyedLimit.shared(file, WINDOW, { capacity: 16 });
  const b = KeyedLimit.shared(file, WINDOW, { capacity: 16, mode: 0o600 });
  assert.equal(a.path, file);
  assert.equal(a.capacity, 16);
  assert.equal(a.decide('k', 2, 1000).remaining, 1);
  assert.deepEqual(b.decide('k', 1, 1000), {
    admitted: true, limit: 3, remaining: 0, resetMs: 59000, retryAfterMs: 0, windowMs: 60000,
  });
  assert.equal(a.decide('k', 1, 1000).admitted, false);
  assert.equal(b.stats().resident, 1);
  throwsCode(() => KeyedLimit.shared(file, { ...WINDOW, limit: 4 }, { capacity: 16 }), 'SDS_LAYOUT_MISMATCH', /^\//);
  throwsCode(() => KeyedLimit.shared(file, WINDOW, { capacity: 32 }), 'SDS_LAYOUT_MISMATCH');
  const flight = KeyedLimit.shared(path.join(dir, 'f.sds'), { kind: 'inFlight', limit: 1 });
  assert.equal(flight.decide('a').admitted, true);
  assert.equal(flight.decide('a').admitted, false);
  assert.equal(flight.release('a'), true);
  flight.close();
  throwsCode(() => KeyedLimit.shared(path.join(dir, 'g.sds'), WINDOW, { mode: 0o644 }), 'SDS_INVALID_ARGUMENT');
  throwsCode(() => KeyedLimit.shared(42, WINDOW), 'SDS_INVALID_ARGUMENT', 'nameOrPath must be a string, got 42');
  throwsCode(() => KeyedLimit.shared('a\0b', WINDOW), 'SDS_INVALID_ARGUMENT');
  a.close();
  assert.equal(b.decide('k', 1, 1000).admitted, false, 'closing one handle leaves the file to the other');
  b.close();
  assert.ok(fs.existsSync(file));
});

test('a bare name is a file under /dev/shm, like the shared point table', { skip: !fs.existsSync('/dev/shm') }, (t) => {
  const name = `sds-keyed-test-${process.pid}.sds`;
  t.after(() => fs.rmSync(`/dev/shm/${name}`, { force: true }));
  const limit = KeyedLimit.shared(name, RATE, { capacity: 8 });
  assert.equal(limit.path, `/dev/shm/${name}`);
  assert.ok(fs.existsSync(`/dev/shm/${name}`));
  limit.close();
});

function child(message) {
  return new Promise((resolve, reject) => {
    const proc = fork(__filename, ['child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer;
    proc.on('message', (m) => { answer = m; });
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 && answer ? resolve(answer) : reject(new Error(`child exited ${code}`))));
    proc.send(message);
  });
}

test('a shared table seen from child processes counts once host-wide', async (t) => {
  const file = path.join(tmpDir(t), 'host.sds');
  const rule = { kind: 'fixedWindow', limit: 25, periodMs: 60000 };
  const at = 120000;
  const parent = KeyedLimit.shared(file, rule, { capacity: 64 });
  assert.equal(parent.decide('client-1', 5, at).admitted, true);
  // Three processes race 10 calls each on what is left: exactly 20 fit.
  const answers = await Promise.all([1, 2, 3].map(() => child({ file, rule, calls: 10, at })));
  const admitted = answers.reduce((sum, a) => sum + a.admitted, 0);
  assert.equal(admitted, 20);
  assert.deepEqual(parent.decide('client-1', 1, at), {
    admitted: false, limit: 25, remaining: 0, resetMs: 60000, retryAfterMs: 60000, windowMs: 60000,
  });
  assert.equal(parent.count('client-1', at).count, 25);
  for (const a of answers) assert.equal(a.stats.resident, 1);
  parent.close();
});

test('dropped KeyedLimits are freed by the garbage collector, without close() or gc()', () => {
  // 3000 tables of 65536 keys hold 3 GB of cells if nothing frees them; the
  // addon reports each table's memory to V8, and the hot functions and `io`
  // release their shares when collected.
  const script = `
    const { KeyedLimit } = require(${JSON.stringify(path.join(__dirname, '..'))});
    (async () => {
      let peak = 0;
      for (let i = 0; i < 3000; i++) {
        const limit = new KeyedLimit({ kind: 'rate', limit: 5, periodMs: 1000 });
        limit.decide('k', 1, 1000);
        if (i % 100 === 99) await new Promise(setImmediate);
        peak = Math.max(peak, process.memoryUsage.rss());
      }
      console.log(JSON.stringify({ peakMb: Math.round(peak / 2 ** 20), gc: typeof gc }));
    })();
  `;
  const out = require('node:child_process').execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const { peakMb, gc } = JSON.parse(out);
  assert.equal(gc, 'undefined', 'the child cannot call gc()');
  assert.ok(peakMb < 1024, `peak RSS ${peakMb} MB`);
});

test('worker threads: each has its own KeyedLimit; on one shared file they count together', async (t) => {
  const { Worker } = require('node:worker_threads');
  const file = path.join(tmpDir(t), 'threads.sds');
  const main = KeyedLimit.shared(file, WINDOW, { capacity: 16 });
  assert.equal(main.decide('k', 1, 1000).remaining, 2);
  const script = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { KeyedLimit } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const shared = KeyedLimit.shared(workerData.file, workerData.rule, { capacity: 16 });
    const own = new KeyedLimit(workerData.rule, { capacity: 16 });
    const admitted = [1, 2, 3].map(() => shared.decide('k', 1, 1000).admitted);
    parentPort.postMessage({ admitted, own: own.decide('k', 1, 1000).remaining });
  `;
  const worker = new Worker(script, { eval: true, workerData: { file, rule: WINDOW } });
  const [answer] = await require('node:events').once(worker, 'message');
  assert.deepEqual(answer, { admitted: [true, true, false], own: 2 });
  assert.equal(main.count('k', 1000).count, 3);
  main.close();
});
