'use strict';
// Several worker processes sharing one limit: a node:cluster of 4 workers,
// each with a Client on the same table file, each trying a "checkout" call
// 100 times against visitThreshold 100 per 10 s for the whole host. Each
// worker prints what it admitted; the primary prints the host total, read
// through its own client on the file. Run from the repository root: make
// demo-node. In your own project: require('sds-native').
const cluster = require('node:cluster');
const fs = require('node:fs');
const { Client } = require('../../node');

const WORKERS = 4;
const TRIES = 100;
const LIMIT = 100;
// A bare name is a file under /dev/shm. A service names its table once
// (`shared: 'my-service.sds'`); this demo makes one per run and removes it.
const TABLE = process.env.SDS_DEMO_TABLE || `sds-demo-${process.pid}.sds`;

// Every process opens the same file with the same capacity; the first one
// creates it (mode 0600), the others attach.
const client = new Client({ capacity: 64, shared: TABLE });
client.setStrategy('checkout', { visitThreshold: LIMIT });

async function tryAll() {
  let admitted = 0;
  for (let i = 0; i < TRIES; i++) {
    const entry = client.enter('checkout');
    if (!entry.downgraded) admitted += 1;
    entry.exit();
    // Let the other workers interleave with this one.
    if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  console.log(`  worker ${cluster.worker.id} (pid ${process.pid}): admitted ${admitted} of ${TRIES}`);
  process.exit(0);
}

function worker() {
  // Start together: the primary says go once every worker has attached.
  process.once('message', tryAll);
  process.send('ready');
}

function primary() {
  console.log(`${WORKERS} workers x ${TRIES} tries, visitThreshold ${LIMIT} on ${client.shared}:`);
  let left = WORKERS;
  let ready = 0;
  for (let i = 0; i < WORKERS; i++) {
    const w = cluster.fork({ SDS_DEMO_TABLE: TABLE });
    w.on('message', () => {
      ready += 1;
      if (ready === WORKERS) for (const each of Object.values(cluster.workers)) each.send('go');
    });
    w.on('exit', () => {
      left -= 1;
      if (left > 0) return;
      const stats = client.stats('checkout');
      const admitted = stats.visit - stats.downgrade;
      console.log(`host total: ${stats.visit} requests, ${admitted} admitted, ${stats.downgrade} downgraded`);
      fs.rmSync(client.shared, { force: true });
    });
  }
}

if (cluster.isPrimary) primary();
else worker();
