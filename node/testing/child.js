'use strict';
// A script run in a child Node process, for what only a process's end shows.
const { spawn } = require('node:child_process');

/**
 * Runs `source` with `node -e`, killed after `timeoutMs`: its exit code,
 * its standard output and how long it ran, in ms (stderr goes to ours).
 */
async function runScript(source, timeoutMs = 8000) {
  const start = Date.now();
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'], timeout: timeoutMs });
  let output = '';
  child.stdout.on('data', (data) => (output += data));
  const code = await new Promise((resolve) => child.once('close', resolve));
  return { code, output, ms: Date.now() - start };
}

module.exports = { runScript };
