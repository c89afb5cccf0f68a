'use strict';
// Pacing and warm-up with sds-native: a "payments" downstream that takes at
// most 10 calls a second. The point paces its rate: a burst is spaced 100 ms
// apart (entry.waitMs), run() waits each request's turn with a timer, and a
// request whose wait would pass maxQueueingTimeMs gets the fallback at once.
// Then warm-up: a cold point admits a third of its rate and climbs.
// Run from the repository root: node examples/node/pacing.js (about 1 s).
// In your own project: require('sds-native').
const { performance } = require('node:perf_hooks');
const { Client } = require('../../node');

const client = new Client();
client.setStrategy('payments', { tokenBucketGeneratedTokensInSecond: 10, maxQueueingTimeMs: 500 });
const payments = client.point('payments');

async function main() {
  // The decisions at one instant (explicit time): the waits the core gives.
  const T = Date.now();
  const scratch = new Client();
  scratch.setStrategy('payments', { tokenBucketGeneratedTokensInSecond: 10, maxQueueingTimeMs: 500 });
  const decided = [];
  for (let i = 0; i < 8; i++) {
    const entry = scratch.enter('payments', { nowMs: T });
    decided.push(entry.downgraded ? entry.reason : `${entry.waitMs} ms`);
    entry.exit(T);
  }
  console.log(`8 requests at one instant, 10/s, queue at most 500 ms: ${decided.join(', ')}`);

  // The sugar: run() awaits each admitted request's wait before calling fn.
  console.log('the same burst through run(), each call timed from the burst:');
  const t0 = performance.now();
  const calls = Array.from({ length: 8 }, (_, i) =>
    payments.run(
      async () => `request ${i}: called after ${(performance.now() - t0).toFixed(0)} ms`,
      () => `request ${i}: its wait would pass 500 ms, fallback at once (${(performance.now() - t0).toFixed(0)} ms)`,
    ),
  );
  for (const line of await Promise.all(calls)) console.log(`  ${line}`);

  // Warm-up: 10/s over 10 s with cold factor 3, 20 requests a second at
  // explicit times from a whole second (the core syncs its tokens once a
  // second): 3 admitted in the first second, climbing to 10.
  const S = Math.ceil(Date.now() / 1000) * 1000;
  const warm = new Client();
  warm.setStrategy('search', { tokenBucketGeneratedTokensInSecond: 10, warmUpPeriodSec: 10, coldFactor: 3 });
  const perSecond = [];
  for (let second = 0; second < 20; second++) {
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      const at = S + second * 1000 + i * 50;
      const entry = warm.enter('search', { nowMs: at });
      if (!entry.downgraded) admitted++;
      entry.exit(at);
    }
    perSecond.push(admitted);
  }
  console.log(`warm-up 10/s over 10 s, cold factor 3, admitted per second: ${perSecond.join(' ')}`);
}

main();
