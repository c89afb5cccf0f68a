'use strict';
// express-rate-limit under node:cluster, one limit for the whole host: 4
// workers serve express on one loopback port, each limiting with
// express-rate-limit and an ExpressRateLimitStore on the same shared table
// (10 requests per minute per client). The primary sends 30 requests of one
// client and 5 of another, prints who answered what (the RateLimit headers
// included), then stops the workers and removes the table. With
// express-rate-limit's MemoryStore each worker would count on its own and
// admit up to 4 x 10. Run from the repository root: node
// examples/node/express-cluster.js (make demo runs it). In your own project:
// require('sds-native'), require('express'), require('express-rate-limit').
const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { createRequire } = require('node:module');
const { ExpressRateLimitStore } = require('../../node');

// express and express-rate-limit are the sds-native package's dev dependencies.
const requireFromPackage = createRequire(path.join(__dirname, '..', '..', 'node', 'package.json'));

const WORKERS = 4;
const LIMIT = 10;
// A bare name is a file under /dev/shm. A service names its table once
// (`shared: 'my-service-limits'`); this demo makes one per run and removes it.
const TABLE = process.env.SDS_DEMO_TABLE || `sds-demo-express-${process.pid}`;

function worker() {
  const express = requireFromPackage('express');
  const { rateLimit } = requireFromPackage('express-rate-limit');
  const app = express();
  app.use(rateLimit({
    windowMs: 60_000,
    limit: LIMIT,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    // The demo's clients say who they are; a real app keys by address or user.
    keyGenerator: (req) => req.get('x-client') ?? 'anonymous',
    // The one option that changes: every worker counts in the same table.
    store: new ExpressRateLimitStore({ shared: TABLE }),
  }));
  app.get('/', (req, res) => res.send(`hello from worker ${cluster.worker.id}\n`));
  app.listen(0, '127.0.0.1');
}

function get(port, client) {
  return new Promise((resolve, reject) => {
    // A connection per request, so the primary hands them round-robin.
    http.get({ host: '127.0.0.1', port, path: '/', headers: { 'x-client': client }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: body.trim(), rateLimit: res.headers.ratelimit }));
    }).on('error', reject);
  });
}

async function primary() {
  const workers = Array.from({ length: WORKERS }, () => cluster.fork({ SDS_DEMO_TABLE: TABLE }));
  const ports = await Promise.all(workers.map((w) => new Promise((resolve) => w.once('listening', (a) => resolve(a.port)))));
  const port = ports[0];
  try {
    for (const [client, requests] of [['alice', 30], ['bob', 5]]) {
      let admitted = 0;
      for (let i = 0; i < requests; i++) {
        const answer = await get(port, client);
        if (answer.status === 200) admitted += 1;
        if (i < 2 || i === LIMIT - 1 || i === LIMIT) {
          console.log(`  ${client} #${i + 1}: ${answer.status} ${answer.status === 200 ? answer.body : 'Too many requests'}; RateLimit: ${answer.rateLimit}`);
        }
      }
      console.log(`${client}: ${admitted} of ${requests} admitted across ${WORKERS} workers (limit ${LIMIT} per minute for the host)`);
    }
    // The primary reads the host's count through a store of its own on the file.
    const host = new ExpressRateLimitStore({ shared: TABLE });
    host.init({ windowMs: 60_000 });
    console.log(`the table's count for alice: ${host.get('alice').totalHits} hits this window`);
    host.shutdown();
  } finally {
    for (const w of workers) w.kill();
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.isDead() ? resolve() : w.once('exit', resolve)))));
    // The naming rule: a bare name is a file under /dev/shm, anything else a path.
    fs.rmSync(TABLE.includes('/') ? TABLE : path.join('/dev/shm', TABLE), { force: true });
  }
}

if (cluster.isPrimary) {
  primary().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
} else {
  worker();
}
