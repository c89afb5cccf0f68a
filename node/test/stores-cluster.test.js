'use strict';
// The stores in the real servers: a `node:cluster` of 4 workers on a
// loopback port, every worker limiting with its library and our store on
// one shared table. First express + express-rate-limit with
// ExpressRateLimitStore, then fastify + @fastify/rate-limit with
// FastifyRateLimitStore: 100 per window per client holds for the host, the
// headers are the ones each library documents (parsed back with
// structured-headers), and a worker killed with SIGKILL mid-run changes
// nothing. This file is the test (the cluster's primary) and, run by
// cluster.fork, the workers' server (SDS_TEST_SERVER says which).
const cluster = require('node:cluster');
const { workerOrPrimary, forkListening, get, killReplaced, stopWorkers } = require('../testing/cluster.js');
const path = require('node:path');
const { ExpressRateLimitStore, FastifyRateLimitStore } = require('..');

const WORKERS = 4;
const LIMIT = 100;
const WINDOW_MS = 60_000;
const REQUESTS = 300;
const POLICY = 'per-client';

function serveExpress(table) {
  const express = require('express');
  const { rateLimit } = require('express-rate-limit');
  const app = express();
  app.use((req, res, next) => { res.set('x-pid', String(process.pid)); next(); });
  app.use(rateLimit({
    windowMs: WINDOW_MS,
    limit: LIMIT,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: POLICY,
    keyGenerator: (req) => req.get('x-client') ?? 'anonymous',
    store: new ExpressRateLimitStore({ shared: table }),
  }));
  app.get('/', (req, res) => res.send('ok'));
  app.listen(0, '127.0.0.1');
}

async function serveFastify(table) {
  const app = require('fastify')();
  app.addHook('onRequest', async (req, reply) => { reply.header('x-pid', String(process.pid)); });
  await app.register(require('@fastify/rate-limit'), {
    max: LIMIT,
    timeWindow: WINDOW_MS,
    enableDraftSpec: true,
    keyGenerator: (req) => req.headers['x-client'] ?? 'anonymous',
    store: FastifyRateLimitStore.with({ shared: table }),
  });
  app.get('/', async () => 'ok');
  await app.listen({ port: 0, host: '127.0.0.1' });
}

workerOrPrimary(() => {
  if (process.env.SDS_TEST_SERVER === 'express') serveExpress(process.env.SDS_TEST_TABLE);
  else serveFastify(process.env.SDS_TEST_TABLE);
}, primary, 'sds-stores-cluster-');

function primary(dir) {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const fs = require('node:fs');
  const { parseList, parseItem } = require('structured-headers');

  test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** WORKERS workers of `server` on `table`, each one that dies replaced; `stop()` ends them all. */
  async function startCluster(server, table) {
    const env = { SDS_TEST_SERVER: server, SDS_TEST_TABLE: table, NODE_TEST_CONTEXT: '' };
    let stopping = false;
    const replace = () => { if (!stopping) cluster.fork(env); };
    const port = await forkListening(__filename, WORKERS, env);
    cluster.on('exit', replace);
    const stop = async () => {
      stopping = true;
      cluster.off('exit', replace);
      await stopWorkers();
    };
    return { port, stop };
  }

  /** GET / with `headers`: its status, headers and the pid of the worker that answered. */
  async function request(port, headers) {
    const { status, headers: answered } = await get(port, '/', headers);
    return { status, headers: answered, pid: Number(answered['x-pid']) };
  }

  /**
   * `count` requests in batches of 10 at once; after `killAfter` of them,
   * the worker that answered the last one is killed with SIGKILL, and the
   * next batch goes out once its replacement listens.
   */
  async function requestAll(port, count, headers, killAfter = Infinity) {
    const answers = [];
    let killed = null;
    while (answers.length < count) {
      const batch = Math.min(10, count - answers.length);
      answers.push(...await Promise.all(Array.from({ length: batch }, () => request(port, headers))));
      if (killed === null && answers.length >= killAfter) {
        killed = answers[answers.length - 1].pid;
        await killReplaced(killed);
      }
    }
    return { answers, killed };
  }

  /** A draft-8 RateLimit or RateLimit-Policy field's one item: its name and parameters. */
  function draft8(value) {
    const list = parseList(value);
    assert.equal(list.length, 1, value);
    const [name, params] = list[0];
    return { name, params };
  }

  /** An Integer header (draft-6 RateLimit-*, Retry-After) through the structured-fields parser. */
  function integer(value) {
    const [item] = parseItem(value);
    assert.ok(Number.isInteger(item), `${value} is an Integer`);
    return item;
  }

  /** The figures every run checks; returns the admitted answers. */
  function checkCounts(t, server, { answers, killed }) {
    const admitted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    const pids = new Set(answers.map((a) => a.pid));
    t.diagnostic(`${server}: admitted ${admitted.length} of ${REQUESTS} (bounds ${LIMIT}..${LIMIT + WORKERS}), ` +
      `${pids.size} processes answered, pid ${killed} killed after 150`);
    assert.equal(admitted.length + refused.length, REQUESTS);
    assert.ok(admitted.length >= LIMIT && admitted.length <= LIMIT + WORKERS, `admitted ${admitted.length}`);
    // The killed worker answered some, its replacement and the others the rest.
    assert.ok(pids.has(killed));
    assert.equal(pids.size, WORKERS + 1, `${pids.size} processes answered`);
    assert.ok(answers.slice(150).every((a) => a.pid !== killed));
    return admitted;
  }

  /** Remaining over the admitted answers: every hit counted once in the one table, so 0..99 once each. */
  function checkRemaining(remaining) {
    remaining.sort((x, y) => x - y);
    assert.deepEqual(remaining.slice(0, LIMIT), Array.from({ length: LIMIT }, (_, i) => i));
  }

  /**
   * `server`'s cluster on a table of its own: REQUESTS from alice with a
   * worker killed midway, their counts checked, then one request from bob
   * (another client, counted apart: admitted); then `check` reads the
   * server's headers and the table.
   */
  async function runCluster(t, server, check) {
    const table = path.join(dir, `${server}-limits`);
    const running = await startCluster(server, table);
    try {
      const run = await requestAll(running.port, REQUESTS, { 'x-client': 'alice' }, 150);
      const admitted = checkCounts(t, server, run);
      const [bob] = (await requestAll(running.port, 1, { 'x-client': 'bob' })).answers;
      assert.equal(bob.status, 200);
      check({ table, run, admitted, bob });
    } finally {
      await running.stop();
    }
  }

  test('express + express-rate-limit + ExpressRateLimitStore, 4 workers, one killed mid-run', (t) =>
    runCluster(t, 'express', ({ table, run, admitted, bob }) => {
      checkRemaining(admitted.map((a) => draft8(a.headers.ratelimit).params.get('r')));
      for (const answer of run.answers) {
        const limit = draft8(answer.headers.ratelimit);
        const policy = draft8(answer.headers['ratelimit-policy']);
        assert.equal(limit.name, POLICY);
        assert.equal(policy.name, POLICY);
        assert.equal(policy.params.get('q'), LIMIT);
        assert.equal(policy.params.get('w'), WINDOW_MS / 1000);
        assert.ok(policy.params.get('pk') instanceof ArrayBuffer, 'pk is a Byte Sequence');
        const reset = limit.params.get('t');
        assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= WINDOW_MS / 1000, `t=${reset}`);
        if (answer.status === 429) {
          assert.equal(limit.params.get('r'), 0);
          const retryAfter = integer(answer.headers['retry-after']);
          assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000);
        }
      }
      assert.equal(draft8(bob.headers.ratelimit).params.get('r'), LIMIT - 1);
      // The host's count, read by a store of this process: every request once.
      const host = new ExpressRateLimitStore({ shared: table });
      host.init({ windowMs: WINDOW_MS });
      assert.equal(host.get('alice').totalHits, REQUESTS);
      host.shutdown();
    }));

  test('fastify + @fastify/rate-limit + FastifyRateLimitStore, 4 workers, one killed mid-run', (t) =>
    runCluster(t, 'fastify', ({ table, run, admitted, bob }) => {
      // enableDraftSpec: the draft-6 names, each an Integer.
      checkRemaining(admitted.map((a) => integer(a.headers['ratelimit-remaining'])));
      for (const answer of run.answers) {
        assert.equal(integer(answer.headers['ratelimit-limit']), LIMIT);
        const reset = integer(answer.headers['ratelimit-reset']);
        assert.ok(reset >= 1 && reset <= WINDOW_MS / 1000, `reset ${reset}`);
        if (answer.status === 429) {
          assert.equal(integer(answer.headers['ratelimit-remaining']), 0);
          assert.equal(integer(answer.headers['retry-after']), reset);
        }
      }
      assert.equal(integer(bob.headers['ratelimit-remaining']), LIMIT - 1);
      // The window's file, <table>.<timeWindow>ms, read by a store of this process.
      assert.ok(fs.existsSync(`${table}.${WINDOW_MS}ms`));
      const host = new (FastifyRateLimitStore.with({ shared: table }))({});
      host.read('alice', (err, res) => {
        assert.ifError(err);
        assert.equal(res.current, REQUESTS);
      }, WINDOW_MS, LIMIT);
      host.close();
    }));
}
