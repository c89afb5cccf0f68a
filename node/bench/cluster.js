'use strict';
// A cluster point (client.connectCluster, synced with a real redis-server
// every 100 ms by its thread) against a local point of the same client, and
// against rate-limiter-flexible's RateLimiterRedis (ioredis) on the SAME
// redis-server; exact mode (one Redis round trip per decision) for scale.
//
// Wall time (the syncer and Redis run beside the measured thread), cases
// interleaved round by round, median of the rounds. A peer's figure is one
// consume awaited before the next, as a request handler awaits it.
// Run: node bench/cluster.js (from node/; make bench-node runs it).
const { startRedis } = require('../testing/redis-server');

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 7;
const SYNC_OPS = 200_000;
const ASYNC_OPS = 2_000;
// Thresholds that never trip: every case measures the admitting path.
const NEVER = 1e12;

function timeSync(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < SYNC_OPS; i++) fn();
  return Number(process.hrtime.bigint() - start) / SYNC_OPS;
}

async function timeAwaited(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ASYNC_OPS; i++) await fn();
  return Number(process.hrtime.bigint() - start) / ASYNC_OPS;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const { RateLimiterRedis } = require('rate-limiter-flexible');
  const Redis = require('ioredis');
  const { Client } = require('..');
  const redis = await startRedis();
  let redisClient;
  let cluster;
  try {
    const client = new Client();
    for (const name of ['local', 'cluster']) client.setStrategy(name, { visitThreshold: NEVER, concurrentThreshold: 1000 });
    cluster = client.connectCluster({ urls: redis.url, points: ['cluster'] });
    const local = client.point('local');
    const clustered = client.point('cluster');
    redisClient = new Redis({ host: '127.0.0.1', port: redis.port });
    await new Promise((resolve, reject) => { redisClient.once('ready', resolve); redisClient.once('error', reject); });
    const onRedis = new RateLimiterRedis({ storeClient: redisClient, points: NEVER, duration: 1 });

    const sync = {
      'local point.enter().exit()': () => { local.enter().exit(); },
      'cluster point.enter().exit()': () => { clustered.enter().exit(); },
    };
    const awaited = {
      'RateLimiterRedis consume, awaited one by one': () => onRedis.consume('bench'),
      'cluster enterExact (exact mode), awaited one by one': () => cluster.enterExact('cluster'),
    };
    const samples = {};
    const record = (name, ns) => { (samples[name] ||= []).push(ns); };
    const before = { ...cluster.status(), at: Date.now() };
    for (let round = -1; round < ROUNDS; round++) { // round -1 warms up
      for (const [name, fn] of Object.entries(sync)) record(name, timeSync(fn));
      for (const [name, fn] of Object.entries(awaited)) record(name, await timeAwaited(fn));
    }
    const after = { ...cluster.status(), at: Date.now() };
    const ns = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, median(s.slice(1))]));
    report(ns, before, after);
  } finally {
    if (cluster) cluster.close();
    if (redisClient) redisClient.disconnect();
    await redis.stop();
  }
}

function report(ns, before, after) {
  const base = ns['cluster point.enter().exit()'];
  const rlf = require('rate-limiter-flexible/package.json').version;
  const ioredis = require('ioredis/package.json').version;
  console.log(`node ${process.version}, rate-limiter-flexible ${rlf}, ioredis ${ioredis}, one redis-server on loopback, `
    + `median wall ns/op of ${ROUNDS} rounds`);
  console.log('| case | ns/op | vs cluster point.enter().exit() |');
  console.log('| --- | ---: | ---: |');
  for (const [name, value] of Object.entries(ns)) {
    console.log(`| ${name} | ${value.toFixed(1)} | ${(value / base).toFixed(2)}x |`);
  }
  const overLocal = base / ns['local point.enter().exit()'];
  console.log(`goal: cluster point <= 1.5x a local point: ${overLocal.toFixed(2)}x ${overLocal <= 1.5 ? 'met' : 'NOT met'}`);
  const peer = ns['RateLimiterRedis consume, awaited one by one'] / base;
  console.log(`goal: cluster point >= 100x faster than RateLimiterRedis consume: ${peer.toFixed(0)}x `
    + `${peer >= 100 ? 'met' : 'NOT met'}`);
  const seconds = (after.at - before.at) / 1000;
  console.log(`syncer traffic: ${((after.roundTrips - before.roundTrips) / seconds).toFixed(1)} round trips/s, `
    + `${((after.commands - before.commands) / seconds).toFixed(0)} commands/s (1 point, syncMs 100), `
    + `last RTT ${after.rttUs} us, failures ${after.failures}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
