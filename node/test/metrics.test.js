'use strict';
// Metrics of a client and of the process's keyed limits (README "Metrics"),
// driven at explicit times: exact counts per point and reason, keyed
// decisions, the services' state, a shared table seen alike from two
// clients and another process; prom-client's registry and an OpenTelemetry
// meter reading the same values; promtool's lint of both texts.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Client, KeyedLimit, ExpressRateLimitStore, FastifyRateLimitStore, metrics } = require('..');
// The core's reason names (lib/native.js reads them from the addon).
const CORE_REASONS = require('../lib/native.js').REASONS.filter((r) => r !== null);

const T0 = 1_700_000_000_000; // a whole 10 s cycle starts here
const ROOT = path.join(__dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-node-metrics-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The value of `name`'s sample whose labels include `labels`; undefined if none. */
function value(families, name, labels = {}) {
  const family = families.find((f) => f.name === name);
  assert.ok(family, `family ${name}`);
  const sample = family.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample === undefined ? undefined : sample.value;
}

/** The sample lines of a text, sorted. */
function sampleLines(text) {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).sort();
}

function promtool(text) {
  return spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
}

test('exact counts per point and reason, at explicit times', () => {
  const client = new Client({ capacity: 16 });
  client.setStrategy('visits', { visitThreshold: 3 });
  client.setStrategy('slots', { concurrentThreshold: 2, timeoutThreshold: 100 });
  // 10 s cycles: 10 requests in each of 4 cycles, 3 admitted a cycle.
  for (let cycle = 0; cycle < 4; cycle++) {
    for (let i = 0; i < 10; i++) {
      const now = T0 + cycle * 10_000 + i;
      client.enter('visits', { nowMs: now }).exit(now + 1);
    }
  }
  const a = client.enter('slots', { nowMs: T0 });
  const b = client.enter('slots', { nowMs: T0 + 1 });
  const refused = [2, 3, 4].map((i) => client.enter('slots', { nowMs: T0 + i }));
  assert.ok(refused.every((e) => e.reason === 'CONCURRENT'));
  const held = client.metrics({ nowMs: T0 + 5 });
  assert.equal(value(held, 'sds_point_in_flight', { point: 'slots' }), 2);
  assert.equal(value(held, 'sds_point_in_flight_max', { point: 'slots' }), 0, 'no whole cycle yet');
  a.exit(T0 + 500); // slower than timeoutThreshold
  b.error(new Error('boom'));
  b.exit(T0 + 20);

  const got = client.metrics({ nowMs: T0 + 40_001 });
  const visits = { table: 'private', point: 'visits' };
  assert.equal(value(got, 'sds_point_requests', visits), 40);
  assert.equal(value(got, 'sds_point_downgrades', { ...visits, reason: 'VISIT' }), 28);
  const reasons = got.find((f) => f.name === 'sds_point_downgrades').samples.filter((s) => s.labels.point === 'visits');
  assert.deepEqual(reasons.map((s) => s.labels.reason).sort(), [...CORE_REASONS].sort(), 'every reason of the core, zeros included');
  assert.ok(CORE_REASONS.includes('SLOW_CALL_RATE'), CORE_REASONS.join());
  assert.equal(reasons.reduce((sum, s) => sum + s.value, 0), 28);
  const slots = { table: 'private', point: 'slots' };
  assert.equal(value(got, 'sds_point_requests', slots), 5);
  assert.equal(value(got, 'sds_point_downgrades', { ...slots, reason: 'CONCURRENT' }), 3);
  assert.equal(value(got, 'sds_point_timeouts', slots), 1);
  assert.equal(value(got, 'sds_point_exceptions', slots), 1);
  assert.equal(value(got, 'sds_point_in_flight', slots), 0);
  assert.equal(value(client.metrics({ nowMs: T0 + 10_001 }), 'sds_point_in_flight_max', slots), 2);
  assert.equal(value(got, 'sds_table_points', { table: 'private' }), 2);
  assert.equal(value(got, 'sds_table_points_capacity', { table: 'private' }), 16);

  // The shape: every family once, its labels on every sample.
  const names = got.map((f) => f.name);
  assert.equal(new Set(names).size, names.length);
  for (const f of got) {
    assert.ok(['counter', 'gauge'].includes(f.type), f.name);
    assert.equal(f.sampleName, f.type === 'counter' ? `${f.name}_total` : f.name);
    assert.ok(f.help.length > 0);
    for (const s of f.samples) assert.deepEqual(Object.keys(s.labels), f.labelNames);
  }
  // No agent or cluster sync: their families have nothing to show.
  assert.deepEqual(got.filter((f) => /^sds_(agent|cluster)_/.test(f.name)).flatMap((f) => f.samples), []);
});

test('the texts: Prometheus 0.0.4 and OpenMetrics 1.0 of the same samples; promtool finds nothing', () => {
  const client = new Client();
  client.setStrategy('api', { visitThreshold: 1 });
  for (let i = 0; i < 3; i++) client.enter('api', { nowMs: T0 + i }).exit(T0 + i);
  const text = client.prometheusText({ nowMs: T0 + 10 });
  assert.match(text, /^# HELP sds_point_requests_total .+\n# TYPE sds_point_requests_total counter\nsds_point_requests_total\{table="private",point="api"\} 3\n/);
  assert.match(text, /^sds_point_downgrades_total\{table="private",point="api",reason="VISIT"\} 2$/m);
  const om = client.prometheusText({ openMetrics: true, nowMs: T0 + 10 });
  assert.match(om, /^# TYPE sds_point_requests counter$/m);
  assert.ok(om.endsWith('# EOF\n'));
  assert.deepEqual(sampleLines(om.replace('# EOF\n', '')), sampleLines(text));
  // Every sample line of the text is one of metrics(), value for value.
  const fromObjects = client.metrics({ nowMs: T0 + 10 }).flatMap((f) => f.samples.map((s) => {
    const labels = f.labelNames.map((l) => `${l}="${s.labels[l]}"`).join(',');
    return `${f.sampleName}{${labels}} ${s.value}`;
  }));
  assert.deepEqual(sampleLines(text), fromObjects.sort());
  const lint = promtool(text);
  assert.equal(lint.status, 0, lint.stdout + lint.stderr);
  assert.equal(lint.stdout + lint.stderr, '');
  assert.equal(metrics.PROMETHEUS_CONTENT_TYPE, 'text/plain; version=0.0.4; charset=utf-8');
  assert.match(metrics.OPENMETRICS_CONTENT_TYPE, /^application\/openmetrics-text; version=1\.0\.0/);
  assert.throws(() => client.prometheusText({ openMetrics: 'yes' }), { code: 'SDS_INVALID_ARGUMENT' });
  assert.throws(() => client.metrics({ now: 1 }), { code: 'SDS_INVALID_ARGUMENT' });
  assert.throws(() => client.metrics({ nowMs: -1 }), { code: 'SDS_INVALID_ARGUMENT' });
});

test('keyed limits: decisions by outcome under their name, keys, evictions; a closed limit leaves', () => {
  const rule = { kind: 'rate', limit: 2, periodMs: 60_000 };
  const login = new KeyedLimit(rule, { name: 'login', capacity: 4 });
  assert.equal(login.name, 'login');
  for (let i = 0; i < 5; i++) login.decide('alice', 1, T0);
  login.decide('bob', 1, T0);
  const unnamed = new KeyedLimit(rule);
  assert.match(unnamed.name, /^private-\d+$/);
  unnamed.decide('x', 3, T0); // more than the burst: refused, no key held
  unnamed.decide('y', 1, T0);
  // Past 4 keys, cells are given to new ones.
  for (let i = 0; i < 12; i++) login.decide(`k${i}`, 1, T0);

  const client = new Client();
  let got = client.metrics();
  assert.equal(value(got, 'sds_keyed_decisions', { limit: 'login', outcome: 'admitted' }), 2 + 1 + 12);
  assert.equal(value(got, 'sds_keyed_decisions', { limit: 'login', outcome: 'refused' }), 3);
  assert.equal(value(got, 'sds_keyed_decisions', { limit: unnamed.name, outcome: 'refused' }), 1);
  assert.equal(value(got, 'sds_keyed_decisions', { limit: unnamed.name, outcome: 'admitted' }), 1);
  const stats = login.stats();
  assert.ok(stats.evictions > 0);
  assert.equal(value(got, 'sds_keyed_keys', { limit: 'login' }), stats.resident);
  assert.equal(value(got, 'sds_keyed_keys_capacity', { limit: 'login' }), 4);
  assert.equal(value(got, 'sds_keyed_evictions', { limit: 'login' }), stats.evictions);
  assert.equal(value(got, 'sds_keyed_lossy_evictions', { limit: 'login' }), stats.lossyEvictions);

  login.close();
  got = client.metrics();
  assert.equal(value(got, 'sds_keyed_keys', { limit: 'login' }), undefined);
  assert.equal(value(got, 'sds_keyed_keys', { limit: unnamed.name }), 1);
  unnamed.close();
  assert.throws(() => new KeyedLimit(rule, { name: 7 }), { code: 'SDS_INVALID_ARGUMENT' });
});

test('the stores\' tables show by their file names, with no option', async () => {
  const store = new ExpressRateLimitStore({ shared: path.join(dir, 'login-limit.sds'), capacity: 64 });
  store.init({ windowMs: 60_000 });
  for (const key of ['1.2.3.4', '1.2.3.4', '5.6.7.8']) await store.increment(key);
  const got = new Client().metrics();
  assert.equal(value(got, 'sds_keyed_keys', { limit: 'login-limit.sds' }), 2);
  assert.equal(value(got, 'sds_keyed_keys_capacity', { limit: 'login-limit.sds' }), 64);
  // Counted hits are no decisions.
  assert.equal(value(got, 'sds_keyed_decisions', { limit: 'login-limit.sds', outcome: 'admitted' }), 0);
  store.shutdown();
  assert.equal(value(new Client().metrics(), 'sds_keyed_keys', { limit: 'login-limit.sds' }), undefined);

  const Fastify = FastifyRateLimitStore.with({ shared: path.join(dir, 'api-limit'), capacity: 64 });
  const fastify = new Fastify({});
  await new Promise((resolve, reject) => fastify.incr('9.9.9.9', (e) => (e ? reject(e) : resolve()), 1000, 10));
  const table = 'api-limit.1000ms'; // a file per window length
  assert.equal(value(new Client().metrics(), 'sds_keyed_keys', { limit: table }), 1);
  fastify.close();
  assert.equal(value(new Client().metrics(), 'sds_keyed_keys', { limit: table }), undefined);
});

test('the console agent and the cluster sync: their state while running, then down once closed', () => {
  const client = new Client();
  const agent = client.connectAdmin({ servers: 'http://127.0.0.1:1', appGroup: 'g', appName: 'a' }).on('log', () => {});
  const sync = client.connectCluster({ urls: 'redis://127.0.0.1:1', points: ['c1', 'c2'] });
  const table = { table: 'private' };
  let got = client.metrics();
  assert.equal(value(got, 'sds_agent_up', table), 1);
  assert.equal(value(got, 'sds_cluster_up', table), 1);
  assert.equal(value(got, 'sds_cluster_points', table), 2);
  agent.close();
  sync.close();
  got = client.metrics();
  assert.equal(value(got, 'sds_agent_up', table), 0);
  assert.equal(value(got, 'sds_cluster_up', table), 0);
  // Stopped, their status stays: the metrics are its fields.
  const a = agent.status();
  const c = sync.status();
  assert.equal(value(got, 'sds_agent_pull_failures', table), a.pullFailures);
  assert.equal(value(got, 'sds_agent_uploads', table), a.uploads);
  assert.equal(value(got, 'sds_agent_last_pull_success', table), a.lastPullOk ? 1 : 0);
  assert.equal(value(got, 'sds_agent_strategy_version', table), a.version);
  assert.equal(value(got, 'sds_cluster_failures', table), c.failures);
  assert.equal(value(got, 'sds_cluster_connected', table), c.connected ? 1 : 0);
  assert.equal(value(got, 'sds_cluster_syncing', table), c.syncing ? 1 : 0);
  // A new one takes the closed one's place.
  const again = client.connectCluster({ urls: 'redis://127.0.0.1:1', points: ['c1'] });
  assert.equal(value(client.metrics(), 'sds_cluster_up', table), 1);
  assert.equal(value(client.metrics(), 'sds_cluster_points', table), 1);
  again.close();
});

test('a shared table and a shared key table: two clients and another process see the same counts', () => {
  const points = path.join(dir, 'shared-points.sds');
  const keys = path.join(dir, 'shared-keys.sds');
  const rule = { kind: 'fixedWindow', limit: 4, periodMs: 60_000 };
  const one = new Client({ capacity: 32, shared: points });
  const two = new Client({ capacity: 32, shared: points });
  one.setStrategy('api', { visitThreshold: 5 });
  const limit = KeyedLimit.shared(keys, rule, { capacity: 64 });
  for (let i = 0; i < 3; i++) one.enter('api', { nowMs: T0 + i }).exit(T0 + i);
  for (let i = 0; i < 2; i++) limit.decide('k', 1, T0);
  // Another process: 4 more requests (2 downgraded past 5 in the window), 3 more decisions (1 refused).
  const script = `
    const { Client, KeyedLimit } = require(${JSON.stringify(ROOT)});
    const c = new Client({ capacity: 32, shared: ${JSON.stringify(points)} });
    for (let i = 3; i < 7; i++) c.enter('api', { nowMs: ${T0} + i }).exit(${T0} + i);
    const l = KeyedLimit.shared(${JSON.stringify(keys)}, ${JSON.stringify(rule)}, { capacity: 64 });
    for (let i = 0; i < 3; i++) l.decide('k', 1, ${T0});
    process.stdout.write(c.prometheusText({ nowMs: ${T0} + 100 }));
  `;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: '' } });
  assert.equal(child.status, 0, child.stderr);

  const label = path.basename(points);
  for (const client of [one, two]) {
    const got = client.metrics({ nowMs: T0 + 100 });
    assert.equal(value(got, 'sds_point_requests', { table: label, point: 'api' }), 7);
    assert.equal(value(got, 'sds_point_downgrades', { table: label, point: 'api', reason: 'VISIT' }), 2);
    assert.equal(value(got, 'sds_keyed_decisions', { limit: 'shared-keys.sds', outcome: 'admitted' }), 4);
    assert.equal(value(got, 'sds_keyed_decisions', { limit: 'shared-keys.sds', outcome: 'refused' }), 1);
  }
  // The child's text, read before this process's last look, shows the same table samples.
  const tableLines = (text) => sampleLines(text).filter((l) => l.includes(`table="${label}"`));
  assert.deepEqual(tableLines(child.stdout), tableLines(one.prometheusText({ nowMs: T0 + 100 })));
  assert.deepEqual(tableLines(two.prometheusText({ nowMs: T0 + 100 })), tableLines(one.prometheusText({ nowMs: T0 + 100 })));
  limit.close();
});

test('prom-client: our families next to its default metrics, rendered as our own text; promtool finds nothing of ours', async () => {
  const { Registry, collectDefaultMetrics } = require('prom-client');
  const client = new Client();
  client.setStrategy('api', { visitThreshold: 2 });
  for (let i = 0; i < 6; i++) client.enter('api', { nowMs: T0 + i }).exit(T0 + i);
  const limit = new KeyedLimit({ kind: 'rate', limit: 1, periodMs: 1000 }, { name: 'prom-login' });
  limit.decide('a', 1, T0);
  limit.decide('a', 1, T0);

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registration = metrics.registerPromClient(client, registry);
  const scraped = await registry.metrics();
  const ours = client.prometheusText();
  // The same sample lines, ours with `_total` exactly once.
  const sds = (text) => sampleLines(text).filter((l) => l.startsWith('sds_'));
  assert.deepEqual(sds(scraped), sampleLines(ours));
  assert.match(scraped, /^sds_point_requests_total\{table="private",point="api"\} 6$/m);
  assert.match(scraped, /^sds_keyed_decisions_total\{limit="prom-login",outcome="refused"\} 1$/m);
  assert.match(scraped, /^# TYPE sds_point_requests_total counter$/m);
  assert.match(scraped, /^process_cpu_user_seconds_total /m, 'its own default metrics are there');
  const types = [...scraped.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
  assert.equal(new Set(types).size, types.length, 'no family twice');
  // promtool lints prom-client's own gauges named *_total; nothing of ours.
  const lint = promtool(scraped);
  const complaints = (lint.stdout + lint.stderr).split('\n').filter(Boolean);
  assert.deepEqual(complaints.filter((l) => !/^nodejs_\w+ non-counter metrics should not have "_total" suffix$/.test(l)), []);
  // A later scrape reads the counts anew; a second registration of the names clashes.
  client.enter('api', { nowMs: T0 + 7 }).exit(T0 + 7);
  assert.match(await registry.metrics(), /^sds_point_requests_total\{table="private",point="api"\} 7$/m);
  assert.throws(() => metrics.registerPromClient(client, registry), /already been registered/);
  assert.match(await registry.metrics(), /^sds_point_requests_total/m, 'the failed registration left ours in');
  registration.unregister();
  assert.doesNotMatch(await registry.metrics(), /^sds_/m);

  // An OpenMetrics registry: the family without `_total`, its samples with, on every scrape.
  const om = new Registry(Registry.OPENMETRICS_CONTENT_TYPE);
  metrics.registerPromClient(client, om);
  for (let i = 0; i < 2; i++) {
    const text = await om.metrics();
    assert.match(text, /^# TYPE sds_point_requests counter\nsds_point_requests_total\{table="private",point="api"\} 7$/m);
    assert.doesNotMatch(text, /_total_total/);
  }
  assert.throws(() => metrics.registerPromClient({}, om), { code: 'SDS_INVALID_ARGUMENT' });
  assert.throws(() => metrics.registerPromClient(client, {}), { code: 'SDS_INVALID_ARGUMENT' });
  limit.close();
});

test('prom-client AggregatorRegistry: workers on a shared table each show the host\'s counts, aggregated once', async () => {
  const { AggregatorRegistry, Registry } = require('prom-client');
  const file = path.join(dir, 'aggregated.sds');
  const workers = [new Client({ shared: file }), new Client({ shared: file })];
  workers.forEach((client, i) => {
    for (let j = 0; j <= i; j++) client.enter('api', { nowMs: T0 + j }).exit(T0 + j);
  });
  // What each worker's registry sends the primary (prom-client's cluster protocol: getMetricsAsJSON).
  const sent = await Promise.all(workers.map((client) => {
    const registry = new Registry();
    metrics.registerPromClient(client, registry);
    return registry.getMetricsAsJSON();
  }));
  assert.equal(sent[0].find((m) => m.name === 'sds_point_requests_total').aggregator, 'max');
  const text = await AggregatorRegistry.aggregate(sent).metrics();
  assert.match(text, /^sds_point_requests_total\{table="aggregated\.sds",point="api"\} 3$/m);
  // A private table's counts are the worker's own: summed.
  const own = new Registry();
  metrics.registerPromClient(new Client(), own);
  assert.equal((await own.getMetricsAsJSON())[0].aggregator, 'sum');
});

test('prom-client: one collection per scrape, whatever the number of families', async () => {
  const { Registry } = require('prom-client');
  const client = new Client();
  const registry = new Registry();
  metrics.registerPromClient(client, registry);
  const collect = client._exporter.collect;
  let calls = 0;
  client._exporter.collect = function counted(...args) {
    calls += 1;
    return collect.apply(this, args);
  };
  await registry.metrics();
  assert.equal(calls, 1);
  await registry.metrics();
  assert.equal(calls, 2);
});

test('OpenTelemetry: a MeterProvider\'s in-memory export reads our counters and gauges', async () => {
  const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality, DataPointType } =
    require('@opentelemetry/sdk-metrics');
  const client = new Client({ capacity: 8 });
  client.setStrategy('api', { visitThreshold: 4 });
  for (let i = 0; i < 9; i++) client.enter('api', { nowMs: T0 + i }).exit(T0 + i);
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const registration = metrics.instrumentOtel(client, provider.getMeter('sds-test'));

  await reader.forceFlush();
  const exported = exporter.getMetrics().flatMap((r) => r.scopeMetrics).flatMap((s) => s.metrics);
  const byName = new Map(exported.map((m) => [m.descriptor.name, m]));
  const requests = byName.get('sds_point_requests');
  assert.ok(requests, [...byName.keys()].join());
  assert.equal(requests.dataPointType, DataPointType.SUM);
  assert.equal(requests.isMonotonic, true);
  assert.match(requests.descriptor.description, /^Requests a point decided/);
  assert.deepEqual(requests.dataPoints.map((p) => [p.attributes, p.value]), [[{ table: 'private', point: 'api' }, 9]]);
  const visit = byName.get('sds_point_downgrades').dataPoints.find((p) => p.attributes.reason === 'VISIT');
  assert.equal(visit.value, 5);
  const capacity = byName.get('sds_table_points_capacity');
  assert.equal(capacity.dataPointType, DataPointType.GAUGE);
  assert.equal(capacity.dataPoints[0].value, 8);
  // Every family with samples is exported, under its own name.
  for (const family of client.metrics().filter((f) => f.samples.length > 0)) {
    assert.equal(byName.get(family.name)?.dataPoints.length, family.samples.length, family.name);
  }

  client.enter('api', { nowMs: T0 + 20_000 }).exit(T0 + 20_000);
  exporter.reset();
  await reader.forceFlush();
  const again = exporter.getMetrics().flatMap((r) => r.scopeMetrics).flatMap((s) => s.metrics);
  assert.equal(again.find((m) => m.descriptor.name === 'sds_point_requests').dataPoints[0].value, 10);
  registration.unregister();
  await provider.shutdown();
  assert.throws(() => metrics.instrumentOtel(client, {}), { code: 'SDS_INVALID_ARGUMENT' });
});
