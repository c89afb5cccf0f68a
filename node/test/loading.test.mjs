// The package loads from ESM and from CommonJS, by path and by its own name,
// and both forms share one addon and the same classes.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import sds, { Client, Point, Entry, SlidingWindow, DowngradedError } from '../index.mjs';
import * as byName from 'sds-native';

const require = createRequire(import.meta.url);

test('ESM named and default exports are the CommonJS objects', () => {
  const cjs = require('../index.js');
  assert.equal(Client, cjs.Client);
  assert.equal(sds.Client, cjs.Client);
  for (const value of [Point, Entry, SlidingWindow, DowngradedError]) assert.equal(typeof value, 'function');
  assert.equal(byName.Client, cjs.Client);
  assert.equal(require('sds-native').Client, cjs.Client);
});

test('only the public API is exported: no addon internals, no benchmark hooks', () => {
  const cjs = require('../index.js');
  assert.deepEqual(Object.keys(cjs).sort(), ['AdminAgent', 'Client', 'ClusterSync', 'DowngradedError', 'Entry', 'ExpressRateLimitStore', 'FastifyRateLimitStore', 'KeyedLimit', 'Point', 'SlidingWindow', 'metrics', 'web']);
  assert.deepEqual(Object.keys(byName).filter((k) => k !== 'default').sort(), Object.keys(cjs).sort());
  // The package build leaves out the benchmark's hooks (cargo feature bench-hooks).
  const hot = new Client()._hot;
  assert.deepEqual(Object.keys(hot).sort(), ['enter', 'exitAbandoned', 'exitError', 'exitOk', 'io']);
});

test('an ESM client decides', () => {
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 0 });
  const entry = client.enter('p', { nowMs: 100000 });
  assert.equal(entry.downgraded, true);
  assert.equal(entry.reason, 'VISIT');
  assert.ok(entry.exit(100000));
});
