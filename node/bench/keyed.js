'use strict';
// ns per KeyedLimit call (CPU time, median of 7 rounds of 10^6 calls over
// 1000 keys, a rate that admits them all), with a point pair and
// rate-limiter-flexible's RateLimiterMemory.consume for scale: node bench/keyed.js
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KeyedLimit, Client } = require('..');
const { RateLimiterMemory } = require('rate-limiter-flexible');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-keyed-bench-'));
const OPS = 1_000_000, ROUNDS = 7;
const N = 1000;
const keys = Array.from({ length: N }, (_, i) => `user-${i}`);
const bufs = keys.map((k) => Buffer.from(k));
const rate = new KeyedLimit({ kind: 'rate', limit: 1e6, periodMs: 1000 }, { capacity: 4096 });
const win = new KeyedLimit({ kind: 'fixedWindow', limit: 1e6, periodMs: 60000, windowFromFirstHit: true }, { capacity: 4096 });
const shared = KeyedLimit.shared(path.join(dir, 'bench.sds'), { kind: 'rate', limit: 1e6, periodMs: 1000 }, { capacity: 4096 });
const client = new Client(); client.setStrategy('p', { visitThreshold: 1e12 }); const point = client.point('p');
const longKey = 'k'.repeat(300);
let sink = 0;
const cases = {
  'rate.decide(stringKey)': (i) => { sink += rate.decide(keys[i % N]).remaining; },
  'rate.decide(stringKey, 1, nowMs)': (i) => { sink += rate.decide(keys[i % N], 1, 5000).remaining; },
  'rate.decide(Buffer)': (i) => { sink += rate.decide(bufs[i % N]).remaining; },
  'rate.decide(300-byte key)': () => { sink += rate.decide(longKey).remaining; },
  'shared rate.decide(stringKey)': (i) => { sink += shared.decide(keys[i % N]).remaining; },
  'window.increment(stringKey)': (i) => { sink += win.increment(keys[i % N]).count; },
  'rate.peek(stringKey)': (i) => { sink += rate.peek(keys[i % N]).remaining; },
  'point.enter().exit() (reference)': () => { point.enter().exit(); },
  'rate-limiter-flexible consume (reference)': (i) => { flexible.consume(keys[i % N]).catch(() => {}); },
};
const flexible = new RateLimiterMemory({ points: 1e12, duration: 1 });
const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) * 1000; };
async function time(fn) { const s = cpu(); for (let i = 0; i < OPS; i++) { fn(i); if (i % 50000 === 0) await null; } return (cpu() - s) / OPS; }
(async () => {
  const samples = {};
  for (let r = -1; r < ROUNDS; r++) for (const [n, f] of Object.entries(cases)) { const t = await time(f); if (r >= 0) (samples[n] ||= []).push(t); }
  for (const [n, s] of Object.entries(samples)) { s.sort((a, b) => a - b); console.log(`${n.padEnd(45)} ${s[ROUNDS >> 1].toFixed(1)} ns`); }
  shared.close();
  fs.rmSync(dir, { recursive: true, force: true });
})();
