'use strict';
// index.d.ts (hand-written) and lib/native.d.ts (generated) type-check, and
// test/typed-usage.ts uses the API as they declare it: `tsc --noEmit` with
// the TypeScript pinned in package.json.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('tsc --noEmit over index.d.ts and test/typed-usage.ts', { timeout: 120000 }, () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const { status, stdout, stderr } = spawnSync(process.execPath, [tsc, '--noEmit', '-p', __dirname], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
  });
  assert.equal(status, 0, `${stdout}${stderr}`);
});
