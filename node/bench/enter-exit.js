'use strict';
// sds-native's hot path against the limiters Node services use today, in one
// process, interleaved round by round; prints the median ns/op of each and
// its time over sds-native's enter+exit (above 1, slower than sds-native).
// Run: node bench/enter-exit.js [ops]. The floor case needs an addon built
// with the cargo feature bench-hooks (`make bench-node` builds one and points
// SDS_NATIVE_ADDON at it); the package's addon has no such hooks.
const { RateLimiterMemory } = require('rate-limiter-flexible');
const { RateLimiter } = require('limiter');
const { Client } = require('..');
const { medians, printTable } = require('../testing/timing.js');

const OPS = Number(process.argv[2]) || 500_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 7;
const BATCH = 1000;

// Thresholds that never trip, so every case measures the admitting path.
// sds-native still counts a 10 s sliding window and takes a permit.
const client = new Client();
client.setStrategy('bench', { visitThreshold: 1e12, concurrentThreshold: 1000 });
const point = client.point('bench');
const flexible = new RateLimiterMemory({ points: 1e12, duration: 1 });
const limiter = new RateLimiter({ tokensPerInterval: 1e12, interval: 'second' });
const work = () => 1;
// The floor of any enter + exit through N-API: one native call that reads
// the clock and one that does nothing, with no counting at all.
const hot = client._hot;
const FLOOR = 'floor: 2 empty native calls, 1 clock read';

let sink = 0;
const cases = {
  'sds point.enter().exit()': () => { point.enter().exit(); },
  'sds client.enter(name).exit()': () => { client.enter('bench').exit(); },
  'sds point.run(fn)': () => { sink += point.run(work); },
  'rate-limiter-flexible consume': () => { flexible.consume('bench'); },
  'limiter tryRemoveTokens': () => { sink += limiter.tryRemoveTokens(1) ? 1 : 0; },
};
if (typeof hot.emptyCall === 'function') cases[FLOOR] = () => { hot.readClock(); hot.emptyCall(); };

// CPU time of this process, not wall time: the machine this runs on is
// shared, and a case that loses its core for a while must not look slower.
function cpuNs() {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

async function time(fn) {
  const start = cpuNs();
  for (let done = 0; done < OPS; done += BATCH) {
    for (let i = 0; i < BATCH; i++) fn();
    // consume() returns promises: let them settle between batches.
    if (done % (BATCH * 50) === 0) await null;
  }
  return (cpuNs() - start) / OPS;
}

async function main() {
  const ns = await medians(ROUNDS, async (record) => {
    for (const [name, fn] of Object.entries(cases)) record(name, await time(fn));
  });
  console.log(`node ${process.version}, ${OPS} ops x ${ROUNDS} rounds, median CPU ns/op`);
  const base = printTable(ns, 'sds point.enter().exit()', 'sds enter+exit');
  const flexibleRatio = ns['rate-limiter-flexible consume'] / base;
  const limiterRatio = ns['limiter tryRemoveTokens'] / base;
  const target = ns['rate-limiter-flexible consume'] / 3;
  console.log(`goal enter+exit >= 3x faster than consume: ${flexibleRatio.toFixed(2)}x ${flexibleRatio >= 3 ? 'met' : 'NOT met'}`);
  if (ns[FLOOR]) {
    const floor = ns[FLOOR];
    console.log(`  3x needs <= ${target.toFixed(1)} ns a pair; the N-API floor of a pair is ${floor.toFixed(1)} ns, leaving ${(target - floor).toFixed(1)} ns for the decision (the core's pair alone: about 40 ns, cargo bench)`);
  }
  console.log(`goal enter+exit faster than tryRemoveTokens: ${limiterRatio.toFixed(2)}x ${limiterRatio > 1 ? 'met' : 'NOT met'}`);
  if (sink === -1) console.log(sink);
}

main();
