'use strict';
// Wall-clock timings the benchmarks share: ns per call of `fn` over `ops`
// calls, called one after the other (awaited, for the async ones).

const SYNC_OPS = 200_000;
const ASYNC_OPS = 2_000;

function timeSync(fn, ops = SYNC_OPS) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) fn();
  return Number(process.hrtime.bigint() - start) / ops;
}

async function timeAwaited(fn, ops = ASYNC_OPS) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await fn();
  return Number(process.hrtime.bigint() - start) / ops;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Runs `round(record)` a first time to warm up, then `rounds` times, where
 * `record(name, ns)` keeps one figure of a case: each case's median of the
 * rounds after the warm-up, by name.
 */
async function medians(rounds, round) {
  const samples = {};
  const record = (name, ns) => { (samples[name] ||= []).push(ns); };
  for (let i = -1; i < rounds; i++) await round(record);
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, median(s.slice(1))]));
}

/**
 * Prints `ns` (ns/op by case) as a Markdown table, each case also as a
 * multiple of the case `base`'s figure (`label` names it); returns that figure.
 */
function printTable(ns, base, label = base, digits = 2) {
  console.log(`| case | ns/op | vs ${label} |`);
  console.log('| --- | ---: | ---: |');
  for (const [name, value] of Object.entries(ns)) {
    console.log(`| ${name} | ${value.toFixed(1)} | ${(value / ns[base]).toFixed(digits)}x |`);
  }
  return ns[base];
}

module.exports = { ASYNC_OPS, timeSync, timeAwaited, medians, printTable };
