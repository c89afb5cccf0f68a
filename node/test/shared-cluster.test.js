'use strict';
// A real `node:cluster` of 4 workers serving `http` on a loopback port,
// every worker guarding its routes with points of one shared table. This
// file is both: the test (the cluster's primary) and, run by cluster.fork,
// the workers' server (below, `serve`).
const cluster = require('node:cluster');
const { workerOrPrimary, forkListening, killReplaced, mostAtOnce, stopWorkers } = require('../testing/cluster.js');
const http = require('node:http');
const path = require('node:path');
const { Client } = require('..');

const WORKERS = 4;
const T = 20; // the visit point's visitThreshold
const SLOW_MS = 300;

/** A worker: points on the shared table, routes that enter them. */
function serve() {
  const client = new Client({ capacity: 64, shared: process.env.SDS_TEST_TABLE });
  client.setStrategy('visit', { visitThreshold: T });
  client.setStrategy('slow', { concurrentThreshold: 2 });
  client.setStrategy('crash', { concurrentThreshold: 1 });
  const reply = (res, body) => res.end(`${JSON.stringify({ pid: process.pid, ...body })}\n`);
  http.createServer((req, res) => {
    if (req.url === '/slow') {
      const entry = client.enter('slow');
      if (entry.downgraded) return reply(res, { admitted: false });
      // In the handler from `inNs` to `outNs`, inside the permit: the
      // monotonic clock is one for every process of the host.
      const inNs = process.hrtime.bigint();
      return setTimeout(() => {
        const outNs = process.hrtime.bigint();
        entry.exit();
        reply(res, { admitted: true, inNs: String(inNs), outNs: String(outNs) });
      }, SLOW_MS);
    }
    if (req.url === '/hold') {
      // Takes the crash point's one permit and never gives it back: the
      // test kills this worker while it holds it.
      const entry = client.enter('crash');
      res.writeHead(200);
      return res.write(`${JSON.stringify({ pid: process.pid, admitted: !entry.downgraded })}\n`);
    }
    const name = req.url === '/crash' ? 'crash' : 'visit';
    const entry = client.enter(name);
    // Exited before the reply: the test reads the host's counts once it has it.
    entry.exit();
    return reply(res, { admitted: !entry.downgraded });
  }).listen(0, '127.0.0.1');
}

workerOrPrimary(serve, primary, 'sds-node-cluster-');

function primary(dir) {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const fs = require('node:fs');

  const file = path.join(dir, 'table.sds');
  // The test reads the host's totals through a client of its own.
  const host = new Client({ capacity: 64, shared: file });
  let port;
  let stopping = false;

  // The workers are no test processes of the runner.
  const env = { SDS_TEST_TABLE: file, NODE_TEST_CONTEXT: '' };

  function get(route) {
    return new Promise((resolve, reject) => {
      // A connection per request, so the primary hands them round-robin.
      const req = http.get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
          // /hold never ends: its one line is the answer.
          if (route === '/hold' && body.endsWith('\n')) resolve(JSON.parse(body));
        });
        res.on('end', () => resolve(JSON.parse(body)));
        res.on('error', () => {});
      });
      req.on('error', route === '/hold' ? () => {} : reject);
      req.setTimeout(10000, () => req.destroy(new Error(`${route} timed out`)));
    });
  }

  test.before(async () => {
    port = await forkListening(__filename, WORKERS, env);
    // A worker that dies is replaced, as a service's primary does.
    cluster.on('exit', () => {
      if (!stopping) cluster.fork(env);
    });
  });

  test.after(async () => {
    stopping = true;
    await stopWorkers({ signal: 'SIGTERM', graceMs: 5000 });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`${3 * T} requests over ${WORKERS} workers under visitThreshold ${T} admit ${T} to ${T + WORKERS}`, async () => {
    const answers = [];
    for (let i = 0; i < 3 * T; i++) answers.push(await get('/visit'));
    const admitted = answers.filter((a) => a.admitted).length;
    assert.ok(admitted >= T && admitted <= T + WORKERS, `admitted ${admitted}`);
    // Each worker saw some of them: a table per worker would admit them all.
    assert.ok(new Set(answers.map((a) => a.pid)).size >= 2);
    assert.equal(host.stats('visit').visit, 3 * T);
  });

  test('concurrentThreshold 2: never more than 2 slow requests in the handlers of all workers', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => get('/slow')));
    const admitted = answers.filter((a) => a.admitted);
    assert.ok(admitted.length >= 2, `admitted ${admitted.length}`);
    assert.ok(answers.length - admitted.length >= 1);
    const peak = mostAtOnce(admitted);
    assert.ok(peak <= 2, `peak ${peak}`);
    assert.equal(host.stats('slow').concurrent, 0);
  });

  test('kill -9 of a worker holding a permit: it is replaced and the permit comes back', {
    timeout: 20000,
  }, async () => {
    const held = await get('/hold');
    assert.equal(held.admitted, true);
    assert.equal(host.stats('crash').concurrent, 1);
    await killReplaced(held.pid);
    // The permit is given back by whichever process notices: bounded wait.
    const deadline = Date.now() + 3000;
    let answer = await get('/crash');
    while (!answer.admitted && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      answer = await get('/crash');
    }
    assert.equal(answer.admitted, true);
    assert.equal(host.stats('crash').concurrent, 0);
  });
}
