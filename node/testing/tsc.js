'use strict';
// `tsc --noEmit` over a TypeScript file written to a temporary directory:
// the typings tests' check that a user's code type-checks as they declare.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/**
 * Type-checks usage.ts in a new temporary directory named from `prefix`
 * (removed afterwards): `write(dir)` returns its text, having added to the
 * directory whatever it needs. The compiler options: strict, ES2022 with
 * Node's module resolution and Node's types, `options` on top. Fails with
 * tsc's output (the TypeScript package.json pins) unless it passes.
 */
function typeCheck(prefix, write, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    fs.writeFileSync(path.join(dir, 'usage.ts'), write(dir));
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
        ...options,
      },
      files: ['usage.ts'],
    }));
    const tsc = require.resolve('typescript/bin/tsc');
    const { status, stdout, stderr } = spawnSync(process.execPath, [tsc, '--noEmit', '-p', dir], { encoding: 'utf8' });
    assert.equal(status, 0, `${stdout}${stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { typeCheck };
