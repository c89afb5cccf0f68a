'use strict';
// client.connectCluster: cluster points synced through a real redis-server
// (started on a free loopback port with a temporary directory, stopped
// after), through the public API.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runScript } = require('../testing/child.js');
const { Worker } = require('node:worker_threads');
const Redis = require('ioredis');
const { Client, ClusterSync } = require('..');
const { makePki, startRedis, tlsClientOptions } = require('../testing/redis-server.js');
const { threadsNamed } = require('../testing/threads.js');
const { until } = require('../testing/until.js');

const PACKAGE = path.join(__dirname, '..');
const syncerThreads = () => threadsNamed('sds-cluster');

let redis;
let prefixes = 0;
test.before(async () => {
  redis = await startRedis();
});
test.after(() => redis.stop());

/** A key prefix of its own per test, so tests on one server never meet. */
function freshPrefix() {
  return `t${++prefixes}`;
}

/**
 * `body(a, b)` on two private clients syncing `points` with `options` (a
 * fresh key prefix), each `{ client, cluster }` with the `strategies`
 * (`{ point: strategy }`) set; both syncers are closed after.
 */
async function withTwoInstances(points, strategies, body, options = {}) {
  const keyPrefix = freshPrefix();
  const pair = [new Client(), new Client()].map((client) => ({
    client,
    cluster: client.connectCluster({ urls: redis.url, points, keyPrefix, syncMs: 50, ...options }),
  }));
  try {
    for (const { client } of pair) {
      for (const [point, strategy] of Object.entries(strategies)) client.setStrategy(point, strategy);
    }
    return await body(...pair);
  } finally {
    for (const { cluster } of pair) cluster.close();
  }
}

function admitted(client, point, n) {
  let count = 0;
  for (let i = 0; i < n; i++) {
    const entry = client.enter(point);
    if (!entry.downgraded) count++;
    entry.exit();
  }
  return count;
}

/** The cluster's visits of `point` in Redis over the last 30 s (every key the ring may hold). */
async function visitsInRedis(server, keyPrefix, point) {
  const tls = server.tls ? tlsClientOptions(server.tls) : undefined;
  const reader = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, tls });
  await reader.connect();
  try {
    const now = Math.floor(Date.now() / 1000);
    let total = 0;
    for (let s = now - 30; s <= now + 1; s++) total += Number(await reader.hget(`{${keyPrefix}:${point}}:${s}`, 'v'));
    return total;
  } finally {
    reader.disconnect();
  }
}

test('two clients share a cluster point\'s visitThreshold; a local point stays per client', () => {
  const T = 10;
  const strategies = { shared: { visitThreshold: T }, local: { visitThreshold: T } };
  return withTwoInstances(['shared'], strategies, (a, b) => {
    assert.equal(admitted(a.client, 'shared', 6), 6);
    a.cluster.syncNow(); // pushes a's 6 visits
    b.cluster.syncNow(); // reads them as the others' counts
    const ofB = admitted(b.client, 'shared', 10);
    console.log(`T ${T}, bound ${T} (each client synced before the other's turn), admitted ${6 + ofB}`);
    assert.equal(ofB, T - 6);
    b.cluster.syncNow();
    a.cluster.syncNow();
    assert.equal(admitted(a.client, 'shared', 5), 0, 'a sees b\'s visits too');
    assert.equal(admitted(a.client, 'local', 15), T);
    assert.equal(admitted(b.client, 'local', 15), T);
  });
});

test('the syncer threads carry the counts in the background, within the documented bound', async () => {
  // (N - 1) x R x (syncMs + RTT): 2 instances, each a request every 10 ms.
  const T = 40;
  const syncMs = 50;
  await withTwoInstances(['flow'], { flow: { visitThreshold: T } }, async (a, b) => {
    await until(() => a.cluster.status().syncs > 0 && b.cluster.status().syncs > 0, 3000, 'first syncs');
    let total = 0;
    let requests = 0;
    const start = Date.now();
    for (let tick = 0; tick < 2 * T; tick++) {
      for (const { client } of [a, b]) total += admitted(client, 'flow', 1);
      requests++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const rate = requests / ((Date.now() - start) / 1000);
    const rttMs = Math.max(a.cluster.status().rttUs, b.cluster.status().rttUs) / 1000;
    const bound = Math.ceil((2 - 1) * rate * ((syncMs + rttMs) / 1000));
    console.log(`T ${T}, ${requests} requests per client at ${rate.toFixed(0)}/s each, `
      + `bound T + ${bound}, admitted ${total}`);
    assert.ok(total >= T, `admitted ${total} < T`);
    // The bound is "about": a shared machine may delay a sync by a period.
    assert.ok(total <= T + 2 * bound, `admitted ${total} > T + 2 x ${bound}`);
  }, { syncMs });
});

test('status() has every field of the syncer\'s state', async () => {
  const client = new Client();
  const cluster = client.connectCluster({ urls: redis.url, points: ['s1', 's2'], keyPrefix: freshPrefix(), syncMs: 20 });
  try {
    assert.ok(cluster instanceof ClusterSync);
    assert.equal(cluster.client, client);
    assert.equal(cluster.running, true);
    await until(() => cluster.status().syncs >= 2, 3000, 'two syncs');
    const status = cluster.status();
    assert.deepEqual(Object.keys(status).sort(), [
      'commands', 'connected', 'failures', 'lagMs', 'lastError', 'lastSyncMs', 'points', 'pointsFailing',
      'roundTrips', 'rttUs', 'syncing', 'syncs',
    ]);
    assert.equal(status.connected, true);
    assert.equal(status.syncing, true);
    assert.ok(Math.abs(status.lastSyncMs - Date.now()) < 2000, `lastSyncMs ${status.lastSyncMs}`);
    assert.ok(status.lagMs >= 0 && status.lagMs < 2000, `lagMs ${status.lagMs}`);
    assert.ok(status.rttUs > 0, `rttUs ${status.rttUs}`);
    assert.ok(status.roundTrips >= status.syncs, JSON.stringify(status));
    // Per point 11 HMGETs a sync, at least.
    assert.ok(status.commands >= 22 * status.syncs, JSON.stringify(status));
    assert.equal(status.failures, 0);
    assert.equal(status.lastError, null);
    assert.equal(status.points, 2);
    assert.equal(status.pointsFailing, 0);
  } finally {
    cluster.close();
  }
});

test('with Redis stopped, enter/exit keep their speed and the status says so; it reconnects after a restart', async () => {
  const server = await startRedis();
  const keyPrefix = freshPrefix();
  const client = new Client();
  client.setStrategy('p', { visitThreshold: 1e9 });
  const cluster = client.connectCluster({ urls: server.url, points: ['p'], keyPrefix, syncMs: 20, timeoutMs: 300 });
  const point = client.point('p');
  // The median and the slowest of 2000 enter + exit pairs, each timed.
  const timed = () => {
    const ns = [];
    for (let i = 0; i < 2000; i++) {
      const start = process.hrtime.bigint();
      point.enter().exit();
      ns.push(Number(process.hrtime.bigint() - start));
    }
    ns.sort((x, y) => x - y);
    return { median: ns[1000], max: ns[ns.length - 1] };
  };
  let restarted;
  try {
    await until(() => cluster.status().connected, 3000, 'connected');
    const up = timed();
    await server.stop();
    await until(() => !cluster.status().connected && cluster.status().lastError !== null, 3000, 'disconnected');
    const down = timed();
    const status = cluster.status();
    console.log(`enter + exit median ${up.median} ns with Redis up, ${down.median} ns down `
      + `(slowest ${up.max} / ${down.max} ns); status down: ${JSON.stringify(status)}`);
    assert.ok(status.failures > 0);
    assert.match(status.lastError, /./);
    // A call never waits for the network: a blocked one would take timeoutMs (300 ms).
    assert.ok(down.median < 3 * up.median + 20_000, `median ${down.median} ns down, ${up.median} ns up`);
    assert.ok(down.max < 100e6, `slowest ${down.max} ns`);

    restarted = await startRedis({ port: server.port });
    await until(() => cluster.status().connected && cluster.status().lastError === null, 8000, 'reconnected');
    // Every visit of the run is in Redis: the ones made while it was down are pushed after.
    cluster.syncNow();
    assert.equal(await visitsInRedis(restarted, keyPrefix, 'p'), client.stats('p').visit);
  } finally {
    cluster.close();
    if (restarted) await restarted.stop();
    await server.stop();
  }
});

test('bad configs: SDS_INVALID_ARGUMENT with the cluster crate\'s message; nothing is started', () => {
  const client = new Client();
  const refused = (options, message) =>
    assert.throws(() => client.connectCluster(options), { code: 'SDS_INVALID_ARGUMENT', message });
  const invalid = (text) => `invalid cluster configuration: ${text}`;
  refused({ points: ['a'] }, invalid('urls: at least one Redis URL is needed'));
  refused({ urls: [], points: ['a'] }, invalid('urls: at least one Redis URL is needed'));
  refused({ urls: 'http://127.0.0.1:6379', points: ['a'] }, /^invalid cluster configuration: urls.* is not a Redis URL: /);
  refused({ urls: [redis.url, 'not a url'], points: ['a'] }, /^invalid cluster configuration: urls.* is not a Redis URL: /);
  refused({ urls: redis.url, points: ['a'], syncMs: 0 }, invalid('sync_ms and timeout_ms must be at least 1'));
  refused({ urls: redis.url, points: ['a'], timeoutMs: 0 }, invalid('sync_ms and timeout_ms must be at least 1'));
  refused({ urls: redis.url, points: ['x'.repeat(257)] }, invalid(`point name "${'x'.repeat(257)}" must be 1 to 256 bytes`));
  refused({ urls: redis.url, points: [''] }, invalid('point name "" must be 1 to 256 bytes'));
  refused({ urls: redis.url, points: ['a', 'b', 'a'] }, invalid('points[2] "a" is listed twice (also points[0])'));
  refused({ urls: redis.url, points: ['a'], keyPrefix: 'a{b' },
    invalid('key_prefix "a{b" holds a brace, which would break the hash tag'));
  // Types and keys, checked by the crate too (lib/settings.rs only converts).
  refused({ urls: redis.url, points: ['a', 1] }, invalid('points[1] must be text, not 1'));
  refused({ urls: 6379, points: ['a'] }, invalid('urls must be text or a list of text, not 6379'));
  refused({ urls: redis.url, points: ['a'], syncMs: -1 },
    invalid('syncMs must be a whole number of milliseconds from 0 to 18446744073709551615, not -1'));
  refused({ urls: redis.url, points: ['a'], redisCluster: 'yes' },
    invalid('redisCluster must be true or false, not the text "yes"'));
  refused({ url: redis.url, points: ['a'] }, invalid('unknown setting "url"; the settings are: urls, points, '
    + 'redis_cluster, sync_ms, timeout_ms, max_backoff_ms, key_prefix, tls_ca_file, tls_cert_file, tls_key_file '
    + '(or their camelCase spellings)'));
  refused({ urls: redis.url, syncMs: 10, sync_ms: 10 }, invalid('"syncMs" and "sync_ms" are one setting: give it once'));
  refused({ urls: redis.url, points: ['a'], syncInterval: 0.01, syncMs: 10 },
    invalid('"syncInterval" and "syncMs" are one setting: give it once'));
  refused('redis://127.0.0.1:6379', 'connectCluster options must be an object, got a string');
  refused(null, 'connectCluster options must be an object, got null');
  assert.throws(() => client.connectCluster(), { code: 'SDS_INVALID_ARGUMENT', message: invalid('urls: at least one Redis URL is needed') });
  assert.equal(syncerThreads(), 0);
  // Nothing was left connected by the refusals; one URL and one point may be strings.
  const cluster = client.connectCluster({ urls: redis.url, points: 'a', syncInterval: 0.05 });
  assert.equal(cluster.status().points, 1);
  cluster.close();
});

test('close() joins the syncer thread, is idempotent; one sync per client until closed', async () => {
  assert.equal(syncerThreads(), 0, 'no syncer thread left by the tests before');
  const client = new Client();
  const options = { urls: redis.url, points: ['c'], keyPrefix: freshPrefix(), syncMs: 20 };
  const cluster = client.connectCluster(options);
  try {
    // The thread names itself once it runs.
    await until(() => syncerThreads() === 1, 1000, 'the syncer thread named');
    assert.throws(() => client.connectCluster(options), { code: 'SDS_INVALID_ARGUMENT', message: /already has a cluster sync/ });
    await until(() => cluster.status().syncs > 0, 3000, 'a sync');
  } finally {
    cluster.close();
  }
  assert.equal(syncerThreads(), 0);
  assert.equal(cluster.running, false);
  cluster.close();
  const last = cluster.status();
  assert.ok(last.syncs > 0 && last.connected && last.points === 1, 'the last status stays readable');
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(cluster.status(), last, 'as of the join');
  assert.throws(() => cluster.syncNow(), { code: 'SDS_CLOSED', message: 'this cluster sync is closed' });
  await assert.rejects(cluster.enterExact('c'), { code: 'SDS_CLOSED', message: 'this cluster sync is closed' });
  const again = client.connectCluster(options);
  await until(() => syncerThreads() === 1, 1000, 'the new syncer thread named');
  again.close();
  assert.equal(syncerThreads(), 0);
});

test('close() returns within one timeout when Redis accepts and never answers', async () => {
  const sockets = [];
  const silent = require('node:net').createServer((socket) => sockets.push(socket)); // accepts, never answers
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const client = new Client();
  const cluster = client.connectCluster({ urls: `redis://127.0.0.1:${silent.address().port}`, points: ['h'], syncMs: 20, timeoutMs: 300 });
  try {
    await until(() => sockets.length > 0, 2000, 'the syncer connected');
    await new Promise((resolve) => setTimeout(resolve, 50)); // its round trip waits on the silent server
    const start = Date.now();
    cluster.close();
    assert.ok(Date.now() - start < 1000, `close took ${Date.now() - start} ms`);
    assert.equal(syncerThreads(), 0);
    assert.equal(cluster.status().connected, false);
  } finally {
    cluster.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('with Redis paused (SIGSTOP), 20 points: syncNow() within timeoutMs, close() at once', async () => {
  const paused = await startRedis();
  const client = new Client();
  const points = Array.from({ length: 20 }, (_, i) => `p${i}`);
  const cluster = client.connectCluster({ urls: paused.url, points, syncMs: 50, timeoutMs: 1000 });
  try {
    await until(() => cluster.status().syncs > 0, 3000, 'a first sync');
    process.kill(paused.pid, 'SIGSTOP');
    let start = Date.now();
    await until(() => !cluster.status().connected, 3000, 'a timed-out sync');
    const noticed = Date.now() - start;
    assert.match(cluster.status().lastError, /timed out/);
    start = Date.now();
    assert.throws(() => cluster.syncNow(), { code: 'SDS_UNAVAILABLE', message: /timed out/ });
    const syncNow = Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 300)); // the thread's round trip waits on the paused server
    start = Date.now();
    cluster.close();
    const close = Date.now() - start;
    console.log(`Redis paused: disconnected after ${noticed} ms, syncNow ${syncNow} ms, close ${close} ms`);
    assert.ok(noticed < 1500, `noticed after ${noticed} ms`);
    assert.ok(syncNow < 1200, `syncNow took ${syncNow} ms (timeoutMs 1000)`);
    assert.ok(close < 500, `close took ${close} ms`);
    assert.equal(syncerThreads(), 0);
  } finally {
    cluster.close();
    process.kill(paused.pid, 'SIGCONT');
    await paused.stop();
  }
});

test('a shared table has one syncer per host', () => {
  const file = path.join(os.tmpdir(), `sds-cluster-${process.pid}.sds`);
  const first = new Client({ capacity: 64, shared: file });
  const second = new Client({ capacity: 64, shared: file });
  const options = { urls: redis.url, points: ['h'], keyPrefix: freshPrefix() };
  const a = first.connectCluster(options);
  const b = second.connectCluster(options);
  try {
    // One process: one attachment, whose role the first cluster took.
    assert.deepEqual([a.status().syncing, b.status().syncing], [true, false]);
  } finally {
    a.close();
    b.close();
    fs.rmSync(file, { force: true });
  }
});

test('exact mode: two clients admit exactly visitThreshold, decided in Redis', async () => {
  const T = 5;
  await withTwoInstances(['x'], { x: { visitThreshold: T }, local: { visitThreshold: T } }, async (a, b) => {
    const decisions = [];
    for (let i = 0; i < 8; i++) {
      for (const { cluster } of [a, b]) decisions.push(await cluster.enterExact('x'));
    }
    const admittedCount = decisions.filter((d) => d.admitted).length;
    console.log(`exact mode: T ${T}, admitted ${admittedCount} of ${decisions.length}`);
    assert.equal(admittedCount, T);
    assert.ok(decisions.every((d) => d.exact), JSON.stringify(decisions));
    assert.deepEqual(decisions[0], { admitted: true, reason: null, exact: true });
    assert.deepEqual(decisions.at(-1), { admitted: false, reason: 'VISIT', exact: true });
    // Concurrent calls, on the thread pool, see each other.
    await withTwoInstances(['y'], { y: { visitThreshold: T } }, async (c, d) => {
      const all = await Promise.all(Array.from({ length: 12 }, (_, i) => [c, d][i % 2].cluster.enterExact('y', Date.now())));
      assert.equal(all.filter((x) => x.admitted).length, T);
    });
    await assert.rejects(a.cluster.enterExact('local'),
      { code: 'SDS_INVALID_ARGUMENT', message: /point "local" is not a cluster point of this cluster/ });
    await assert.rejects(a.cluster.enterExact(5), { code: 'SDS_INVALID_ARGUMENT', message: 'point name must be a string, got a number' });
    await assert.rejects(a.cluster.enterExact('x', -1), { code: 'SDS_INVALID_ARGUMENT', message: /^nowMs: / });
  });
});

test('exact mode without Redis: the local decision, not exact', async () => {
  const client = new Client();
  client.setStrategy('z', { visitThreshold: 1 });
  const cluster = client.connectCluster({ urls: 'redis://127.0.0.1:1', points: ['z'], timeoutMs: 200 });
  try {
    assert.deepEqual(await cluster.enterExact('z'), { admitted: true, reason: null, exact: false });
    assert.deepEqual(await cluster.enterExact('z'), { admitted: false, reason: 'VISIT', exact: false });
    assert.equal(client.stats('z').visit, 2, 'counted in the table');
  } finally {
    cluster.close();
  }
});

/**
 * `fn(dir, own)` with a temporary directory, removed after it; `own(x)`
 * gives back x (a ClusterSync or a server) and closes or stops it after
 * `fn`, also when `fn` fails.
 */
async function withCleanup(fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-tls-'));
  const owned = [];
  const own = (x) => { owned.push(x); return x; };
  try {
    return await fn(dir, own);
  } finally {
    for (const x of owned.reverse()) {
      if (x instanceof ClusterSync) x.close();
      else await x.stop();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A client whose cluster point 'pay' (visitThreshold 10) syncs with `options` by hand (syncNow). */
function tlsInstance(own, options) {
  const client = new Client();
  client.setStrategy('pay', { visitThreshold: 10 });
  const cluster = own(client.connectCluster({ points: ['pay'], syncMs: 3_600_000, timeoutMs: 2000, ...options }));
  return { client, cluster };
}

test('rediss:// with tlsCaFile: two clients share a limit, exact mode decides in Redis', async () => {
  await withCleanup(async (dir, own) => {
    const server = own(await startRedis({ tls: makePki(dir) }));
    assert.match(server.url, /^rediss:\/\//);
    const keyPrefix = freshPrefix();
    const options = { urls: server.url, tlsCaFile: server.tls.ca, keyPrefix };
    const a = tlsInstance(own, options);
    const b = tlsInstance(own, options);
    assert.equal(admitted(a.client, 'pay', 6), 6);
    a.cluster.syncNow();
    b.cluster.syncNow();
    assert.equal(admitted(b.client, 'pay', 10), 4, '10 cluster-wide');
    b.cluster.syncNow();
    assert.equal(await visitsInRedis(server, keyPrefix, 'pay'), 16);
    const status = b.cluster.status();
    assert.equal(status.connected, true, JSON.stringify(status));
    assert.equal(status.lastError, null);
    assert.deepEqual(await a.cluster.enterExact('pay'), { admitted: false, reason: 'VISIT', exact: true });
  });
});

test('a server whose certificate another CA signed: not connected (UnknownIssuer), the local limit holds', async () => {
  await withCleanup(async (dir, own) => {
    const server = own(await startRedis({ tls: makePki(path.join(dir, 'server')) }));
    const other = makePki(path.join(dir, 'other'));
    const keyPrefix = freshPrefix();
    const a = tlsInstance(own, { urls: server.url, tlsCaFile: other.ca, keyPrefix });
    assert.throws(() => a.cluster.syncNow(), { code: 'SDS_UNAVAILABLE', message: /^redis: / });
    const status = a.cluster.status();
    assert.equal(status.connected, false, JSON.stringify(status));
    assert.equal(status.syncs, 0);
    assert.match(status.lastError, /UnknownIssuer/);
    assert.equal(admitted(a.client, 'pay', 12), 10, 'the local limit');
    assert.deepEqual(await a.cluster.enterExact('pay'), { admitted: false, reason: 'VISIT', exact: false });
    assert.equal(await visitsInRedis(server, keyPrefix, 'pay'), 0);
  });
});

test('mutual TLS: with tlsCertFile and tlsKeyFile it syncs; without them it is refused', async () => {
  await withCleanup(async (dir, own) => {
    const server = own(await startRedis({ tls: makePki(dir), mutualTls: true }));
    const keyPrefix = freshPrefix();
    const options = { urls: server.url, tlsCaFile: server.tls.ca, keyPrefix };
    const a = tlsInstance(own, { ...options, tlsCertFile: server.tls.clientCert, tlsKeyFile: server.tls.clientKey });
    assert.equal(admitted(a.client, 'pay', 3), 3);
    a.cluster.syncNow();
    assert.equal(await visitsInRedis(server, keyPrefix, 'pay'), 3);
    assert.equal(a.cluster.status().connected, true);

    const b = tlsInstance(own, options);
    assert.throws(() => b.cluster.syncNow(), { code: 'SDS_UNAVAILABLE', message: /^redis: / });
    const status = b.cluster.status();
    assert.equal(status.connected, false, JSON.stringify(status));
    assert.equal(status.syncs, 0);
    assert.match(status.lastError, /./);
    assert.equal(admitted(b.client, 'pay', 10), 10, 'its own local limit only');
  });
});

test('bad TLS options: SDS_INVALID_ARGUMENT with the cluster crate\'s message', async () => {
  await withCleanup(async (dir) => {
    const pki = makePki(dir);
    const client = new Client();
    const tlsUrl = 'rediss://127.0.0.1:1';
    const refused = (options, message) =>
      assert.throws(() => client.connectCluster({ points: ['a'], ...options }), { code: 'SDS_INVALID_ARGUMENT', message });
    refused({ urls: tlsUrl, tlsCaFile: '/nonexistent/sds-ca.pem' },
      /^invalid cluster configuration: tls_ca_file \/nonexistent\/sds-ca.pem: No such file/);
    refused({ urls: 'redis://127.0.0.1:1', tlsCaFile: pki.ca },
      'invalid cluster configuration: urls[0]: TLS files are given, so every URL must be rediss://');
    refused({ urls: tlsUrl, tlsCaFile: pki.ca, tlsCertFile: pki.clientCert }, /tls_key_file/);
    refused({ urls: tlsUrl, tlsKeyFile: pki.clientKey }, /tls_cert_file and tls_key_file go together/);
    refused({ urls: tlsUrl, tlsCertFile: pki.clientCert, tlsKeyFile: pki.ca }, /^invalid cluster configuration: TLS files: /);
    // Types, checked by the crate: paths are strings, null is none.
    refused({ urls: tlsUrl, tlsCaFile: 5 }, 'invalid cluster configuration: tlsCaFile must be a path (text) or null, not 5');
    refused({ urls: tlsUrl, tlsCertFile: Buffer.from(pki.clientCert), tlsKeyFile: pki.clientKey },
      'invalid cluster configuration: tlsCertFile must be a path (text) or null, not a value of type Buffer');
    refused({ urls: tlsUrl, tlsCertFile: pki.clientCert, tlsKeyFile: new URL(`file://${pki.clientKey}`) },
      'invalid cluster configuration: tlsKeyFile must be a path (text) or null, not a value of type URL');
    refused({ urls: tlsUrl, tlsCa: pki.ca }, /^invalid cluster configuration: unknown setting "tlsCa"; /);
    client.connectCluster({ urls: tlsUrl, points: ['a'], tlsCaFile: null }).close();
    assert.equal(syncerThreads(), 0);
    // All three, well formed: it starts (and never waits for the server).
    client.connectCluster({
      urls: tlsUrl, points: ['a'], tlsCaFile: pki.ca, tlsCertFile: pki.clientCert, tlsKeyFile: pki.clientKey,
    }).close();
  });
});

test('a process that ends with a syncer running exits normally and promptly', async () => {
  const source = `
    const { Client } = require(${JSON.stringify(PACKAGE)});
    const client = new Client();
    const cluster = client.connectCluster({ urls: ${JSON.stringify(redis.url)}, points: ['p'], syncMs: 20 });
    setTimeout(() => console.log('connected', cluster.status().connected), 300);
  `;
  // Killed (and failed) if the syncer held it open.
  const { code, output, ms } = await runScript(source);
  assert.equal(code, 0);
  assert.equal(output, 'connected true\n');
  assert.ok(ms < 5000, `exited after ${ms} ms`);
});

test('a worker thread\'s syncer stops when the worker ends', { timeout: 10000 }, async () => {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Client } = require(${JSON.stringify(PACKAGE)});
    const client = new Client();
    const cluster = client.connectCluster({ urls: workerData.url, points: ['w'], syncMs: 20 });
    const poll = setInterval(() => {
      if (!cluster.status().connected) return;
      clearInterval(poll);
      parentPort.postMessage('connected');
    }, 10);
  `;
  const worker = new Worker(source, { eval: true, workerData: { url: redis.url } });
  // Listened for now: a worker that ends before its message is read has both
  // emitted in one tick, the message first.
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const message = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  assert.equal(message, 'connected');
  const code = await exited;
  assert.equal(code, 0);
  assert.equal(syncerThreads(), 0);
});
