'use strict';
// A real `node:cluster` of 4 workers serving an Express app guarded by
// web.express, on a loopback port: a point of a shared table (its
// concurrentThreshold holds host-wide) and a per-key limit on a shared key
// table (its quota holds host-wide). This file is both the test (the
// primary) and, run by cluster.fork, the workers' server (`serve`).
const { workerOrPrimary, forkListening, get: request, mostAtOnce, stopWorkers } = require('../testing/cluster.js');
const path = require('node:path');

const WORKERS = 4;
const PER_KEY = 10; // per minute per API key, host-wide
const SLOW_MS = 300;

function serve() {
  const express = require('express');
  const { Client, KeyedLimit, web } = require('..');
  const client = new Client({ capacity: 64, shared: process.env.SDS_TEST_POINTS });
  client.setStrategy('slow', { concurrentThreshold: 2 });
  const perKey = KeyedLimit.shared(process.env.SDS_TEST_KEYS, { kind: 'fixedWindow', limit: PER_KEY, periodMs: 60_000, windowFromFirstHit: true }, { capacity: 1024 });
  const app = express();
  const reply = (res, body) => res.json({ pid: process.pid, ...body });
  app.get('/slow', web.express({ client, point: 'slow' }), (req, res) => {
    // In the handler from inNs to outNs: the monotonic clock is the host's.
    const inNs = process.hrtime.bigint();
    setTimeout(() => reply(res, { inNs: String(inNs), outNs: String(process.hrtime.bigint()) }), SLOW_MS);
  });
  app.get('/keyed', web.express({
    policies: [web.policy({ name: 'per-key', limit: perKey, key: web.header('x-api-key') })],
  }), (req, res) => reply(res, {}));
  app.listen(0, '127.0.0.1');
}

workerOrPrimary(serve, primary, 'sds-node-web-cluster-');

function primary(dir) {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const fs = require('node:fs');
  const { parseList } = require('structured-headers');
  const { Client } = require('..');

  const env = { SDS_TEST_POINTS: path.join(dir, 'points.sds'), SDS_TEST_KEYS: path.join(dir, 'keys.sds'), NODE_TEST_CONTEXT: '' };
  let port;
  let host;

  const get = (route, headers) => request(port, route, headers);

  test.before(async () => {
    port = await forkListening(__filename, WORKERS, env);
    host = new Client({ capacity: 64, shared: env.SDS_TEST_POINTS });
  });

  test.after(async () => {
    await stopWorkers({ signal: 'SIGTERM' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`a key's ${PER_KEY} per minute hold host-wide: ${3 * PER_KEY} requests over ${WORKERS} workers admit ${PER_KEY}`, async () => {
    const answers = [];
    for (let i = 0; i < 3 * PER_KEY; i++) answers.push(await get('/keyed', { 'x-api-key': 'tenant-1' }));
    const admitted = answers.filter((a) => a.status === 200);
    assert.equal(admitted.length, PER_KEY);
    assert.ok(answers.slice(PER_KEY).every((a) => a.status === 429), 'every request past the quota is refused');
    assert.ok(new Set(admitted.map((a) => JSON.parse(a.body).pid)).size >= 2, 'served by several workers');
    // Each answer's RateLimit counts down the host's quota, whoever served it.
    const remaining = answers.map((a) => parseList(a.headers['ratelimit'])[0][1].get('r'));
    assert.deepEqual(remaining.slice(0, PER_KEY), Array.from({ length: PER_KEY }, (_, i) => PER_KEY - 1 - i));
    const last = answers[answers.length - 1];
    assert.ok(Number(last.headers['retry-after']) >= 1);
    // Another key has its own quota.
    assert.equal((await get('/keyed', { 'x-api-key': 'tenant-2' })).status, 200);
  });

  test('concurrentThreshold 2 of a shared point: never more than 2 slow requests in all the workers\' handlers', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => get('/slow')));
    const admitted = answers.filter((a) => a.status === 200).map((a) => JSON.parse(a.body));
    assert.ok(admitted.length >= 2, `admitted ${admitted.length}`);
    assert.ok(answers.some((a) => a.status === 503), 'some were downgraded');
    const peak = mostAtOnce(admitted);
    assert.ok(peak <= 2, `peak ${peak}`);
    // Every permit came back once the responses were over.
    const deadline = Date.now() + 2000;
    while (host.stats('slow').concurrent !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(host.stats('slow').concurrent, 0);
    assert.equal(host.stats('slow').downgrade, answers.length - admitted.length);
  });
}
