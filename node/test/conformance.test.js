'use strict';
// Runs every conformance/scenarios/*.json file through the public API, once
// with strategies as objects and once as JSON strings: both must decide the
// same as the Rust core.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client, SlidingWindow } = require('..');

const dir = path.join(__dirname, '..', '..', 'conformance', 'scenarios');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

function setStrategy(client, point, strategy, form) {
  if (strategy === null) return client.removeStrategy(point);
  return client.setStrategy(point, form === 'json' ? JSON.stringify(strategy) : strategy);
}

function word(entry) {
  return entry.reason ?? 'pass';
}

/** Checks that every key of `expected` has the same value in `actual`. */
function assertSubset(expected, actual, where) {
  for (const [key, value] of Object.entries(expected)) {
    assert.ok(key in actual, `${where}.${key}: no such stat`);
    if (value !== null && typeof value === 'object') assertSubset(value, actual[key], `${where}.${key}`);
    else assert.equal(actual[key], value, `${where}.${key}`);
  }
}

/**
 * An enter step's `waitMs`, as conformance/src/lib.rs checks it: absent, one
 * number (`repeat` 1), or one number per entry in order.
 */
function checkWaits(want, got) {
  if (want === undefined) return;
  if (typeof want === 'number') {
    assert.ok(got.length === 1 && got[0] === want, `waitMs: expected ${want}, got ${JSON.stringify(got)}`);
  } else {
    assert.ok(Array.isArray(want), `waitMs must be a number or a list, got ${JSON.stringify(want)}`);
    assert.deepEqual(got, want, 'waitMs');
  }
}

function runStep(client, open, defaultPoint, step, form) {
  const point = step.point ?? defaultPoint;
  switch (step.op) {
    case 'enter': {
      const repeat = step.repeat ?? 1;
      const tally = {};
      const waits = [];
      for (let i = 0; i < repeat; i++) {
        const entry = client.enter(point, { nowMs: step.at, pressureTest: step.pressure_test === true });
        tally[word(entry)] = (tally[word(entry)] ?? 0) + 1;
        waits.push(entry.waitMs);
        if (step.id === undefined) entry.exit(step.at);
        else (open[step.id] ??= []).push(entry);
      }
      const got = repeat === 1 ? Object.keys(tally)[0] : tally;
      assert.deepEqual(got, step.expect);
      checkWaits(step.waitMs, waits);
      break;
    }
    case 'exit': {
      assert.ok(open[step.id], `no open group ${step.id}`);
      for (const entry of open[step.id]) {
        if (step.outcome === 'error') entry.error(new Error('scenario'));
        entry.exit(step.at);
      }
      delete open[step.id];
      break;
    }
    case 'set_strategy': {
      let code;
      try {
        setStrategy(client, point, step.strategy, form);
      } catch (error) {
        code = error.code;
      }
      assert.equal(code, step.error);
      break;
    }
    case 'stats':
      assertSubset(step.expect, client.stats(point, step.at), 'stats');
      break;
    default:
      assert.fail(`unknown op ${step.op}`);
  }
}

test('the scenarios folder is found', () => {
  assert.ok(files.length >= 3, `only ${files.length} scenarios in ${dir}`);
});

for (const form of ['object', 'json']) {
  for (const file of files) {
    test(`${file} (strategies as ${form})`, () => {
      const scenario = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      const client = new Client({ capacity: 16 });
      const defaultPoint = scenario.point ?? 'p';
      if (scenario.strategy !== undefined) setStrategy(client, defaultPoint, scenario.strategy, form);
      const open = {};
      scenario.steps.forEach((step, i) => {
        try {
          runStep(client, open, defaultPoint, step, form);
        } catch (error) {
          error.message = `${file} step ${i} ${JSON.stringify(step)}: ${error.message}`;
          throw error;
        }
      });
    });
  }
}

// conformance/strategies.json: each case as JSON text and as the object
// JSON.parse makes of it, with one verdict, code and message.
const strategyCases = JSON.parse(fs.readFileSync(path.join(dir, '..', 'strategies.json'), 'utf8')).cases;

test('strategies.json is found', () => {
  assert.ok(strategyCases.length >= 10, `only ${strategyCases.length} strategy cases`);
});

for (const form of ['text', 'native']) {
  test(`strategies.json as ${form}`, () => {
    const defaults = new Client();
    defaults.setStrategy('p', {});
    const expectedDefaults = defaults.strategy('p');
    let ran = 0;
    for (const c of strategyCases) {
      if (c.forms && !c.forms.includes(form)) continue;
      ran += 1;
      const client = new Client({ capacity: 2 });
      const input = form === 'text' ? c.json : JSON.parse(c.json);
      let error;
      try {
        client.setStrategy('p', input);
      } catch (e) {
        error = e;
      }
      if (c.error === undefined) {
        assert.equal(error, undefined, `${c.name}: ${error && error.message}`);
        assert.deepEqual(client.strategy('p'), { ...expectedDefaults, ...c.expect }, c.name);
      } else {
        assert.ok(error, `${c.name}: accepted`);
        assert.equal(error.code, c.error, c.name);
        assert.equal(error.message, c.message, c.name);
        assert.equal(client.strategy('p'), null, `${c.name}: nothing set`);
      }
    }
    assert.ok(ran >= 10, `${ran} cases ran`);
  });
}

// conformance/windows.json: the standalone window through SlidingWindow,
// every step of every case. Counts (n, value) go in as BigInts, so 2^64 - 1
// is exact; times and window parameters as numbers (all below 2^53).
const windowsFile = path.join(dir, '..', 'windows.json');
const windowCases = JSON.parse(fs.readFileSync(windowsFile, 'utf8')).cases;
const WINDOW_READS = { sum: 'sum', bucket: 'bucket', last_whole_cycle: 'lastWholeCycle' };

/** An integer of the format (a number up to 2^53 or decimal text), as a BigInt. */
function windowInt(value, what) {
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return BigInt(value);
  assert.ok(Number.isSafeInteger(value) || value === 2 ** 53, `${what}: ${value} is no integer of the format`);
  assert.ok(value >= 0, `${what}: ${value} is negative`);
  return BigInt(value);
}

/** An integer of the format as a number, which must hold it exactly. */
function windowNumber(value, what) {
  const big = windowInt(value, what);
  assert.ok(big <= 2n ** 53n, `${what}: ${value} is above 2^53`);
  return Number(big);
}

/** Runs every step of the case; how many ran. */
function runWindowCase(c) {
  const w = new SlidingWindow({
    bucketMs: windowNumber(c.window.bucket_ms, 'bucket_ms'),
    buckets: windowNumber(c.window.buckets, 'buckets'),
    ring: windowNumber(c.window.ring, 'ring'),
  });
  for (const [i, step] of c.steps.entries()) {
    const where = `${windowsFile}: ${c.name}: step ${i} ${JSON.stringify(step)}`;
    const at = windowNumber(step.at, 'at');
    const check = (key, got, want) =>
      assert.equal(BigInt(got), windowInt(want, key), `${where}: ${key}: expected ${want}, got ${got}`);
    switch (step.op) {
      case 'add': {
        const tally = w.add(windowInt(step.n, 'n'), at);
        check('bucket', tally.bucket, step.expect.bucket);
        check('total', tally.total, step.expect.total);
        break;
      }
      case 'add_at': {
        const now = windowNumber(step.now, 'now');
        check('bucket', w.addAt(at, windowInt(step.n, 'n'), now), step.expect.bucket);
        check('total', w.sum(now), step.expect.total);
        break;
      }
      case 'set':
        w.set(windowInt(step.value, 'value'), at);
        break;
      case 'fetch_max':
        check(step.op, w.fetchMax(windowInt(step.value, 'value'), at), step.expect);
        break;
      case 'clear_next_cycle':
        w.clearNextCycle(at);
        break;
      default:
        assert.ok(step.op in WINDOW_READS, `${where}: unknown op ${step.op}`);
        check(step.op, w[WINDOW_READS[step.op]](at), step.expect);
    }
  }
  return c.steps.length;
}

for (const c of windowCases) {
  test(`windows.json: ${c.name}`, () => {
    runWindowCase(c);
  });
}

test('windows.json: every step runs here', () => {
  const ran = windowCases.reduce((sum, c) => sum + runWindowCase(c), 0);
  assert.ok(windowCases.length >= 10, `only ${windowCases.length} window cases`);
  const total = windowCases.reduce((sum, c) => sum + c.steps.length, 0);
  assert.ok(total >= 125, `only ${total} window steps in the file`);
  assert.equal(ran, total);
});
