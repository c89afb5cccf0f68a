'use strict';
// Starts tools/fake-sds-admin.py (the strict fake SDS console every
// language's tests use) and drives its control side. Not a test file.
const path = require('node:path');
const { spawn } = require('node:child_process');
const { threadsNamed } = require('../testing/threads.js');
const { until } = require('../testing/until.js');

const SCRIPT = path.join(__dirname, '..', '..', 'tools', 'fake-sds-admin.py');

/** The fake console on a free loopback port; `close()` ends it (stdin closed). */
async function startFakeConsole() {
  // stdin is a pipe: the fake exits when it closes, also if this process dies.
  const child = spawn('python3', [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fake-sds-admin exited with ${code}`)));
    child.stdout.on('data', (data) => {
      text += data;
      if (text.includes('\n')) resolve(Number(text.split('\n')[0]));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const call = async (method, route, body) => {
    const response = await fetch(url + route, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  return {
    url,
    setApp: (appGroupName, appName, strategies) => call('POST', '/_fake/app', { appGroupName, appName, strategies }),
    setMode: (modes) => call('POST', '/_fake/mode', modes),
    reset: () => call('POST', '/_fake/reset', {}),
    requests: () => call('GET', '/_fake/requests'),
    close() {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    },
  };
}

/** How many threads of this process are named `sds-agent` (the agent's). */
function agentThreads() {
  return threadsNamed('sds-agent');
}

module.exports = { startFakeConsole, until, agentThreads };
