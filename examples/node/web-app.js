'use strict';
// sds-native's own middleware in Express and Fastify: an orders API where
// each client (by address, an IPv6 /64 counting as one) gets 5 requests per
// 10 s, each API key 3 checkouts in flight, and the route's SDS point
// (a concurrency limit) falls back to a cached answer when it downgrades.
// Both apps run on loopback ports of this process; the script sends them
// requests, prints statuses and headers, and exits. Run from the repository
// root: node examples/node/web-app.js (make demo runs it). In your own
// project: require('sds-native'), require('express'), require('fastify').
const path = require('node:path');
const { createRequire } = require('node:module');
const { Client, KeyedLimit, web } = require('../../node');

// express and fastify are the sds-native package's dev dependencies.
const requireFromPackage = createRequire(path.join(__dirname, '..', '..', 'node', 'package.json'));
const express = requireFromPackage('express');
const Fastify = requireFromPackage('fastify');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One client and one set of limits for both apps (in a node:cluster, give
// the Client `shared` and use KeyedLimit.shared: the limits become the host's).
const client = new Client();
client.setStrategy('orders.list', { concurrentThreshold: 1 });
const perClient = new KeyedLimit({ kind: 'fixedWindow', limit: 5, periodMs: 10_000, windowFromFirstHit: true });
const checkouts = new KeyedLimit({ kind: 'inFlight', limit: 3 });
const policies = [web.policy({ name: 'per-client', limit: perClient, key: web.clientAddress({ ipv6Prefix: 64 }) })];

function expressApp() {
  const app = express();
  app.get('/orders', web.express({
    client,
    point: 'orders.list',
    policies,
    fallback: (req, res, reason) => res.json({ orders: ['(cached)'], reason }),
  }), async (req, res) => {
    await sleep(50); // the slow database call
    res.json({ orders: ['o-1', 'o-2'] });
  });
  return app;
}

async function fastifyApp() {
  const app = Fastify();
  await app.register(web.fastify, { policies, headers: 'draft-6' });
  app.post('/checkout', {
    config: { sds: { policies: [web.policy({ name: 'checkouts', limit: checkouts, key: web.header('x-api-key') })] } },
  }, async () => {
    await sleep(50);
    return { paid: true };
  });
  return app;
}

const show = (label, res, names) => {
  const headers = names.map((n) => `${n}: ${res.headers.get(n)}`).filter((h) => !h.endsWith(': null'));
  console.log(`  ${label} -> ${res.status}  ${headers.join('  ')}`);
};

async function main() {
  const server = expressApp().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const orders = `http://127.0.0.1:${server.address().port}/orders`;
  const fastify = await fastifyApp();
  const base = await fastify.listen({ port: 0, host: '127.0.0.1' });
  try {
    console.log('Express, GET /orders: 5 per 10 s per client, draft-10 headers');
    for (let i = 1; i <= 6; i++) show(`request ${i}`, await fetch(orders), ['ratelimit', 'ratelimit-policy', 'retry-after']);
    perClient.resetAll();

    console.log('Express, 2 requests at once: the point admits 1, the other gets the fallback');
    const both = await Promise.all([fetch(orders), fetch(orders)]);
    for (const res of both) console.log(`  ${res.status} ${JSON.stringify(await res.json())}`);
    perClient.resetAll();

    console.log('Fastify, POST /checkout: 3 in flight per API key, draft-6 headers');
    const post = () => fetch(`${base}/checkout`, { method: 'POST', headers: { 'x-api-key': 'shop-1' } });
    const at = await Promise.all([post(), post(), post(), post()]);
    at.forEach((res, i) => show(`checkout ${i + 1}`, res, ['ratelimit-limit', 'ratelimit-remaining']));
    show('after they finished', await post(), ['ratelimit-limit', 'ratelimit-remaining']);
  } finally {
    server.close();
    await fastify.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
