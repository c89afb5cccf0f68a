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
const { timeSync, timeAwaited, medians, printTable } = require('../testing/timing.js');

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 7;
// Thresholds that never trip: every case measures the admitting path.
const NEVER = 1e12;

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
    redisClient = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await redisClient.connect();
    const onRedis = new RateLimiterRedis({ storeClient: redisClient, points: NEVER, duration: 1 });

    const sync = {
      'local point.enter().exit()': () => { local.enter().exit(); },
      'cluster point.enter().exit()': () => { clustered.enter().exit(); },
    };
    const awaited = {
      'RateLimiterRedis consume, awaited one by one': () => onRedis.consume('bench'),
      'cluster enterExact (exact mode), awaited one by one': () => cluster.enterExact('cluster'),
    };
    const before = { ...cluster.status(), at: Date.now() };
    const ns = await medians(ROUNDS, async (record) => {
      for (const [name, fn] of Object.entries(sync)) record(name, timeSync(fn));
      for (const [name, fn] of Object.entries(awaited)) record(name, await timeAwaited(fn));
    });
    const after = { ...cluster.status(), at: Date.now() };
    report(ns, before, after);
  } finally {
    if (cluster) cluster.close();
    if (redisClient) redisClient.disconnect();
    await redis.stop();
  }
}

function report(ns, before, after) {
  const rlf = require('rate-limiter-flexible/package.json').version;
  const ioredis = require('ioredis/package.json').version;
  console.log(`node ${process.version}, rate-limiter-flexible ${rlf}, ioredis ${ioredis}, one redis-server on loopback, `
    + `median wall ns/op of ${ROUNDS} rounds`);
  const base = printTable(ns, 'cluster point.enter().exit()');
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
