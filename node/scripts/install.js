'use strict';
// `npm install` hook: makes sure the addon loads. An installed tarball ships
// the addon built for its platform, so this only checks it. In the source
// tree (node/ of the sds-native repository, where Cargo.toml sits beside
// package.json) a missing or stale addon is built from the Rust sources.
const { existsSync } = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const inSourceTree = existsSync(path.join(root, 'Cargo.toml'));

function loads() {
  const { status } = spawnSync(process.execPath, ['-e', 'require("./lib/binding.js").load()'], {
    cwd: root,
    stdio: 'ignore',
  });
  return status === 0;
}

function build() {
  // The napi CLI is a devDependency, installed before this hook runs.
  const cli = require.resolve('@napi-rs/cli/package.json', { paths: [root] });
  const bin = path.join(path.dirname(cli), 'dist', 'cli.js');
  const args = [bin, 'build', '--platform', '--release', '--no-js', '--dts', 'lib/native.d.ts', '--', '--locked'];
  const { status } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  return status === 0;
}

if (inSourceTree) {
  // Cargo decides whether anything is stale: a no-op build takes a moment.
  if (!build()) {
    console.error('sds-native: building the addon failed (needs Rust and cargo)');
    process.exit(1);
  }
} else if (!loads()) {
  console.error(
    `sds-native: no working addon for ${process.platform}-${process.arch} in this package; ` +
      'build one from the sds-native repository (node/: npm ci) and pack it there.',
  );
  process.exit(1);
}
