'use strict';
// Adaptive concurrency with sds-native: a "search" downstream with 10
// workers and 20 ms per request (capacity 500 a second) that queues beyond
// them, so its latency grows with the requests in flight past 10. Traffic
// arrives at 750 a second, 1.5 times its capacity. The same load runs
// through a point with a fixed concurrentThreshold set too high (200), then
// through adaptive limits that find the knee from latency alone. Every
// 500 ms: the limit (stats().adaptiveLimit), the latency of the calls that
// went through and how many were refused.
// Run from the repository root: node examples/node/adaptive.js (about 8 s).
// In your own project: require('sds-native').
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require('../../node');

const WORKERS = 10;
const SERVICE_MS = 20;
const ARRIVALS_PER_S = 750;
const SECONDS = 2.5;

/** The downstream: 10 workers behind a FIFO queue. */
function makeDownstream() {
  let busy = 0;
  const queue = [];
  const finish = () => {
    busy--;
    if (queue.length > 0) start(queue.shift());
  };
  const start = (resolve) => {
    busy++;
    setTimeout(() => {
      finish();
      resolve();
    }, SERVICE_MS);
  };
  return () => new Promise((resolve) => (busy < WORKERS ? start(resolve) : queue.push(resolve)));
}

function p(sorted, q) {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function row(label, strategy) {
  const client = new Client();
  client.setStrategy('search', strategy);
  const search = client.point('search');
  const downstream = makeDownstream();
  let latencies = [];
  let refused = 0;
  let served = 0;
  const lines = [];
  const start = performance.now();
  let sent = 0;
  let nextReport = 500;
  const pending = new Set();
  while (performance.now() - start < SECONDS * 1000) {
    // Open-loop arrivals: as many as are due by now.
    const due = Math.floor(((performance.now() - start) / 1000) * ARRIVALS_PER_S);
    for (; sent < due; sent++) {
      const t0 = performance.now();
      const call = search.run(
        async () => {
          await downstream();
          latencies.push(performance.now() - t0);
          served++;
        },
        () => {
          refused++;
        },
      );
      if (call instanceof Promise) {
        pending.add(call);
        call.finally(() => pending.delete(call));
      }
    }
    if (performance.now() - start >= nextReport) {
      const sorted = latencies.sort((a, b) => a - b);
      const s = search.stats();
      const limit = strategy.adaptiveConcurrency ? s.adaptiveLimit : strategy.concurrentThreshold;
      lines.push(`  ${String(nextReport).padStart(5)} ms  limit ${String(limit).padStart(4)}  in flight ${String(s.concurrent).padStart(4)}` +
        `  served ${String(served).padStart(4)}  refused ${String(refused).padStart(4)}` +
        `  latency p50 ${p(sorted, 0.5).toFixed(0).padStart(4)} ms  p99 ${p(sorted, 0.99).toFixed(0).padStart(4)} ms`);
      latencies = [];
      served = 0;
      refused = 0;
      nextReport += 500;
    }
    await sleep(2);
  }
  await Promise.all(pending);
  console.log(`${label}: ${JSON.stringify(strategy)}`);
  for (const line of lines) console.log(line);
}

async function main() {
  console.log(`downstream: ${WORKERS} workers x ${SERVICE_MS} ms (capacity ${(WORKERS * 1000) / SERVICE_MS}/s), ` +
    `traffic ${ARRIVALS_PER_S}/s; per 500 ms:`);
  await row('fixed, too high', { concurrentThreshold: 200 });
  await row('Envoy\'s gradient', { adaptiveConcurrency: 4 });
  await row('Vegas', { adaptiveConcurrency: 2, adaptiveInitialLimit: 10 });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
