'use strict';
// sds-native on a table shared by the host's processes against what the
// workers of a Node cluster would otherwise share a limit through:
// rate-limiter-flexible's RateLimiterCluster (a RateLimiterMemory in the
// primary, asked over the cluster's IPC) and RateLimiterRedis (ioredis, a
// real redis-server over loopback); and sds-native on a private table.
//
// The primary starts redis-server and RateLimiterClusterMaster and forks one
// worker, which measures every case (wall time: the peers' answers come from
// other processes), interleaved round by round, and prints the median ns/op.
// A peer's per-decision figure is its latency: one consume awaited before the
// next, as a request handler awaits it. Its throughput with many calls in
// flight at once is printed too, as a second figure.
// Run: node bench/shared-table.js (from node/; make bench-node runs it).
const cluster = require('node:cluster');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ASYNC_OPS, timeSync, timeAwaited, medians, printTable } = require('../testing/timing.js');

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 5;
const IN_FLIGHT = 100;

async function primary() {
  const { RateLimiterClusterMaster } = require('rate-limiter-flexible');
  const { startRedis } = require('../testing/redis-server');
  const redis = await startRedis();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-bench-'));
  let code = 1;
  try {
    // Answers the workers' RateLimiterCluster over the cluster's IPC.
    new RateLimiterClusterMaster();
    const worker = cluster.fork({
      SDS_BENCH_TABLE: path.join(dir, 'bench.sds'),
      SDS_BENCH_REDIS_PORT: String(redis.port),
    });
    code = await new Promise((resolve) => worker.once('exit', (c) => resolve(c)));
  } finally {
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = code;
}

// Thresholds that never trip, so every case measures the admitting path
// (sds-native still counts a 10 s window and takes a permit).
const NEVER = 1e12;

function sdsCases(label, client) {
  client.setStrategy('bench', { visitThreshold: NEVER, concurrentThreshold: 1000 });
  const point = client.point('bench');
  return {
    [`sds ${label} point.enter().exit()`]: () => { point.enter().exit(); },
    [`sds ${label} client.enter(name).exit()`]: () => { client.enter('bench').exit(); },
  };
}

async function timeInFlight(consume) {
  const start = process.hrtime.bigint();
  for (let done = 0; done < ASYNC_OPS * 5; done += IN_FLIGHT) {
    await Promise.all(Array.from({ length: IN_FLIGHT }, consume));
  }
  return Number(process.hrtime.bigint() - start) / (ASYNC_OPS * 5);
}

async function worker() {
  const { RateLimiterCluster, RateLimiterRedis } = require('rate-limiter-flexible');
  const Redis = require('ioredis');
  const { Client } = require('..');

  const shared = new Client({ capacity: 1024, shared: process.env.SDS_BENCH_TABLE });
  const sync = { ...sdsCases('shared', shared), ...sdsCases('private', new Client({ capacity: 1024 })) };
  const redisClient = new Redis({ host: '127.0.0.1', port: Number(process.env.SDS_BENCH_REDIS_PORT), lazyConnect: true });
  await redisClient.connect();
  const onCluster = new RateLimiterCluster({ keyPrefix: 'bench', points: NEVER, duration: 1, timeoutMs: 10_000 });
  const onRedis = new RateLimiterRedis({ storeClient: redisClient, points: NEVER, duration: 1 });
  const peers = {
    'RateLimiterCluster consume': () => onCluster.consume('bench'),
    'RateLimiterRedis consume': () => onRedis.consume('bench'),
  };

  const ns = await medians(ROUNDS, async (record) => {
    for (const [name, fn] of Object.entries(sync)) record(name, timeSync(fn));
    for (const [name, consume] of Object.entries(peers)) {
      record(`${name}, awaited one by one`, await timeAwaited(consume));
      record(`${name}, ${IN_FLIGHT} in flight`, await timeInFlight(consume));
    }
  });
  report(ns);
  redisClient.disconnect();
  process.exit(0);
}

function report(ns) {
  const rlf = require('rate-limiter-flexible/package.json').version;
  const ioredis = require('ioredis/package.json').version;
  console.log(`node ${process.version}, rate-limiter-flexible ${rlf}, ioredis ${ioredis}, one cluster worker, `
    + `median wall ns/op of ${ROUNDS} rounds`);
  const base = printTable(ns, 'sds shared point.enter().exit()', undefined, 1);
  const privateRatio = base / ns['sds private point.enter().exit()'];
  const byName = ns['sds shared client.enter(name).exit()'] / ns['sds private client.enter(name).exit()'];
  console.log(`shared / private: ${privateRatio.toFixed(2)}x (point), ${byName.toFixed(2)}x (by name)`);
  const slowest = Math.max(base, ns['sds shared client.enter(name).exit()']);
  for (const peer of ['RateLimiterCluster consume', 'RateLimiterRedis consume']) {
    const ratio = ns[`${peer}, awaited one by one`] / slowest;
    console.log(`goal: shared enter + exit >= 100x faster than ${peer} (awaited): ${ratio.toFixed(0)}x `
      + `${ratio >= 100 ? 'met' : 'NOT met'}; with ${IN_FLIGHT} in flight `
      + `${(ns[`${peer}, ${IN_FLIGHT} in flight`] / slowest).toFixed(0)}x`);
  }
}

const main = cluster.isPrimary ? primary : worker;
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
