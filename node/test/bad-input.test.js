'use strict';
// Every bad input throws an Error whose .code is from the core's table and
// whose message names what was wrong, and changes nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, SlidingWindow, DowngradedError } = require('..');
const { native } = require('../lib/native.js');

const CODES = new Set(native.errorCodes().all);
const BAD_TIME = /^nowMs: time must be a whole number of ms within 0\.\.2\^64$/;
const T = 100000;

/** Asserts `fn` throws an SDS error with `code` and a message matching `names`. */
function throwsSds(fn, code, names) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof Error, 'an Error');
    assert.equal(error.code, code, `code of "${error.message}"`);
    assert.ok(CODES.has(error.code), `${error.code} is in the core's table`);
    if (names) assert.match(error.message, names);
    return true;
  });
}

/** A client whose point p admits one visit per window, to see that state stays. */
function guarded() {
  const client = new Client({ capacity: 4 });
  client.setStrategy('p', { visitThreshold: 1 });
  return client;
}

function assertUnchanged(client) {
  assert.deepEqual(client.stats('p', T), {
    visit: 0, exception: 0, timeout: 0, downgrade: 0, concurrent: 0,
    adaptiveLimit: 0, adaptiveMinRttUs: 0, adaptiveRttUs: 0, adaptiveLongRttUs: 0,
    lastCycle: { visitNum: 0, exceptionNum: 0, timeoutNum: 0, downgradeNum: 0, concurrentNum: 0 },
  });
  // The old strategy still decides: one pass, then VISIT.
  assert.equal(client.enter('p', { nowMs: T }).reason, null);
  assert.equal(client.enter('p', { nowMs: T }).reason, 'VISIT');
}

test('Client options', () => {
  throwsSds(() => new Client('big'), 'SDS_INVALID_ARGUMENT', /Client option must be an object/);
  throwsSds(() => new Client({ cap: 1 }), 'SDS_INVALID_ARGUMENT', /"cap"/);
  throwsSds(() => new Client({ capacity: '8' }), 'SDS_INVALID_ARGUMENT', /capacity/);
  for (const bad of [1.5, NaN, null, 8n]) {
    throwsSds(() => new Client({ capacity: bad }), 'SDS_INVALID_ARGUMENT', /^capacity must be an integer$/);
  }
  // Every whole number is the core's verdict, as in Python, Java and C.
  for (const bad of [-1, 0, -(2 ** 70), 2 ** 20 + 1, 2 ** 70, Infinity, -Infinity]) {
    throwsSds(() => new Client({ capacity: bad }), 'SDS_INVALID_CAPACITY', /^table capacity must be within 1\.\.=1048576$/);
  }
  assert.equal(new Client().capacity, 1024);
});

test('setStrategy: wrong types, unknown keys, non-integers, broken rules', () => {
  const client = guarded();
  const cases = [
    [() => client.setStrategy(42, {}), 'SDS_INVALID_ARGUMENT', /point name must be a string/],
    [() => client.setStrategy(undefined, {}), 'SDS_INVALID_ARGUMENT', /point name/],
    [() => client.setStrategy('p'), 'SDS_INVALID_ARGUMENT', /strategy must be/],
    [() => client.setStrategy('p', null), 'SDS_INVALID_ARGUMENT', /strategy must be/],
    [() => client.setStrategy('p', [1]), 'SDS_INVALID_ARGUMENT', /strategy must be/],
    [() => client.setStrategy('p', 10), 'SDS_INVALID_ARGUMENT', /strategy must be/],
    [() => client.setStrategy('p', { visitThresold: 5 }), 'SDS_UNKNOWN_FIELD', /visitThresold/],
    [() => client.setStrategy('p', { visitThreshold: 1.5 }), 'SDS_INVALID_STRATEGY', /visitThreshold must be an integer/],
    [() => client.setStrategy('p', { visitThreshold: '10' }), 'SDS_INVALID_STRATEGY', /visitThreshold/],
    [() => client.setStrategy('p', { visitThreshold: NaN }), 'SDS_INVALID_STRATEGY', /visitThreshold/],
    [() => client.setStrategy('p', { visitThreshold: 2 ** 64 }), 'SDS_INVALID_STRATEGY', /visitThreshold is out of the 64-bit/],
    [() => client.setStrategy('p', { visitThreshold: 10n }), 'SDS_INVALID_STRATEGY', /visitThreshold must be an integer/],
    [() => client.setStrategy('p', { visitThreshold: new Number(10) }), 'SDS_INVALID_STRATEGY', /visitThreshold must be an integer/],
    [() => client.setStrategy('p', { visitThreshold: 100, delayTime: 5 }), 'SDS_INVALID_STRATEGY', /delayTime/],
    [() => client.setStrategy('p', { delayTime: 10000, retryInterval: 20000 }), 'SDS_INVALID_STRATEGY', /retryInterval/],
    [() => client.setStrategy('p', { downgradeRate: 101 }), 'SDS_INVALID_STRATEGY', /downgradeRate/],
    [() => client.setStrategy('p', { pressureTestDowngrade: 2 }), 'SDS_INVALID_STRATEGY', /pressureTestDowngrade/],
    [() => client.setStrategy('p', '{"visitThreshold": 5'), 'SDS_INVALID_JSON', /byte/],
    [() => client.setStrategy('p', '[]'), 'SDS_INVALID_JSON'],
    [() => client.setStrategy('p', ''), 'SDS_INVALID_JSON'],
    [() => client.setStrategy('p', '{"visitThreshold": "5"}'), 'SDS_INVALID_STRATEGY', /visitThreshold/],
    [() => client.setStrategy('p', '{"visitThresold": 5}'), 'SDS_UNKNOWN_FIELD', /visitThresold/],
    [() => client.setStrategy('p', '{"delayTime": 9999}'), 'SDS_INVALID_STRATEGY', /delayTime/],
    [() => client.setStrategy('', { visitThreshold: 1 }), 'SDS_EMPTY_NAME'],
    [() => client.setStrategy('x'.repeat(257), { visitThreshold: 1 }), 'SDS_NAME_TOO_LONG', /256/],
    [() => client.removeStrategy(7), 'SDS_INVALID_ARGUMENT', /point name/],
  ];
  for (const [fn, code, names] of cases) throwsSds(fn, code, names);
  assertUnchanged(client);
});

test('the point key of SDS strategy objects is skipped', () => {
  const client = new Client();
  client.setStrategy('p', { point: 'p', visitThreshold: 0 });
  client.setStrategy('q', '{"point": "q", "visitThreshold": 0}');
  assert.equal(client.enter('p', { nowMs: T }).reason, 'VISIT');
  assert.equal(client.enter('q', { nowMs: T }).reason, 'VISIT');
});

test('enter: names, options and times', () => {
  const client = guarded();
  const cases = [
    [() => client.enter(), 'SDS_INVALID_ARGUMENT', /point name must be a string, got undefined/],
    [() => client.enter(12), 'SDS_INVALID_ARGUMENT', /point name/],
    [() => client.enter(''), 'SDS_EMPTY_NAME'],
    [() => client.enter('é'.repeat(129)), 'SDS_NAME_TOO_LONG'],
    [() => client.enter('p', 'now'), 'SDS_INVALID_ARGUMENT', /enter option must be an object/],
    [() => client.enter('p', { now: T }), 'SDS_INVALID_ARGUMENT', /"now"/],
    [() => client.enter('p', { pressureTest: 'yes' }), 'SDS_INVALID_ARGUMENT', /pressureTest/],
    [() => client.point('p').enter({ nowMs: -1 }), 'SDS_INVALID_ARGUMENT', /nowMs/],
  ];
  for (const bad of [-1, -0.5, 1.5, NaN, Infinity, 2 ** 64, '100000', null, true, 100000n, [100000], { valueOf: () => 100000 }]) {
    cases.push([() => client.enter('p', { nowMs: bad }), 'SDS_INVALID_ARGUMENT', BAD_TIME]);
    cases.push([() => client.point('p').enter({ nowMs: bad }), 'SDS_INVALID_ARGUMENT', BAD_TIME]);
    cases.push([() => client.stats('p', bad), 'SDS_INVALID_ARGUMENT', BAD_TIME]);
    cases.push([() => new SlidingWindow().sum(bad), 'SDS_INVALID_ARGUMENT', BAD_TIME]);
  }
  for (const [fn, code, names] of cases) throwsSds(fn, code, names);
  assert.throws(() => client.point(5), { code: 'SDS_INVALID_ARGUMENT' });
  assertUnchanged(client);
});

test('a full table refuses new names and keeps the old ones', () => {
  const client = new Client({ capacity: 2 });
  client.setStrategy('a', { visitThreshold: 0 });
  client.enter('b', { nowMs: T }).exit(T);
  throwsSds(() => client.enter('c', { nowMs: T }), 'SDS_TABLE_FULL', /^point table is full \(capacity 2\)$/);
  throwsSds(() => client.setStrategy('c', {}), 'SDS_TABLE_FULL');
  throwsSds(() => client.point('c'), 'SDS_TABLE_FULL');
  assert.equal(client.enter('a', { nowMs: T }).reason, 'VISIT');
  assert.equal(client.stats('b', T).visit, 1);
  assert.equal(client.stats('c', T).visit, 0);
});

test('exit: a bad time leaves the entry open; a second exit does nothing', () => {
  const client = new Client();
  client.setStrategy('p', { concurrentThreshold: 1 });
  const entry = client.enter('p', { nowMs: T });
  throwsSds(() => entry.exit(-5), 'SDS_INVALID_ARGUMENT', BAD_TIME);
  throwsSds(() => entry.exit('later'), 'SDS_INVALID_ARGUMENT', BAD_TIME);
  throwsSds(() => entry.exit(null), 'SDS_INVALID_ARGUMENT', BAD_TIME);
  assert.equal(entry.exited, false);
  assert.equal(client.stats('p', T).concurrent, 1);
  assert.equal(entry.exit(T + 1), true);
  assert.equal(entry.exit(T + 2), false);
  assert.equal(client.stats('p', T).concurrent, 0);
  // Only one permit came back: the next two entries are pass, CONCURRENT.
  const a = client.enter('p', { nowMs: T });
  assert.equal(a.reason, null);
  assert.equal(client.enter('p', { nowMs: T }).reason, 'CONCURRENT');
  a.exit(T);
});

test('error(): null, undefined and the downgrade error count nothing; anything else counts', () => {
  const ignored = [null, undefined, new DowngradedError('p', 'VISIT')];
  for (const [i, err] of ignored.entries()) {
    const client = new Client();
    client.enter('p', { nowMs: T }).error(err).exit(T);
    assert.equal(client.stats('p', T).exception, 0, `error(${i === 2 ? 'DowngradedError' : err})`);
  }
  const none = new Client();
  none.enter('p', { nowMs: T }).error().exit(T);
  assert.equal(none.stats('p', T).exception, 0, 'error()');
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const counted = [new Error('x'), 0, '', false, { code: 'SDS_DOWNGRADED' }, proxy];
  for (const [i, err] of counted.entries()) {
    const client = new Client();
    client.enter('p', { nowMs: T }).error(err).exit(T);
    assert.equal(client.stats('p', T).exception, 1, `counted[${i}]`);
  }
});

test('error() after exit counts nothing', () => {
  const client = new Client();
  const entry = client.enter('p', { nowMs: T });
  entry.exit(T);
  entry.error(new Error('late'));
  assert.equal(client.stats('p', T).exception, 0);
});

test('run and stats: wrong arguments throw before anything is counted', () => {
  const client = guarded();
  throwsSds(() => client.run('p'), 'SDS_INVALID_ARGUMENT', /fn must be a function/);
  throwsSds(() => client.run('p', () => 1, 'fallback'), 'SDS_INVALID_ARGUMENT', /fallback must be a function/);
  throwsSds(() => client.point('p').run(null), 'SDS_INVALID_ARGUMENT', /fn/);
  throwsSds(() => client.stats('p', -1), 'SDS_INVALID_ARGUMENT', /nowMs/);
  throwsSds(() => client.stats(null), 'SDS_INVALID_ARGUMENT', /point name/);
  throwsSds(() => client.point('p').stats(0.5), 'SDS_INVALID_ARGUMENT', /nowMs/);
  assertUnchanged(client);
});

test('SlidingWindow: bad parameters and inputs', () => {
  throwsSds(() => new SlidingWindow({ bucketMs: 0 }), 'SDS_INVALID_WINDOW', /bucket width/);
  throwsSds(() => new SlidingWindow({ buckets: 0 }), 'SDS_INVALID_WINDOW', /bucket/);
  throwsSds(() => new SlidingWindow({ buckets: 10, ring: 19 }), 'SDS_INVALID_WINDOW', /ring/);
  throwsSds(() => new SlidingWindow({ buckets: 10, ring: 70000 }), 'SDS_INVALID_WINDOW', /65536/);
  throwsSds(() => new SlidingWindow({ bucketMs: -1 }), 'SDS_INVALID_ARGUMENT', /bucketMs/);
  throwsSds(() => new SlidingWindow({ width: 5 }), 'SDS_INVALID_ARGUMENT', /"width"/);
  const w = new SlidingWindow();
  throwsSds(() => w.add(-1, T), 'SDS_INVALID_ARGUMENT', /\bn\b/);
  throwsSds(() => w.add(1.5, T), 'SDS_INVALID_ARGUMENT', /\bn\b/);
  throwsSds(() => w.increment(NaN), 'SDS_INVALID_ARGUMENT', /nowMs/);
  throwsSds(() => w.sum('x'), 'SDS_INVALID_ARGUMENT', /nowMs/);
  assert.equal(w.sum(T), 0);
});

test('the raw addon refuses forged keys and entries', () => {
  const table = new native.NativeTable(2);
  const hot = table.hotPath();
  const call = (fn, ...numbers) => { hot.io.set(numbers); return () => fn(); };
  throwsSds(call(hot.enter, 2, T), 'SDS_INVALID_ENTRY'); // point 1 was never created
  throwsSds(call(hot.enter, 0, 1.5), 'SDS_INVALID_ARGUMENT', /nowMs/);
  throwsSds(call(hot.enter, 0, NaN), 'SDS_INVALID_ARGUMENT', /nowMs/);
  throwsSds(call(hot.enter, -2, T), 'SDS_INVALID_ARGUMENT', /key/);
  throwsSds(call(hot.exitOk, -3, T, T), 'SDS_INVALID_ENTRY');
  throwsSds(call(hot.exitError, 2 ** 50, T, T), 'SDS_INVALID_ENTRY');
  throwsSds(call(hot.exitOk, 0, -5, T), 'SDS_INVALID_ARGUMENT', /startMs/);
  const id = table.insert('p');
  hot.io.set([2 * id, T]);
  hot.enter();
  assert.equal(hot.io[1], T);
  hot.io.set([hot.io[0], T, T]);
  hot.exitOk();
  assert.equal(table.stats('p', T).visit, 1);
  assert.equal(table.stats('p', T).concurrent, 0);
});

test('hot-path functions keep their table alive after the client is gone', () => {
  const script = `
    const { native } = require(${JSON.stringify(require('node:path').join(__dirname, '..', 'lib', 'native.js'))});
    function orphan() {
      const table = new native.NativeTable(1);
      const id = table.insert('p');
      return { hot: table.hotPath(), id };
    }
    const { hot, id } = orphan();
    for (let i = 0; i < 5; i++) { new native.NativeTable(1000); global.gc(); }
    hot.io.set([2 * id, ${T}]);
    hot.enter();
    hot.io.set([hot.io[0], ${T}, ${T}]);
    hot.exitOk();
    console.log(hot.io[1]);
  `;
  const out = require('node:child_process').execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim(), String(T));
});

test('setStrategy takes plain objects and JSON text only', () => {
  const client = guarded();
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  class Settings { constructor() { this.visitThreshold = 5; } }
  const refused = [new Map([['visitThreshold', 5]]), new Date(), [], new Settings(), new String('{}'),
    new Number(3), proxy, () => 1, Symbol('s'), 5n];
  for (const bad of refused) {
    throwsSds(() => client.setStrategy('p', bad), 'SDS_INVALID_ARGUMENT', /strategy must be a plain object or a JSON string/);
  }
  assertUnchanged(client);
  // Plain: a literal, a null prototype, an object of another realm.
  const bare = Object.create(null);
  bare.visitThreshold = 0;
  const foreign = require('node:vm').runInNewContext('({ visitThreshold: 0 })');
  for (const [name, strategy] of [['literal', { visitThreshold: 0 }], ['bare', bare], ['foreign', foreign]]) {
    client.setStrategy(name, strategy);
    assert.equal(client.enter(name, { nowMs: T }).reason, 'VISIT', name);
  }
});

test('names that are not well-formed UTF-16 are refused everywhere', () => {
  const client = guarded();
  client.enter('\ufffd', { nowMs: T }).exit(T);
  for (const bad of ['\ud800', '\udc00', 'a\ud83d', '\ude00b', '\udc00\ud800']) {
    const calls = [
      () => client.enter(bad, { nowMs: T }),
      () => client.point(bad),
      () => client.run(bad, () => 1),
      () => client.setStrategy(bad, { visitThreshold: 1 }),
      () => client.setStrategy(bad, '{"visitThreshold": 1}'),
      () => client.removeStrategy(bad),
      () => client.stats(bad, T),
      () => client._table.insert(bad),
    ];
    for (const call of calls) throwsSds(call, 'SDS_INVALID_ARGUMENT', /point name must be well-formed UTF-16, got a lone surrogate/);
  }
  // U+FFFD, a pair and a NUL stay names of their own.
  client.enter('\ud83d\ude00', { nowMs: T }).exit(T);
  client.enter('x\0', { nowMs: T }).exit(T);
  assert.equal(client.stats('\ufffd', T).visit, 1);
  assert.equal(client.stats('\ud83d\ude00', T).visit, 1);
  assert.equal(client._table.pointCount, 4); // p, U+FFFD, the emoji, x NUL
});

test('low-level functions refuse wrong types with SDS_INVALID_ARGUMENT', () => {
  const table = new native.NativeTable(4);
  const window = new native.NativeWindow(1000, 10, 30);
  const cases = [
    [() => new native.NativeTable('8'), /^capacity must be an integer$/],
    [() => new native.NativeTable(), /^capacity must be an integer$/],
    [() => table.insert(5), /point name must be a string, got a number/],
    [() => table.setStrategy('p', '{"point":"\ud800"}'), /strategy JSON must be well-formed UTF-16/],
    [() => table.setStrategy('p', 5), /strategy must be an object, got a number/],
    [() => table.setStrategy(null, {}), /point name must be a string, got null/],
    [() => table.removeStrategy(), /point name/],
    [() => table.stats(0, T), /point name must be a string, got a number/],
    [() => table.stats('p', '1'), BAD_TIME],
    [() => table.stats('p', 1n), BAD_TIME],
    [() => new native.NativeWindow('1000', 10, 30), /^bucketMs must be a non-negative integer$/],
    [() => window.add('1', T), /^n must be a non-negative integer$/],
    [() => window.sum(null), BAD_TIME],
    [() => window.bucket(true), BAD_TIME],
    [() => window.lastWholeCycle(Symbol('t')), BAD_TIME],
  ];
  for (const [fn, names] of cases) throwsSds(fn, 'SDS_INVALID_ARGUMENT', names);
  assert.equal(table.pointCount, 0);
});
