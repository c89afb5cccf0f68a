'use strict';
// Runs every conformance/keyed/*.json scenario through KeyedLimit: on private
// tables with the rule as an object and as JSON text, and on shared files in
// a temp dir (a fresh file per table). Format: conformance/README.md "Keyed scenarios".
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KeyedLimit } = require('..');

const dir = path.join(__dirname, '..', '..', 'conformance', 'keyed');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** A step's key: text (a string) or bytes (a Buffer from `keyHex`). */
function keyOf(step) {
  if (step.keyHex !== undefined) return Buffer.from(step.keyHex, 'hex');
  assert.equal(typeof step.key, 'string', 'a step names key or keyHex');
  return step.key;
}

/** An integer of the format: a JSON number, or a decimal string. */
function int(value, fallback) {
  if (value === undefined) return fallback;
  return typeof value === 'string' ? Number(value) : value;
}

/** The format's spelling of a JS answer: `Infinity` is "never". */
function spelled(answer) {
  const out = { ...answer };
  if (out.retryAfterMs === Infinity) out.retryAfterMs = 'never';
  return out;
}

function assertSubset(expected, actual, where) {
  for (const [name, value] of Object.entries(expected)) {
    assert.ok(name in actual, `${where}: no field ${name}`);
    assert.deepEqual(actual[name], value, `${where}.${name}`);
  }
}

/** The call of `step` on `limit`: its answer (decision, count, bool...). */
function call(limit, step) {
  const at = int(step.at);
  switch (step.op) {
    case 'decide': return spelled(limit.decide(keyOf(step), int(step.cost, 1), at));
    case 'peek': return spelled(limit.peek(keyOf(step), at));
    case 'release': return limit.release(keyOf(step), int(step.units, 1));
    case 'reset': return limit.reset(keyOf(step));
    case 'reset_all': return limit.resetAll();
    case 'increment': return limit.increment(keyOf(step), int(step.units, 1), at);
    case 'decrement': return limit.decrement(keyOf(step), int(step.units, 1), at);
    case 'count': return limit.count(keyOf(step), at);
    case 'stats': return limit.stats();
    default: throw new Error(`unknown op ${step.op}`);
  }
}

function checkAnswer(step, answer, where) {
  if (typeof answer === 'object') assertSubset(step.expect, answer, where);
  else assert.equal(answer, step.expect, where);
}

function runStep(limit, step, open, where) {
  if (step.op === 'rule') {
    let error;
    try {
      open(step.rule, 16).close();
    } catch (e) {
      error = e;
    }
    if (step.error === undefined) {
      assert.equal(error, undefined, `${where}: the rule must build`);
    } else {
      assert.ok(error, `${where}: the rule must be refused`);
      assert.equal(error.code, step.error, `${where}: code`);
      assert.equal(error.message, step.message, `${where}: message`);
    }
    return;
  }
  const repeat = step.repeat ?? 1;
  if (step.error !== undefined) {
    assert.throws(() => call(limit, step), (e) => e.code === step.error, where);
    return;
  }
  const tally = { admitted: 0, refused: 0 };
  let answer;
  for (let i = 0; i < repeat; i++) {
    answer = call(limit, step);
    if (step.op === 'decide') tally[answer.admitted ? 'admitted' : 'refused'] += 1;
  }
  if (step.tally !== undefined) assert.deepEqual(tally, step.tally, `${where}: tally`);
  if (step.expect !== undefined) checkAnswer(step, answer, where);
}

function runScenario(file, open) {
  const scenario = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const limit = open(scenario.rule, int(scenario.capacity));
  try {
    scenario.steps.forEach((step, i) => runStep(limit, step, open, `${file} step ${i} (${step.op})`));
  } finally {
    limit.close();
  }
  return scenario.steps.length;
}

test('the keyed scenarios folder is found', () => {
  assert.ok(files.length >= 30, `only ${files.length} scenarios in ${dir}`);
});

for (const form of ['object', 'json']) {
  const open = (rule, capacity) => new KeyedLimit(form === 'json' ? JSON.stringify(rule) : rule, { capacity });
  test(`every keyed scenario on private tables, the rule as ${form}`, () => {
    let steps = 0;
    for (const file of files) steps += runScenario(file, open);
    assert.ok(steps >= 390, `only ${steps} steps ran`);
  });
}

test('every keyed scenario on shared files', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-keyed-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  let tables = 0;
  const open = (rule, capacity) => {
    tables += 1;
    return KeyedLimit.shared(path.join(tmp, `t${tables}`), rule, { capacity });
  };
  for (const file of files) runScenario(file, open);
  assert.ok(tables >= 33, `only ${tables} tables were files`);
});
