'use strict';
// index.d.ts (hand-written) and lib/native.d.ts (generated) type-check, and
// test/typed-usage.ts uses the API as they declare it: `tsc --noEmit` with
// the TypeScript pinned in package.json.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { typeCheck } = require('../testing/tsc.js');

test('tsc --noEmit over index.d.ts and test/typed-usage.ts', { timeout: 120000 }, () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const { status, stdout, stderr } = spawnSync(process.execPath, [tsc, '--noEmit', '-p', __dirname], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
  });
  assert.equal(status, 0, `${stdout}${stderr}`);
});

test('index.d.ts brings Node\'s types itself: a project that names no `types` type-checks', { timeout: 120000 }, () => {
  // TypeScript 6 includes no @types package unless `types` names it; the
  // typings import node:events and node:http, so they reference Node's.
  const root = path.join(__dirname, '..');
  const usage = `import { AdminAgent, Client } from 'sds-native';\nconst client = new Client();\nconst agent: AdminAgent | null = null as AdminAgent | null;\nagent?.on('log', () => console.log(client));\n`;
  typeCheck('sds-no-types-', () => usage, {
    types: undefined,
    typeRoots: [path.join(root, 'node_modules', '@types')],
    paths: { 'sds-native': [path.join(root, 'index.d.ts')] },
  });
});
