'use strict';
// A throwaway redis-server for the tests and the benchmarks: the
// distribution's binary (`make servers` installs it) on a free loopback port
// (or a given one, to restart a stopped server where its clients expect it),
// with its own temporary directory and no persistence. stop() ends it and
// removes the directory; so do an exit of this process, Ctrl-C and SIGTERM.
// Outside test/, so `node --test test/` does not run it as a test file.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

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

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

/**
 * Starts redis-server on `port` (default: a free one); resolves to
 * `{ port, url, stop }` once it answers PING.
 */
async function startRedis({ port: wanted } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-redis-'));
  const port = wanted ?? await freePort();
  const log = path.join(dir, 'redis.log');
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--save', '', '--appendonly', 'no', '--logfile', log], { stdio: 'ignore' });
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
  while (!(await answersPing(port))) {
    if (exited || Date.now() > deadline) {
      const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
      await stop();
      throw new Error(`redis-server did not start on port ${port}\n${text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { port, url: `redis://127.0.0.1:${port}`, stop };
}

module.exports = { startRedis };
