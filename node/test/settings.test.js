'use strict';
// The services' options through the public API: every case of
// conformance/settings.json (the verdict of the agent's and the cluster's
// crates, the same in every binding), then what only JavaScript has (how
// the one conversion in node/src/settings.rs sorts its values). Nothing
// here needs a console or a Redis: both services start without reaching
// their servers.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('..');

const file = path.join(__dirname, '..', '..', 'conformance', 'settings.json');
const { cases } = JSON.parse(fs.readFileSync(file, 'utf8'));

/** A snake_case key as this binding spells it. */
const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());

// Cases an options object cannot express (one key twice): none today; a
// new one must be listed here with its reason.
const NOT_EXPRESSIBLE = new Map();

function connect(service, options) {
  const client = new Client();
  if (service === 'agent') return client.connectAdmin(options).on('log', () => {});
  return client.connectCluster(options);
}

/** The case's pairs as an options object, keys camelCased, in order. */
function optionsOf(settings, name) {
  const options = {};
  for (const [key, value] of settings) {
    assert.ok(!(camel(key) in options), `case "${name}" gives ${key} twice: list it in NOT_EXPRESSIBLE`);
    options[camel(key)] = value;
  }
  return options;
}

test('every case of conformance/settings.json gets its verdict through connectAdmin / connectCluster', () => {
  assert.ok(cases.length >= 41, `${cases.length} cases`);
  let ran = 0;
  for (const c of cases) {
    const name = `${c.service}: ${c.name}`;
    if (NOT_EXPRESSIBLE.has(name)) continue;
    const options = optionsOf(c.settings, name);
    if (c.error === undefined) {
      const service = connect(c.service, options);
      assert.equal(service.running, true, name);
      service.close();
    } else {
      const message = c.error.replace(/\{(\w+)\}/g, (_, key) => camel(key));
      assert.throws(() => connect(c.service, options), { code: 'SDS_INVALID_ARGUMENT', message }, name);
    }
    ran++;
  }
  assert.equal(ran + NOT_EXPRESSIBLE.size, cases.length);
});

/** connectCluster's refusal of `options` (a Redis URL and a point added). */
function clusterRefusal(options) {
  try {
    connect('cluster', { urls: 'redis://127.0.0.1:1', points: ['p'], ...options }).close();
  } catch (error) {
    assert.equal(error.code, 'SDS_INVALID_ARGUMENT');
    return error.message.replace(/^invalid cluster configuration: /, '');
  }
  return 'started';
}

test('numbers: a safe integer is an integer, bigints too; anything else a float, as the crates take them', () => {
  const ms = 'must be a whole number of milliseconds from 0 to 18446744073709551615';
  assert.equal(clusterRefusal({ syncMs: 50n }), 'started');
  assert.equal(clusterRefusal({ timeoutMs: 2 ** 53 }), 'started', 'beyond 2^53 an integral number is still whole ms');
  assert.equal(clusterRefusal({ timeoutMs: -0 }), 'sync_ms and timeout_ms must be at least 1');
  assert.equal(clusterRefusal({ timeoutMs: 2n ** 64n }), `timeoutMs ${ms}, not 18446744073709551616`);
  assert.equal(clusterRefusal({ timeoutMs: 2 ** 64 }), `timeoutMs ${ms}, not 1.8446744073709552e19`);
  assert.equal(clusterRefusal({ timeoutMs: 0n }), 'sync_ms and timeout_ms must be at least 1');
  assert.equal(clusterRefusal({ timeoutMs: 2n ** 127n - 1n }), `timeoutMs ${ms}, not ${2n ** 127n - 1n}`);
  assert.equal(clusterRefusal({ timeoutMs: -(2n ** 127n) }), `timeoutMs ${ms}, not -1.7014118346046923e38`);
  assert.equal(clusterRefusal({ timeoutMs: -(2n ** 200n) }), `timeoutMs ${ms}, not -1.6069380442589903e60`);
  assert.equal(clusterRefusal({ timeoutMs: NaN }), `timeoutMs ${ms}, not NaN`);
  const seconds = 'must be a finite number of seconds, at least 0';
  assert.equal(clusterRefusal({ timeout: Infinity }), `timeout ${seconds}, not inf`);
  assert.equal(clusterRefusal({ maxBackoff: 2n ** 300n }), 'started', 'a huge number of seconds saturates');
  assert.equal(clusterRefusal({ syncInterval: 0.0005 }), 'started');
});

test('values of no setting\'s type are named by their constructor; undefined, null and holes are null', () => {
  const notText = 'points must be text or a list of text, not';
  assert.equal(clusterRefusal({ points: new Set(['a']) }), `${notText} a value of type Set`);
  assert.equal(clusterRefusal({ points: { a: 1 } }), `${notText} a value of type Object`);
  assert.equal(clusterRefusal({ points: Object.create(null) }), `${notText} a value of type object`);
  assert.equal(clusterRefusal({ points: new (class Points {})() }), `${notText} a value of type Points`);
  assert.equal(clusterRefusal({ points: new String('p') }), `${notText} a value of type String`);
  assert.equal(clusterRefusal({ points: () => ['p'] }), `${notText} a value of type function`);
  assert.equal(clusterRefusal({ points: Symbol('p') }), `${notText} a value of type symbol`);
  assert.equal(clusterRefusal({ points: ['a', , 'b'] }), 'points[1] must be text, not null'); // eslint-disable-line no-sparse-arrays
  assert.equal(clusterRefusal({ points: ['a', undefined] }), 'points[1] must be text, not null');
  assert.equal(clusterRefusal({ points: [['a']] }), 'points[0] must be text, not a list');
  assert.equal(clusterRefusal({ keyPrefix: undefined, redisCluster: null, tlsCaFile: undefined }), 'started');
});

test('the options\' own enumerable string keys are the settings; a lone surrogate is refused', () => {
  // Inherited and symbol keys are no settings: here no URL was given.
  const inherited = Object.assign(Object.create({ urls: 'redis://127.0.0.1:1' }), { points: 'p' });
  assert.throws(() => connect('cluster', inherited), { message: 'invalid cluster configuration: urls: at least one Redis URL is needed' });
  const options = { urls: 'redis://127.0.0.1:1', [Symbol('x')]: 1 };
  Object.defineProperty(options, 'hidden', { value: 1, enumerable: false });
  Object.defineProperty(options, 'points', { get: () => ['p'], enumerable: true });
  const cluster = connect('cluster', options);
  assert.equal(cluster.status().points, 1, 'a getter is read');
  cluster.close();
  // A lone surrogate has no UTF-8 form: replaced, '\ud800' and '\ufffd' would name one point.
  assert.equal(clusterRefusal({ points: ['a', '\ud800'] }), 'points[1] must be well-formed UTF-16, got a lone surrogate U+D800');
  assert.throws(() => connect('cluster', { urls: 'redis://127.0.0.1:1', points: 'p', keyPrefix: '\udfff' }),
    { code: 'SDS_INVALID_ARGUMENT', message: 'keyPrefix must be well-formed UTF-16, got a lone surrogate U+DFFF' });
  // A getter that throws: its error is what the call throws.
  const throwing = { get urls() { throw new Error('no URL today'); } };
  assert.throws(() => connect('cluster', throwing), { message: 'no URL today' });
});
