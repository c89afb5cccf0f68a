'use strict';
// The Node side of the cross-language test: one process on the shared
// table, driven line by line by run.py (protocol in crosslang/README.md).
const readline = require('node:readline');
const { Client, KeyedLimit } = require('../node');

// The keyed limit every worker opens beside the table (README's `decide`).
const KEY_RULE = '{"kind":"fixedWindow","limit":5,"periodMs":60000}';
const KEY_CAPACITY = 64;

const [path, capacity] = process.argv.slice(2);
const client = new Client({ capacity: Number(capacity), shared: path });
const keys = KeyedLimit.shared(`${path}.keys`, KEY_RULE, { capacity: KEY_CAPACITY });
const held = [];

function run(command, args) {
  if (command === 'strategy') {
    client.setStrategy(args[0], args.slice(1).join(' '));
    return 'ok';
  }
  if (command === 'metrics') {
    return JSON.stringify(client.prometheusText({ nowMs: Number(args[0]) }));
  }
  const [point, ...numbers] = args;
  const [a, b, c] = numbers.map(Number);
  if (command === 'add') {
    const [visits, errors, nowMs] = [a, b, c];
    for (let i = 0; i < visits; i++) {
      const entry = client.enter(point, { nowMs });
      if (i < errors) entry.error(new Error('counted'));
      entry.exit(nowMs);
    }
    return 'ok';
  }
  if (command === 'try' || command === 'hold') {
    const [tries, nowMs] = [a, b];
    // The same CLOCK_MONOTONIC as the other workers' (libuv's hrtime).
    const start = numbers[2] === undefined ? 0n : BigInt(numbers[2]);
    while (process.hrtime.bigint() < start);
    let admitted = 0;
    for (let i = 0; i < tries; i++) {
      const entry = client.enter(point, { nowMs });
      if (!entry.downgraded) admitted += 1;
      if (command === 'hold' && !entry.downgraded) held.push(entry);
      else entry.exit(nowMs);
    }
    return String(admitted);
  }
  if (command === 'release') {
    const released = held.length;
    for (const entry of held.splice(0)) entry.exit(Number(args[0]));
    return String(released);
  }
  if (command === 'decide') {
    const [tries, nowMs] = [a, b];
    let admitted = 0;
    for (let i = 0; i < tries; i++) if (keys.decide(point, 1, nowMs).admitted) admitted += 1;
    return String(admitted);
  }
  if (command === 'stats') {
    const s = client.stats(point, a);
    return JSON.stringify([s.visit, s.exception, s.timeout, s.downgrade, s.concurrent]);
  }
  throw new Error(`unknown command ${command}`);
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, ...args] = line.split(' ');
  process.stdout.write(`${run(command, args)}\n`);
});
process.stdout.write('ready\n');
