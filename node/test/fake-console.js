'use strict';
// Starts tools/fake-sds-admin.py (the strict fake SDS console every
// language's tests use) and drives its control side. Not a test file.
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { threadsNamed } = require('../testing/threads.js');
const { until } = require('../testing/until.js');

const SCRIPT = path.join(__dirname, '..', '..', 'tools', 'fake-sds-admin.py');

/**
 * The fake console on a loopback port (a free one unless `port`); `close()`
 * ends it (stdin closed). With `tls` (a PKI of testing/redis-server.js's
 * makePki) it speaks only HTTPS with the PKI's server certificate, control
 * side included (called trusting the PKI's CA), and `url` is `https://`.
 * With `mutualTls` too it requires a client certificate of the PKI's CA
 * (the control side is called with the PKI's client certificate).
 */
async function startFakeConsole({ tls: pki, port: wanted, mutualTls = false } = {}) {
  const options = [
    ...(wanted === undefined ? [] : ['--port', String(wanted)]),
    ...(pki ? ['--tls-cert', pki.cert, '--tls-key', pki.key] : []),
    ...(pki && mutualTls ? ['--tls-client-ca', pki.ca] : []),
  ];
  // stdin is a pipe: the fake exits when it closes, also if this process dies.
  const child = spawn('python3', [SCRIPT, ...options], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fake-sds-admin exited with ${code}`)));
    child.stdout.on('data', (data) => {
      text += data;
      if (text.includes('\n')) resolve(Number(text.split('\n')[0]));
    });
  });
  const url = `${pki ? 'https' : 'http'}://127.0.0.1:${port}`;
  const ca = pki ? fs.readFileSync(pki.ca) : undefined;
  const clientCertificate = pki && mutualTls
    ? { cert: fs.readFileSync(pki.clientCert), key: fs.readFileSync(pki.clientKey) }
    : {};
  const call = (method, route, body) => new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = (pki ? https : http).request(url + route, {
      method,
      ca,
      ...clientCertificate,
      // A connection per call: a restarted fake on the same port gets no stale socket.
      agent: false,
      headers: payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`${route}: ${response.statusCode} ${text}`));
        else resolve(JSON.parse(text));
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
  return {
    url,
    port,
    // `extra`: `{ nullVersion: true }` makes the app's version null (the console on H2).
    setApp: (appGroupName, appName, strategies, extra = {}) =>
      call('POST', '/_fake/app', { appGroupName, appName, strategies, ...extra }),
    setMode: (modes) => call('POST', '/_fake/mode', modes),
    reset: () => call('POST', '/_fake/reset', {}),
    requests: () => call('GET', '/_fake/requests'),
    // A console in a long GC: connections are still accepted and queued,
    // and processed after thaw(). The control side does not answer meanwhile.
    freeze: () => process.kill(child.pid, 'SIGSTOP'),
    thaw: () => process.kill(child.pid, 'SIGCONT'),
    close() {
      const ended = child.exitCode !== null || child.signalCode !== null;
      // A frozen fake would never read the end of its stdin.
      if (!ended) child.kill('SIGCONT');
      child.stdin.end();
      return new Promise((resolve) => (ended ? resolve() : child.once('exit', resolve)));
    },
  };
}

/** How many threads of this process are named `sds-agent` (the agent's). */
function agentThreads() {
  return threadsNamed('sds-agent');
}

module.exports = { startFakeConsole, until, agentThreads };
