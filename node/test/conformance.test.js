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

function runStep(client, open, defaultPoint, step, form) {
  const point = step.point ?? defaultPoint;
  switch (step.op) {
    case 'enter': {
      const repeat = step.repeat ?? 1;
      const tally = {};
      for (let i = 0; i < repeat; i++) {
        const entry = client.enter(point, { nowMs: step.at, pressureTest: step.pressure_test === true });
        tally[word(entry)] = (tally[word(entry)] ?? 0) + 1;
        if (step.id === undefined) entry.exit(step.at);
        else (open[step.id] ??= []).push(entry);
      }
      const got = repeat === 1 ? Object.keys(tally)[0] : tally;
      assert.deepEqual(got, step.expect);
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
// which has add, sum, bucket and lastWholeCycle. A case stops at the first
// step it cannot express: another operation (set, fetch_max,
// clear_next_cycle, add_at), or an n that no JavaScript number holds exactly
// (2^64 - 1 is not a double).
const windowsFile = path.join(dir, '..', 'windows.json');
const windowCases = JSON.parse(fs.readFileSync(windowsFile, 'utf8')).cases;
const WINDOW_READS = { sum: 'sum', bucket: 'bucket', last_whole_cycle: 'lastWholeCycle' };
const OTHER_WINDOW_OPS = ['set', 'fetch_max', 'clear_next_cycle', 'add_at'];

/** An integer of the format (a number up to 2^53 or decimal text), as a BigInt. */
function windowInt(value, what) {
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return BigInt(value);
  assert.ok(Number.isSafeInteger(value) || value === 2 ** 53, `${what}: ${value} is no integer of the format`);
  assert.ok(value >= 0, `${what}: ${value} is negative`);
  return BigInt(value);
}

/** `v` as the number the API takes, or undefined when no number holds it exactly. */
function exactNumber(v) {
  const n = Number(v);
  return BigInt(n) === v ? n : undefined;
}

/** Runs the case's steps up to the first this surface cannot express; how many ran. */
function runWindowCase(c) {
  const int = (v, what) => exactNumber(windowInt(v, what));
  const w = new SlidingWindow({
    bucketMs: int(c.window.bucket_ms, 'bucket_ms'),
    buckets: int(c.window.buckets, 'buckets'),
    ring: int(c.window.ring, 'ring'),
  });
  for (const [i, step] of c.steps.entries()) {
    const where = `${windowsFile}: ${c.name}: step ${i} ${JSON.stringify(step)}`;
    const at = int(step.at, 'at');
    const check = (key, got, want) =>
      assert.equal(BigInt(got), windowInt(want, key), `${where}: ${key}: expected ${want}, got ${got}`);
    if (step.op === 'add') {
      const n = int(step.n, 'n');
      if (n === undefined) return i;
      const tally = w.add(n, at);
      check('bucket', tally.bucket, step.expect.bucket);
      check('total', tally.total, step.expect.total);
    } else if (step.op in WINDOW_READS) {
      check(step.op, w[WINDOW_READS[step.op]](at), step.expect);
    } else {
      assert.ok(OTHER_WINDOW_OPS.includes(step.op), `${where}: unknown op ${step.op}`);
      return i;
    }
  }
  return c.steps.length;
}

for (const c of windowCases) {
  test(`windows.json: ${c.name}`, () => {
    runWindowCase(c);
  });
}

test('windows.json: most steps run here', () => {
  const ran = windowCases.reduce((sum, c) => sum + runWindowCase(c), 0);
  assert.ok(windowCases.length >= 10 && ran >= 80, `only ${ran} window steps ran`);
});
