'use strict';
// A throwaway redis-server for the tests and the benchmarks: the
// distribution's binary (`make servers` installs it) on a free loopback port
// (or a given one, to restart a stopped server where its clients expect it),
// with its own temporary directory and no persistence. stop() ends it and
// removes the directory; so do an exit of this process, Ctrl-C and SIGTERM.
// With `tls` (a PKI of makePki) it speaks only TLS.
// Outside test/, so `node --test test/` does not run it as a test file.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');

const PKI_SCRIPT = path.join(__dirname, '..', '..', 'tools', 'test-pki.sh');

const START_TIMEOUT_MS = 10_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A throwaway PKI in `dir` (tools/test-pki.sh; openssl from `make servers`):
 * the paths of its PEM files. Each call makes a CA of its own, so two PKIs
 * never trust each other's certificates.
 */
function makePki(dir) {
  execFileSync('bash', [PKI_SCRIPT, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  const file = (name) => path.join(dir, name);
  return {
    ca: file('ca.pem'),
    cert: file('server-cert.pem'),
    key: file('server-key.pem'),
    clientCert: file('client-cert.pem'),
    clientKey: file('client-key.pem'),
  };
}

/** The options of a TLS client (node:tls, ioredis) trusting `pki`'s CA and showing its client certificate. */
function tlsClientOptions(pki) {
  return {
    ca: fs.readFileSync(pki.ca),
    cert: fs.readFileSync(pki.clientCert),
    key: fs.readFileSync(pki.clientKey),
  };
}

function answersPing(port, pki) {
  return new Promise((resolve) => {
    const socket = pki
      ? tls.connect({ port, host: '127.0.0.1', ...tlsClientOptions(pki) })
      : net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once(pki ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

/** The arguments that make redis-server listen on `port`, only with TLS when `pki` is given. */
function listenArguments(port, pki, mutualTls) {
  if (!pki) return ['--port', String(port)];
  return ['--port', '0', '--tls-port', String(port), '--tls-cert-file', pki.cert, '--tls-key-file', pki.key,
    '--tls-ca-cert-file', pki.ca, '--tls-auth-clients', mutualTls ? 'yes' : 'no'];
}

/**
 * Starts redis-server on `port` (default: a free one); resolves to
 * `{ port, url, tls, pid, stop }` once it answers PING (`pid`: to pause it
 * with SIGSTOP). With `tls` (makePki's
 * files) it speaks only TLS with the PKI's server certificate, `url` is
 * `rediss://`; with `mutualTls` too it asks for a client certificate of
 * that CA.
 */
async function startRedis({ port: wanted, tls: pki, mutualTls = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-redis-'));
  const port = wanted ?? await freePort();
  const log = path.join(dir, 'redis.log');
  const server = spawn('redis-server', [...listenArguments(port, pki, mutualTls), '--bind', '127.0.0.1',
    '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', log], { stdio: 'ignore' });
  let exited = false;
  const gone = new Promise((resolve) => {
    server.once('exit', () => { exited = true; resolve(); });
    // Not started at all (no binary): no 'exit' follows.
    server.once('error', (err) => {
      console.error(`redis-server: ${err.message} (run \`make servers\`)`);
      exited = true;
      resolve();
    });
  });

  // Synchronous, so it also runs from process.on('exit').
  const kill = () => {
    if (!exited) server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal) => { kill(); process.exit(128 + os.constants.signals[signal]); };
  process.on('exit', kill);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = async () => {
    process.off('exit', kill);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!exited) server.kill('SIGTERM');
    await gone;
    fs.rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answersPing(port, pki))) {
    if (exited || Date.now() > deadline) {
      const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
      await stop();
      throw new Error(`redis-server did not start on port ${port}\n${text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { port, url: `${pki ? 'rediss' : 'redis'}://127.0.0.1:${port}`, tls: pki ?? null, pid: server.pid, stop };
}

module.exports = { freePort, makePki, startRedis, tlsClientOptions };
