'use strict';
// What a user gets from npm: pack the package, install the tarball into an
// empty project under build/, and load it there with require and import.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const packageDir = path.join(__dirname, '..');
const scratch = path.join(packageDir, '..', 'build', 'node-scratch');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args, cwd) {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

test('the packed tarball installs into an empty project and loads from CJS and ESM', { timeout: 180000 }, () => {
  fs.rmSync(scratch, { recursive: true, force: true });
  const app = path.join(scratch, 'app');
  fs.mkdirSync(app, { recursive: true });

  const [packed] = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', scratch], packageDir));
  const files = packed.files.map((f) => f.path);
  for (const wanted of ['index.js', 'index.mjs', 'index.d.ts', 'lib/client.js', 'scripts/install.js']) {
    assert.ok(files.includes(wanted), `${wanted} is packed`);
  }
  assert.ok(files.some((f) => /^sds-native\..+\.node$/.test(f)), 'the addon is packed');
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'no sources or tests');

  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true }));
  run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(scratch, packed.filename)], app);

  fs.writeFileSync(path.join(app, 'use.cjs'), `
    const { Client } = require('sds-native');
    const c = new Client();
    c.setStrategy('p', { visitThreshold: 1 });
    const a = c.enter('p', { nowMs: 100000 }); a.exit(100000);
    const b = c.enter('p', { nowMs: 100000 }); b.exit(100000);
    console.log(require.resolve('sds-native'), a.reason, b.reason, c.run('q', () => 'ran'));
  `);
  fs.writeFileSync(path.join(app, 'use.mjs'), `
    import { Client } from 'sds-native';
    import sds from 'sds-native';
    const c = new Client();
    c.setStrategy('p', '{"visitThreshold": 0}');
    console.log(sds.Client === Client, c.enter('p').reason);
  `);
  const cjs = run(process.execPath, ['use.cjs'], app).trim().split(' ');
  assert.ok(cjs[0].startsWith(path.join(app, 'node_modules', 'sds-native')), cjs[0]);
  assert.deepEqual(cjs.slice(1), ['null', 'VISIT', 'ran']);
  assert.equal(run(process.execPath, ['use.mjs'], app).trim(), 'true VISIT');
});
