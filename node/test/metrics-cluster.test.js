'use strict';
// A real Prometheus server scraping a `node:cluster` app of 4 workers on a
// shared table: `/work` enters a point (a visitThreshold downgrades some)
// after a named shared keyed limit's decision, `/metrics` answers
// `prometheusText()` (whichever worker gets the scrape, the counts are the
// host's). A known number of requests is driven, one worker is killed with
// SIGKILL midway (the primary forks another), more are driven; Prometheus'
// HTTP API then holds exactly the counts driven, and no counter reset over
// the run. This file is both the test (the primary) and, run by
// cluster.fork, the workers' server.
const cluster = require('node:cluster');
const { workerOrPrimary, forkListening, get, killReplaced, stopWorkers } = require('../testing/cluster.js');
const http = require('node:http');

const WORKERS = 4;
const VISIT_THRESHOLD = 70; // in 10 s, host-wide: some requests of the second half are downgraded
const KEYED_LIMIT = 100; // per minute, host-wide
const HALF = 60;

function serve() {
  const { Client, KeyedLimit, metrics } = require('..');
  const client = new Client({ capacity: 64, shared: process.env.SDS_TEST_POINTS });
  client.setStrategy('work', { visitThreshold: VISIT_THRESHOLD });
  // From the first hit: a window aligned to the minute would reset if the
  // run crossed a minute's end (it spans several seconds).
  const rule = { kind: 'fixedWindow', limit: KEYED_LIMIT, periodMs: 60_000, windowFromFirstHit: true };
  const limit = KeyedLimit.shared(process.env.SDS_TEST_KEYS, rule,
    { capacity: 64, name: 'per-tenant' });
  http.createServer((req, res) => {
    res.setHeader('x-pid', process.pid);
    if (req.url === '/metrics') {
      res.setHeader('content-type', metrics.PROMETHEUS_CONTENT_TYPE);
      res.end(client.prometheusText());
      return;
    }
    const keyed = limit.decide('tenant-1');
    res.setHeader('x-keyed', keyed.admitted ? 'admitted' : 'refused');
    const entry = client.enter('work');
    res.statusCode = entry.downgraded ? 503 : 200;
    if (!entry.downgraded) entry.exit();
    res.end();
  }).listen(0, '127.0.0.1');
}

workerOrPrimary(serve, primary, 'sds-node-metrics-cluster-');

function primary(dir) {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const fs = require('node:fs');
  const { freePort } = require('../testing/redis-server.js');
  const path = require('node:path');
  const { spawn } = require('node:child_process');
  const { until } = require('../testing/until.js');

  const env = {
    SDS_TEST_POINTS: path.join(dir, 'points.sds'),
    SDS_TEST_KEYS: path.join(dir, 'keys.sds'),
    NODE_TEST_CONTEXT: '',
  };
  let stopping = false;
  let prometheus = null;
  let promLog = '';


  const replace = () => { if (!stopping) cluster.fork(env); };

  test.after(async () => {
    stopping = true;
    cluster.off('exit', replace);
    const gone = stopWorkers();
    if (prometheus !== null && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await gone;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `count` requests to /work in batches of 10 at once, 300 ms apart: several scrapes fall among them. */
  async function drive(port, count) {
    const answers = [];
    while (answers.length < count) {
      const batch = Math.min(10, count - answers.length);
      answers.push(...await Promise.all(Array.from({ length: batch }, () => get(port, '/work'))));
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return answers;
  }

  test('Prometheus scrapes 4 workers on a shared table: exact counts across a SIGKILLed worker, no counter reset', { timeout: 60_000 }, async (t) => {
    const started = Date.now();
    const port = await forkListening(__filename, WORKERS, env);
    cluster.on('exit', replace);

    const promPort = await freePort();
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(config, [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: sds',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${port}']`,
      '',
    ].join('\n'));
    prometheus = spawn('prometheus', [
      `--config.file=${config}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
      '--log.level=warn',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr.setEncoding('utf8');
    prometheus.stderr.on('data', (chunk) => { promLog += chunk; });
    const promExit = new Promise((resolve) => prometheus.once('exit', (code, signal) => resolve(`${code ?? signal}`)));
    const ready = async () => {
      try {
        return (await get(promPort, '/-/ready')).status === 200;
      } catch {
        return false;
      }
    };
    await Promise.race([
      until(ready, 20_000, `prometheus ready (log: ${promLog})`),
      promExit.then((how) => { throw new Error(`prometheus exited (${how}): ${promLog}`); }),
    ]);

    /** The one series of an instant query's vector, as a number; undefined when none. */
    async function query(expr) {
      const answer = await get(promPort, `/api/v1/query?query=${encodeURIComponent(expr)}`);
      assert.equal(answer.status, 200, answer.body);
      const { data } = JSON.parse(answer.body);
      assert.equal(data.resultType, 'vector');
      assert.ok(data.result.length <= 1, answer.body);
      return data.result.length === 0 ? undefined : Number(data.result[0].value[1]);
    }
    const requests = 'sds_point_requests_total{job="sds",point="work"}';
    const scrapedAs = async (expr, want, what) => until(async () => (await query(expr)) === want, 15_000,
      `${what}: prometheus shows ${want} (last ${await query(expr)})`);

    // Prometheus starts its scrape loops a few seconds after it is ready.
    await until(async () => (await query('up{job="sds"}')) === 1, 15_000, 'a first scrape');
    assert.equal(await query(requests), 0);

    // First half, then the worker that answered the last request is killed.
    const first = await drive(port, HALF);
    await scrapedAs(requests, HALF, 'first half');
    const victim = Number(first[first.length - 1].headers['x-pid']);
    await killReplaced(victim);
    const second = await drive(port, HALF);
    const answers = [...first, ...second];

    const downgraded = answers.filter((a) => a.status === 503).length;
    const admitted = answers.filter((a) => a.headers['x-keyed'] === 'admitted').length;
    const pids = new Set(answers.map((a) => a.headers['x-pid']));
    t.diagnostic(`${answers.length} requests by ${pids.size} processes, ${downgraded} downgraded, ` +
      `keyed ${admitted} admitted; pid ${victim} killed after ${HALF}`);
    assert.equal(answers.filter((a) => a.status === 200).length + downgraded, 2 * HALF);
    assert.ok(downgraded > 0 && downgraded < 2 * HALF, `downgraded ${downgraded}`);
    assert.equal(admitted, KEYED_LIMIT);
    assert.ok(pids.size > WORKERS, 'the replacement answered too');

    await scrapedAs(requests, 2 * HALF, 'both halves');
    await scrapedAs('sds_point_downgrades_total{job="sds",point="work",reason="VISIT"}', downgraded, 'downgrades');
    assert.equal(await query('sum(sds_point_downgrades_total{job="sds",point="work"})'), downgraded, 'no other reason');
    await scrapedAs('sds_keyed_decisions_total{job="sds",limit="per-tenant",outcome="admitted"}', KEYED_LIMIT, 'keyed admitted');
    await scrapedAs('sds_keyed_decisions_total{job="sds",limit="per-tenant",outcome="refused"}', 2 * HALF - KEYED_LIMIT,
      'keyed refused');
    assert.equal(await query('sds_table_points{job="sds",table="points.sds"}'), 1);

    // Over the run: several scrapes, no counter ever went back.
    const run = `${Math.ceil((Date.now() - started) / 1000) + 5}s`;
    const scrapes = await query(`count_over_time(${requests}[${run}])`);
    assert.ok(scrapes >= 4, `scraped ${scrapes} times`);
    for (const counter of [requests, 'sds_point_downgrades_total{job="sds",reason="VISIT"}',
      'sds_keyed_decisions_total{job="sds",outcome="admitted"}', 'sds_keyed_decisions_total{job="sds",outcome="refused"}']) {
      assert.equal(await query(`resets(${counter}[${run}])`), 0, `resets of ${counter}`);
    }
    assert.equal(await query('max_over_time(up{job="sds"}[1m])'), 1);
    t.diagnostic(`${scrapes} scrapes, ${Date.now() - started} ms`);
  });
}
