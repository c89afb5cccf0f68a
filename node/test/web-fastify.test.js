'use strict';
// web.fastify registered in a Fastify app, requests by fastify.inject (and a
// real loopback listener for a client's abort): per-route config, 429 / 503
// / fallback, headers parsed back by structured-headers, IPv6 /64 keys and
// proxies, permits back after errors and aborts.
const test = require('node:test');
const assert = require('node:assert/strict');
const Fastify = require('fastify');
const { parseList } = require('structured-headers');
const { Client, KeyedLimit, web } = require('..');
const { oneAtATime } = require('../testing/web.js');

const MINUTE = 60_000;

function windowLimit(limit, periodMs = MINUTE) {
  return new KeyedLimit({ kind: 'fixedWindow', limit, periodMs, windowFromFirstHit: true });
}

async function eventually(ok, what) {
  const deadline = Date.now() + 2000;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('plugin defaults guard every later route; config.sds overrides them or turns them off', async () => {
  const client = new Client();
  client.setStrategy('closed', { visitThreshold: 0 });
  const perKey = windowLimit(2);
  const strict = windowLimit(1);
  const key = web.header('x-api-key');
  const app = Fastify();
  app.get('/before', async () => 'unguarded: registered before the plugin');
  await app.register(web.fastify, { policies: [web.policy({ name: 'per-key', limit: perKey, key })] });
  app.get('/', async () => 'ok');
  app.get('/strict', { config: { sds: { policies: [web.policy({ name: 'strict', limit: strict, key })] } } }, async () => 'ok');
  app.get('/free', { config: { sds: false } }, async () => 'free');
  app.get('/closed', { config: { sds: { client, point: 'closed' } } }, async () => 'never');
  const hit = (url) => app.inject({ url, headers: { 'x-api-key': 'alice' } });

  const first = await hit('/');
  assert.equal(first.statusCode, 200);
  assert.deepEqual(parseList(first.headers['ratelimit']).map(([n, p]) => [n, p.get('r'), p.get('t')]), [['per-key', 1, 60]]);
  assert.deepEqual(parseList(first.headers['ratelimit-policy']).map(([n, p]) => [n, p.get('q'), p.get('w')]), [['per-key', 2, 60]]);
  assert.equal((await hit('/')).statusCode, 200);
  const refused = await hit('/');
  assert.equal(refused.statusCode, 429);
  assert.equal(refused.body, 'Too Many Requests');
  assert.ok(['59', '60'].includes(refused.headers['retry-after']), refused.headers['retry-after']);
  // The route's own policy replaces the default one.
  assert.equal((await hit('/strict')).statusCode, 200);
  const strictRefused = await hit('/strict');
  assert.equal(strictRefused.statusCode, 429);
  assert.equal(parseList(strictRefused.headers['ratelimit'])[0][0], 'strict');
  for (const url of ['/free', '/before']) {
    const free = await hit(url);
    assert.equal(free.statusCode, 200);
    assert.equal(free.headers['ratelimit'], undefined);
  }
  // /closed keeps the default policy (now spent) and adds its point: the key refuses first.
  assert.equal((await hit('/closed')).statusCode, 429);
  const other = await app.inject({ url: '/closed', headers: { 'x-api-key': 'bob' } });
  assert.equal(other.statusCode, 503);
  assert.equal(other.body, 'Service Unavailable');
  assert.ok(other.headers['ratelimit'], 'the keyed headers come with the 503');
  assert.equal(client.stats('closed').downgrade, 1);
  await app.close();
});

test('the fallback answers a downgrade: its value, its promise, its own reply, its error', async () => {
  const client = new Client();
  client.setStrategy('closed', { visitThreshold: 0 });
  const app = Fastify();
  await app.register(web.fastify, { client, point: 'closed' });
  const reasons = [];
  const route = (url, fallback) => app.get(url, { config: { sds: { fallback } } }, async () => 'never');
  route('/value', (request, reply, reason) => {
    reasons.push(reason);
    return { cached: true };
  });
  route('/promise', async () => 'later');
  route('/reply', (request, reply) => reply.code(202).send('accepted'));
  route('/error', async () => { throw new Error('no cache'); });
  const value = await app.inject('/value');
  assert.equal(value.statusCode, 200);
  assert.deepEqual(value.json(), { cached: true });
  assert.deepEqual(reasons, ['VISIT']);
  assert.equal((await app.inject('/promise')).body, 'later');
  const replied = await app.inject('/reply');
  assert.equal(replied.statusCode, 202);
  assert.equal(replied.body, 'accepted');
  const failed = await app.inject('/error');
  assert.equal(failed.statusCode, 500);
  assert.equal(failed.json().message, 'no cache');
  assert.equal(client.stats('closed').concurrent, 0);
  await app.close();
});

test('client keys: IPv6 /64 from the peer, X-Forwarded-For only from trusted proxies', async () => {
  const direct = windowLimit(1);
  const proxied = windowLimit(1);
  const app = Fastify();
  app.get('/direct', { config: { sds: { policies: [web.policy({ name: 'ip', limit: direct, key: web.clientAddress() })] } } }, async () => 'ok');
  await app.register(web.fastify, {});
  app.get('/direct2', { config: { sds: { policies: [web.policy({ name: 'ip', limit: direct, key: web.clientAddress() })] } } }, async () => 'ok');
  app.get('/proxied', {
    config: { sds: { policies: [web.policy({ name: 'ip', limit: proxied, key: web.clientAddress({ trustedProxies: ['fd00::/8'] }) })] } },
  }, async () => 'ok');
  const from = (url, remoteAddress, xff) => app.inject({ url, remoteAddress, headers: xff ? { 'x-forwarded-for': xff } : {} });
  // A route added before the plugin is not guarded, config or not.
  assert.equal((await from('/direct', '2001:db8:1:2::1')).headers['ratelimit'], undefined);
  assert.equal((await from('/direct2', '2001:db8:1:2::1')).statusCode, 200);
  assert.equal((await from('/direct2', '2001:db8:1:2:abcd::9')).statusCode, 429, 'one /64, one client');
  assert.equal((await from('/direct2', '2001:db8:1:3::1')).statusCode, 200);
  // Spoofed by an untrusted peer: ignored.
  assert.equal((await from('/direct2', '2001:db8:1:3::2', '198.51.100.1')).statusCode, 429);
  // Behind a trusted proxy the client is the one it names.
  assert.equal((await from('/proxied', 'fd00::1', '198.51.100.1')).statusCode, 200);
  assert.equal((await from('/proxied', 'fd00::2', '198.51.100.1')).statusCode, 429);
  assert.equal((await from('/proxied', 'fd00::1', '198.51.100.2')).statusCode, 200);
  assert.equal(proxied.count('198.51.100.1').count, 1);
  assert.equal(proxied.count('fd00::/64').resetMs, 0, 'the proxy itself is no client');
  await app.close();
});

test('a route error, a 5xx and a throwing key function: permits back, exceptions counted', async () => {
  const { client, inFlight } = oneAtATime('orders');
  const app = Fastify();
  await app.register(web.fastify, {
    client,
    point: 'orders',
    policies: [web.policy({ name: 'conn', limit: inFlight, key: () => 'user' })],
  });
  app.get('/fail', async () => { throw new Error('boom'); });
  app.get('/busy', async (request, reply) => reply.code(502).send('upstream'));
  app.get('/ok', async () => 'ok');
  app.get('/badkey', { config: { sds: { policies: [web.policy({ name: 'k', limit: inFlight, key: () => { throw new Error('no user'); } })] } } }, async () => 'never');
  for (let i = 0; i < 2; i++) assert.equal((await app.inject('/fail')).statusCode, 500);
  assert.equal((await app.inject('/busy')).statusCode, 502);
  await eventually(() => client.stats('orders').concurrent === 0, 'the permit back');
  assert.equal((await app.inject('/ok')).statusCode, 200);
  await eventually(() => client.stats('orders').concurrent === 0, 'the permit back');
  const bad = await app.inject('/badkey');
  assert.equal(bad.statusCode, 500);
  assert.equal(bad.json().message, 'no user');
  const stats = client.stats('orders');
  assert.equal(stats.visit, 4, 'a key function that throws enters nothing');
  assert.equal(stats.exception, 3);
  assert.equal(inFlight.peek('user').remaining, 1);
  await app.close();
});

test('a client that aborts gives its permits back (a real listener)', async () => {
  const { client, inFlight } = oneAtATime('slow');
  const app = Fastify();
  await app.register(web.fastify, { client, point: 'slow', policies: [web.policy({ name: 'conn', limit: inFlight, key: web.clientAddress() })] });
  let entered;
  const inHandler = new Promise((resolve) => { entered = resolve; });
  app.get('/hang', (request, reply) => entered()); // never replies
  app.get('/ok', async () => 'ok');
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const abort = new AbortController();
    const hanging = fetch(`${base}/hang`, { signal: abort.signal }).catch((e) => e.name);
    await inHandler;
    assert.equal(client.stats('slow').concurrent, 1);
    assert.equal((await fetch(`${base}/ok`)).status, 429, 'the address holds its one in-flight unit');
    abort.abort();
    assert.equal(await hanging, 'AbortError');
    await eventually(() => client.stats('slow').concurrent === 0 && inFlight.peek('127.0.0.1').remaining === 1, 'released on abort');
    assert.equal((await fetch(`${base}/ok`)).status, 200);
  } finally {
    await app.close();
  }
});

test('bad plugin and route options are named', async () => {
  const app = Fastify();
  await assert.rejects(async () => { await app.register(web.fastify, { point: 'p' }); }, { message: /client must be a Client/ });
  const other = Fastify();
  await other.register(web.fastify, {});
  assert.throws(() => other.get('/x', { config: { sds: { headers: 'nope' } } }, async () => 'x'), { code: 'SDS_INVALID_ARGUMENT', message: /draft-10/ });
  assert.throws(() => other.get('/y', { config: { sds: 'on' } }, async () => 'y'), { message: /config.sds must be an object or false/ });
  await other.close();
});

test('a full in-flight key table is a plain 503 without the fallback or headers', async () => {
  const conns = new KeyedLimit({ kind: 'inFlight', limit: 1 }, { capacity: 4 });
  for (const key of ['a', 'b', 'c', 'd']) assert.equal(conns.decide(key).admitted, true);
  const reasons = [];
  const app = Fastify();
  await app.register(web.fastify, {
    policies: [web.policy({ name: 'conns', limit: conns, key: web.header('x-user') })],
    fallback: async (request, reply, reason) => {
      reasons.push(reason);
      return 'later';
    },
  });
  app.get('/', async () => 'ok');
  const full = await app.inject({ url: '/', headers: { 'x-user': 'e' } });
  assert.deepEqual([full.statusCode, full.body], [503, 'Service Unavailable']);
  assert.equal(full.headers['ratelimit'], undefined);
  assert.deepEqual(reasons, []);
  assert.equal(conns.peek('e').remaining, 1);
  await app.close();
});
