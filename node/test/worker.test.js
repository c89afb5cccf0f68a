'use strict';
// Each worker thread loads the addon and keeps its own clients.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

test('clients work in worker threads, each with its own points', async () => {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const client = new Client();
    client.setStrategy('p', { visitThreshold: workerData });
    const reasons = [];
    for (let i = 0; i < 3; i++) {
      const entry = client.enter('p', { nowMs: 100000 });
      reasons.push(entry.reason);
      entry.exit(100000);
    }
    parentPort.postMessage(reasons);
  `;
  const run = (threshold) => new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: threshold });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const [one, two] = await Promise.all([run(1), run(2)]);
  assert.deepEqual(one, [null, 'VISIT', 'VISIT']);
  assert.deepEqual(two, [null, null, 'VISIT']);
});
