'use strict';
// Both sides of the `node:cluster` tests: which one a test file runs;
// workers (the test file itself, run by cluster.fork) forked until they
// listen, requests each on a connection of its own, a worker killed and its
// replacement awaited, every worker stopped at the end, and how many
// requests were in the handlers at once.
const assert = require('node:assert/strict');
const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

/**
 * The two roles of a test file: run by cluster.fork, a worker, `serve()`;
 * else the test, `primary(dir)` with a new temporary directory (named from
 * `prefix`) for the files its workers share, which the primary removes.
 */
function workerOrPrimary(serve, primary, prefix) {
  if (cluster.isWorker) return serve();
  return primary(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** The port `worker` listens on, once it does; rejects if it exits first. */
function listening(worker) {
  return new Promise((resolve, reject) => {
    worker.once('listening', (address) => resolve(address.port));
    worker.once('exit', (code, signal) => reject(new Error(`worker exited early (${code ?? signal})`)));
  });
}

/**
 * Forks `count` workers of `file` with `env` (give it NODE_TEST_CONTEXT ''
 * so that the workers are no test processes of the runner) and waits until
 * each listens: their one port (listen(0) in cluster workers shares one).
 */
async function forkListening(file, count, env) {
  cluster.setupPrimary({ exec: file, silent: false });
  const ports = await Promise.all(Array.from({ length: count }, () => listening(cluster.fork(env))));
  assert.equal(new Set(ports).size, 1);
  return ports[0];
}

/** GET `route`: its status, headers and body. */
function get(port, route, headers = {}) {
  return new Promise((resolve, reject) => {
    // A connection per request, so the primary hands them round-robin.
    const req = http.get({ host: '127.0.0.1', port, path: route, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${route} timed out`)));
  });
}

/**
 * Kills worker process `pid` with SIGKILL; resolves once it has exited and
 * a replacement (forked by the caller's 'exit' handler) listens.
 */
async function killReplaced(pid) {
  const worker = Object.values(cluster.workers).find((w) => w.process.pid === pid);
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const replaced = new Promise((resolve) => cluster.once('listening', resolve));
  process.kill(pid, 'SIGKILL');
  await Promise.all([exited, replaced]);
}

/**
 * Ends every worker with `signal` and waits until all have exited; with
 * `graceMs`, those still running after that long get SIGKILL instead of a
 * wait. SIGKILL goes to the process at once; another signal after the IPC
 * channel is closed (`worker.kill`), as a primary stops its workers.
 */
async function stopWorkers({ signal = 'SIGKILL', graceMs = Infinity } = {}) {
  const workers = Object.values(cluster.workers);
  const gone = Promise.all(workers.map((w) => new Promise((resolve) => {
    if (w.isDead()) resolve();
    else w.once('exit', resolve);
  })));
  for (const w of workers) {
    if (signal === 'SIGKILL') w.process.kill(signal);
    else w.kill(signal);
  }
  if (graceMs === Infinity) {
    await gone;
    return;
  }
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, graceMs); });
  await Promise.race([gone, late]);
  clearTimeout(timer);
  for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL');
}

/**
 * The most of the answers' intervals in a handler at one time: each answer
 * has `inNs` and `outNs`, decimal text of the host's monotonic clock (one
 * for every process); an exit comes before an entry at the same nanosecond.
 */
function mostAtOnce(answers) {
  const events = answers.flatMap((a) => [[BigInt(a.inNs), 1], [BigInt(a.outNs), -1]]);
  events.sort((x, y) => (x[0] === y[0] ? x[1] - y[1] : (x[0] < y[0] ? -1 : 1)));
  let inside = 0;
  let peak = 0;
  for (const [, step] of events) {
    inside += step;
    peak = Math.max(peak, inside);
  }
  return peak;
}

module.exports = { workerOrPrimary, listening, forkListening, get, killReplaced, stopWorkers, mostAtOnce };
