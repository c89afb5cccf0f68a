'use strict';
// web.express in a real Express app on a loopback port, requests by fetch:
// 429 with Retry-After, 503 and the fallback, the RateLimit headers parsed
// back by structured-headers and equal to the limit's own numbers, client
// keys (IPv6 /64, trusted and untrusted proxies), and every permit given
// back: after an error, after a client's abort.
const test = require('node:test');
const assert = require('node:assert/strict');
const express = require('express');
const { parseList } = require('structured-headers');
const { Client, KeyedLimit, web } = require('..');
const { oneAtATime } = require('../testing/web.js');

const MINUTE = 60_000;

/** An Express app on a free loopback port; `routes(app)` adds the routes. */
async function serve(t, routes) {
  const app = express();
  app.set('env', 'test'); // finalhandler: no stack traces on stderr
  routes(app);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${server.address().port}`;
}

async function get(url, headers = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** Polls `ok()` for up to 2 s: a server's 'close' comes after the client is done. */
async function eventually(ok, what) {
  const deadline = Date.now() + 2000;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a keyed refusal is 429 with Retry-After; the headers are the limit\'s numbers', async (t) => {
  const perIp = new KeyedLimit({ kind: 'fixedWindow', limit: 3, periodMs: MINUTE, windowFromFirstHit: true });
  const guard = web.express({ policies: [web.policy({ name: 'per-ip', limit: perIp, key: web.clientAddress() })] });
  const base = await serve(t, (app) => app.get('/', guard, (req, res) => res.send('ok')));
  for (let i = 1; i <= 4; i++) {
    const res = await get(`${base}/`);
    const now = perIp.peek('127.0.0.1');
    assert.equal(res.status, i <= 3 ? 200 : 429, `request ${i}`);
    const [[name, policy]] = parseList(res.headers.get('ratelimit-policy'));
    assert.equal(name, 'per-ip');
    assert.deepEqual([...policy], [['q', 3], ['w', 60]]);
    const [[again, state]] = parseList(res.headers.get('ratelimit'));
    assert.equal(again, 'per-ip');
    assert.equal(state.get('r'), Math.max(0, 3 - i));
    // t is the window's end in seconds, rounded up, read a moment earlier.
    const t0 = Math.ceil(now.resetMs / 1000);
    assert.ok(state.get('t') >= t0 && state.get('t') <= t0 + 1, `t ${state.get('t')} vs ${t0}`);
    if (i <= 3) {
      assert.equal(res.headers.get('retry-after'), null);
      assert.equal(res.body, 'ok');
    } else {
      // A fixed window's refusal waits for its end.
      const retry = Number(res.headers.get('retry-after'));
      assert.ok(retry >= t0 && retry <= t0 + 1, `Retry-After ${retry} vs ${t0}`);
      assert.equal(res.body, 'Too Many Requests');
    }
  }
});

test('several policies: each is listed, and after a refusal the later ones only peek', async (t) => {
  // A burst of 10 s, not 1 s: the second request must come within the
  // burst's window to be refused by it, and a loaded run may take a second.
  const burst = new KeyedLimit({ kind: 'fixedWindow', limit: 1, periodMs: 10_000, windowFromFirstHit: true });
  const perMinute = new KeyedLimit({ kind: 'fixedWindow', limit: 1, periodMs: MINUTE, windowFromFirstHit: true });
  const key = web.header('x-api-key');
  const guard = web.express({
    policies: [
      web.policy({ name: 'burst', limit: burst, key }),
      web.policy({ name: 'daily "quota"', limit: perMinute, key, cost: () => 1 }),
    ],
  });
  const base = await serve(t, (app) => app.get('/', guard, (req, res) => res.send('ok')));
  assert.equal((await get(`${base}/`, { 'x-api-key': 'k1' })).status, 200);
  const res = await get(`${base}/`, { 'x-api-key': 'k1' });
  assert.equal(res.status, 429);
  const policies = parseList(res.headers.get('ratelimit-policy'));
  assert.deepEqual(policies.map(([name, p]) => [name, p.get('q'), p.get('w')]), [['burst', 1, 10], ['daily "quota"', 1, 60]]);
  // The burst refused; the quota after it only peeked, so its wait is not
  // the request's (sds-http's order: the first refusal decides): the
  // burst's end, read a moment later.
  const burstEnd = Math.ceil(burst.peek('k1').resetMs / 1000);
  const retry = Number(res.headers.get('retry-after'));
  assert.ok(retry >= burstEnd && retry <= burstEnd + 1 && retry <= 10, `Retry-After ${retry} vs ${burstEnd}`);
  // No header: the policies do not apply, nothing is counted.
  const anonymous = await get(`${base}/`);
  assert.equal(anonymous.status, 200);
  assert.equal(anonymous.headers.get('ratelimit'), null);
  assert.equal(perMinute.stats().resident, 1);
});

test('draft-6 and x-ratelimit styles speak for the tightest limit', async (t) => {
  const loose = new KeyedLimit({ kind: 'fixedWindow', limit: 100, periodMs: MINUTE, windowFromFirstHit: true });
  const tight = new KeyedLimit({ kind: 'fixedWindow', limit: 5, periodMs: MINUTE, windowFromFirstHit: true });
  const policies = [
    web.policy({ name: 'loose', limit: loose, key: () => 'k' }),
    web.policy({ name: 'tight', limit: tight, key: () => 'k', cost: 2 }),
  ];
  const base = await serve(t, (app) => {
    app.get('/6', web.express({ policies, headers: 'draft-6' }), (req, res) => res.send('ok'));
    app.get('/x', web.express({ policies, headers: 'x-ratelimit' }), (req, res) => res.send('ok'));
  });
  const six = await get(`${base}/6`);
  assert.equal(six.headers.get('ratelimit-limit'), '5');
  assert.equal(six.headers.get('ratelimit-remaining'), '3');
  assert.equal(six.headers.get('ratelimit-reset'), '60');
  assert.equal(six.headers.get('ratelimit'), null);
  const x = await get(`${base}/x`);
  assert.equal(x.headers.get('x-ratelimit-limit'), '5');
  assert.equal(x.headers.get('x-ratelimit-remaining'), '1');
  assert.ok(['59', '60'].includes(x.headers.get('x-ratelimit-reset')));
  assert.throws(() => web.express({ policies, headers: 'draft-7' }), { code: 'SDS_INVALID_ARGUMENT', message: /draft-10/ });
});

test('a downgraded point answers 503, or the route\'s fallback with the reason', async (t) => {
  const client = new Client();
  client.setStrategy('closed', { visitThreshold: 0 });
  const reasons = [];
  const base = await serve(t, (app) => {
    app.get('/plain', web.express({ client, point: 'closed' }), (req, res) => res.send('never'));
    app.get('/fallback', web.express({
      client,
      point: () => 'closed',
      fallback: (req, res, reason) => {
        reasons.push(reason);
        res.status(200).send('cached');
      },
    }), (req, res) => res.send('never'));
    app.get('/broken', web.express({
      client,
      point: 'closed',
      fallback: async () => { throw new Error('no cache'); },
    }), (req, res) => res.send('never'));
  });
  const plain = await get(`${base}/plain`);
  assert.equal(plain.status, 503);
  assert.equal(plain.body, 'Service Unavailable');
  const fallback = await get(`${base}/fallback`);
  assert.equal(fallback.status, 200);
  assert.equal(fallback.body, 'cached');
  assert.deepEqual(reasons, ['VISIT']);
  // A failing fallback is the route's error: Express's handler answers 500.
  assert.equal((await get(`${base}/broken`)).status, 500);
  assert.equal(client.stats('closed').downgrade, 3);
  assert.equal(client.stats('closed').concurrent, 0);
});

test('keys: IPv6 clients by /64, X-Forwarded-For only from trusted proxies', async (t) => {
  // From the first hit, as every window here: one aligned to the minute
  // would reset if the test crossed a minute's end (the third request 200).
  const limit = () => new KeyedLimit({ kind: 'fixedWindow', limit: 2, periodMs: MINUTE, windowFromFirstHit: true });
  const trusting = limit();
  const untrusting = limit();
  const base = await serve(t, (app) => {
    app.get('/trusting', web.express({
      policies: [web.policy({ name: 'ip', limit: trusting, key: web.clientAddress({ trustedProxies: ['127.0.0.0/8'] }) })],
    }), (req, res) => res.send('ok'));
    app.get('/untrusting', web.express({
      policies: [web.policy({ name: 'ip', limit: untrusting, key: web.clientAddress() })],
    }), (req, res) => res.send('ok'));
  });
  const from = (xff) => ({ 'x-forwarded-for': xff });
  // Two hosts of one /64 are one client: the third request is refused.
  assert.equal((await get(`${base}/trusting`, from('2001:db8:1:2::a'))).status, 200);
  assert.equal((await get(`${base}/trusting`, from('2001:db8:1:2:ffff::b'))).status, 200);
  assert.equal((await get(`${base}/trusting`, from('2001:db8:1:2::c'))).status, 429);
  // Another /64 is another client.
  assert.equal((await get(`${base}/trusting`, from('2001:db8:1:3::1'))).status, 200);
  assert.equal(trusting.count('2001:db8:1:2::/64').count, 2);
  assert.equal(trusting.count('2001:db8:1:3::/64').count, 1);
  // Untrusted: whatever the header says, the client is the peer.
  for (const xff of ['198.51.100.1', '198.51.100.2']) {
    assert.equal((await get(`${base}/untrusting`, from(xff))).status, 200);
  }
  assert.equal((await get(`${base}/untrusting`, from('198.51.100.3'))).status, 429);
  assert.equal(untrusting.count('127.0.0.1').count, 2);
  assert.equal(untrusting.count('198.51.100.1').resetMs, 0);
});

test('clientAddress on bare requests: prefixes, mapped IPv4, proxy chains, bad input', () => {
  const req = (peer, xff) => ({ socket: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });
  const key = web.clientAddress();
  assert.equal(key(req('2001:db8:1:2:aa::1')), '2001:db8:1:2::/64');
  assert.equal(key(req('::ffff:203.0.113.7')), '203.0.113.7');
  const wide = web.clientAddress({ ipv4Prefix: 24, ipv6Prefix: 48 });
  assert.equal(wide(req('203.0.113.7')), '203.0.113.0/24');
  assert.equal(wide(req('2001:db8:1:2::1')), '2001:db8:1::/48');
  const proxied = web.clientAddress({ trustedProxies: ['10.0.0.0/8', '192.0.2.9'] });
  assert.equal(proxied(req('10.0.0.5', '198.51.100.1, 192.0.2.9')), '198.51.100.1');
  assert.equal(proxied(req('10.0.0.5', ['1.1.1.1', '203.0.113.7'])), '203.0.113.7');
  assert.equal(proxied(req('203.0.113.50', '198.51.100.1')), '203.0.113.50');
  assert.throws(() => web.clientAddress({ ipv6Prefix: 129 }), { code: 'SDS_INVALID_ARGUMENT', message: /ipv6Prefix/ });
  assert.throws(() => web.clientAddress({ trustedProxies: ['proxy.local'] }), {
    code: 'SDS_INVALID_ARGUMENT',
    message: 'trusted proxy "proxy.local" is not an address or CIDR network',
  });
  assert.throws(() => web.clientAddress({ trusted: [] }), { code: 'SDS_INVALID_ARGUMENT', message: /unknown/ });
  assert.throws(() => key(req(undefined)), { code: 'SDS_INVALID_ARGUMENT', message: /no peer address/ });
});

test('setup errors are named when the route is made', () => {
  const limit = new KeyedLimit({ kind: 'rate', limit: 1, periodMs: 1000 });
  assert.throws(() => web.policy({ name: 'é', limit, key: () => 'k' }) && web.express({
    policies: [web.policy({ name: 'é', limit, key: () => 'k' })],
  }), { code: 'SDS_INVALID_ARGUMENT', message: /printable ASCII/ });
  assert.throws(() => web.policy({ name: 'p', limit: {}, key: () => 'k' }), { message: /KeyedLimit/ });
  assert.throws(() => web.policy({ name: 'p', limit, key: 'k' }), { message: /policy key must be a function/ });
  assert.throws(() => web.policy({ name: 'p', limit, key: () => 'k', cost: 0 }), { message: /cost/ });
  assert.throws(() => web.express({ point: 'p' }), { message: /client must be a Client/ });
  assert.throws(() => web.express({ policies: [{ name: 'p', limit, key: () => 'k' }] }), { message: /made by policy\(\)/ });
  assert.throws(() => web.express({ polices: [] }), { message: /unknown express option key "polices"/ });
});

test('an in-flight limit and a point\'s permit come back after an error, counted as the point\'s exception', async (t) => {
  const { client, inFlight } = oneAtATime('orders');
  const guard = web.express({
    client,
    point: 'orders',
    policies: [web.policy({ name: 'conn', limit: inFlight, key: () => 'user' })],
  });
  const base = await serve(t, (app) => {
    app.get('/fail', guard, () => { throw new Error('boom'); });
    app.get('/ok', guard, (req, res) => res.send('ok'));
    app.get('/teapot', guard, (req, res) => res.status(503).send('busy'));
  });
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(`${base}/fail`)).status, 500);
    await eventually(() => client.stats('orders').concurrent === 0, 'the permit back');
  }
  assert.equal((await get(`${base}/ok`)).status, 200);
  assert.equal((await get(`${base}/teapot`)).status, 503);
  await eventually(() => client.stats('orders').concurrent === 0, 'the permit back');
  const stats = client.stats('orders');
  assert.equal(stats.visit, 5);
  // Three throws and one 5xx answer; the 200 is no exception.
  assert.equal(stats.exception, 4);
  assert.equal(inFlight.peek('user').remaining, 1);
});

test('a client that aborts gives back its in-flight units and the point\'s permit', async (t) => {
  const { client, inFlight } = oneAtATime('slow');
  let entered;
  const inHandler = new Promise((resolve) => { entered = resolve; });
  const guard = web.express({ client, point: 'slow', policies: [web.policy({ name: 'conn', limit: inFlight, key: () => 'u' })] });
  const base = await serve(t, (app) => {
    app.get('/hang', guard, () => entered()); // never answers
    app.get('/ok', guard, (req, res) => res.send('ok'));
  });
  const abort = new AbortController();
  const hanging = fetch(`${base}/hang`, { signal: abort.signal }).catch((e) => e.name);
  await inHandler;
  assert.equal(inFlight.peek('u').remaining, 0);
  assert.equal(client.stats('slow').concurrent, 1);
  // While it hangs, the same key is refused by the in-flight limit (no Retry-After: it waits on a release).
  const refused = await get(`${base}/ok`);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), null);
  abort.abort();
  assert.equal(await hanging, 'AbortError');
  await eventually(() => inFlight.peek('u').remaining === 1 && client.stats('slow').concurrent === 0, 'released on abort');
  assert.equal((await get(`${base}/ok`)).status, 200);
  // The client left: not the service's failure.
  assert.equal(client.stats('slow').exception, 0);
});

test('a point function that throws: the in-flight units taken are given back, the error goes to next', async (t) => {
  const client = new Client();
  const inFlight = new KeyedLimit({ kind: 'inFlight', limit: 1 });
  const guard = web.express({
    client,
    point: () => { throw new Error('no route name'); },
    policies: [web.policy({ name: 'conn', limit: inFlight, key: () => 'u' })],
  });
  const base = await serve(t, (app) => app.get('/', guard, (req, res) => res.send('never')));
  for (let i = 0; i < 2; i++) assert.equal((await get(`${base}/`)).status, 500);
  assert.equal(inFlight.peek('u').remaining, 1);
});

test('an in-flight table whose cells all hold units answers a plain 503: no fallback, no headers', async (t) => {
  const inFlight = new KeyedLimit({ kind: 'inFlight', limit: 1 }, { capacity: 4 });
  for (const key of ['a', 'b', 'c', 'd']) assert.equal(inFlight.decide(key).admitted, true);
  const rate = new KeyedLimit({ kind: 'fixedWindow', limit: 100, periodMs: MINUTE, windowFromFirstHit: true });
  const reasons = [];
  const key = web.header('x-user');
  const policies = [web.policy({ name: 'rate', limit: rate, key }), web.policy({ name: 'conn', limit: inFlight, key })];
  const base = await serve(t, (app) => {
    app.get('/plain', web.express({ policies }), (req, res) => res.send('never'));
    app.get('/fallback', web.express({ policies, fallback: (req, res, reason) => { reasons.push(reason); res.send('later'); } }), (req, res) => res.send('never'));
  });
  for (const path of ['/plain', '/fallback']) {
    const full = await get(`${base}${path}`, { 'x-user': 'e' });
    assert.deepEqual([full.status, full.body], [503, 'Service Unavailable'], path);
    assert.equal(full.headers.get('ratelimit'), null);
    assert.equal(full.headers.get('ratelimit-policy'), null);
  }
  // The service is full, the point never downgraded: the fallback is not asked.
  assert.deepEqual(reasons, []);
  // The rate before it kept its hits (the requests were made), nothing is held.
  assert.equal(rate.peek('e').remaining, 98);
  assert.equal(inFlight.peek('e').remaining, 1);
  // A key that holds a cell is still decided: refused by its limit.
  assert.equal((await get(`${base}/plain`, { 'x-user': 'a' })).status, 429);
  // A cell given back: the new key gets in.
  assert.equal(inFlight.release('d'), true);
  assert.equal((await get(`${base}/plain`, { 'x-user': 'e' })).status, 200);
});

test('after a refusal the later policies take nothing: they only peek', async (t) => {
  const first = new KeyedLimit({ kind: 'fixedWindow', limit: 10, periodMs: MINUTE, windowFromFirstHit: true });
  const tight = new KeyedLimit({ kind: 'fixedWindow', limit: 1, periodMs: MINUTE, windowFromFirstHit: true });
  const last = new KeyedLimit({ kind: 'fixedWindow', limit: 10, periodMs: MINUTE, windowFromFirstHit: true });
  const key = () => 'k';
  const guard = web.express({
    policies: [
      web.policy({ name: 'a', limit: first, key }),
      web.policy({ name: 'b', limit: tight, key }),
      web.policy({ name: 'c', limit: last, key }),
    ],
  });
  const base = await serve(t, (app) => app.get('/', guard, (req, res) => res.send('ok')));
  assert.equal((await get(`${base}/`)).status, 200);
  const refused = await get(`${base}/`);
  assert.equal(refused.status, 429);
  // The first took its unit (the request was made), the last only peeked.
  assert.equal(first.peek('k').remaining, 8);
  assert.equal(last.peek('k').remaining, 9);
  const state = parseList(refused.headers.get('ratelimit'));
  assert.deepEqual(state.map(([name, p]) => [name, p.get('r')]), [['a', 8], ['b', 0], ['c', 9]]);
});

test('every key and cost function runs before any policy decides', async (t) => {
  const first = new KeyedLimit({ kind: 'fixedWindow', limit: 10, periodMs: MINUTE, windowFromFirstHit: true });
  const flight = new KeyedLimit({ kind: 'inFlight', limit: 5 });
  const second = new KeyedLimit({ kind: 'fixedWindow', limit: 10, periodMs: MINUTE, windowFromFirstHit: true });
  const errors = [];
  const guard = web.express({
    policies: [
      web.policy({ name: 'first', limit: first, key: () => 'k' }),
      web.policy({ name: 'flight', limit: flight, key: () => 'k' }),
      web.policy({
        name: 'second',
        limit: second,
        key: () => 'k',
        cost: (req) => {
          if (req.headers['x-fail']) throw new Error('no cost');
          return 1;
        },
      }),
    ],
  });
  const base = await serve(t, (app) => {
    app.get('/', guard, (req, res) => res.send('ok'));
    app.use((error, req, res, next) => {
      errors.push(error.message);
      res.status(500).send('failed');
    });
  });
  assert.equal((await get(`${base}/`, { 'x-fail': '1' })).status, 500);
  assert.deepEqual(errors, ['no cost']);
  // Nothing decided: no policy took a unit for the failed request.
  assert.equal(first.peek('k').remaining, 10);
  assert.equal(flight.peek('k').remaining, 5);
  assert.equal(first.stats().resident, 0);
  assert.equal((await get(`${base}/`)).status, 200);
  assert.equal(first.peek('k').remaining, 9);
  await eventually(() => flight.peek('k').remaining === 5, 'the in-flight unit back');
});

test('a route of 34 in-flight policies holds and gives back every one (held bits above 32)', async (t) => {
  const limits = Array.from({ length: 34 }, () => new KeyedLimit({ kind: 'inFlight', limit: 1 }));
  const policies = limits.map((limit, i) => web.policy({ name: `p${i}`, limit, key: () => 'k' }));
  let during = null;
  const base = await serve(t, (app) => app.get('/', web.express({ policies }), (req, res) => {
    during = limits.map((limit) => limit.peek('k').remaining);
    res.send('ok');
  }));
  assert.equal((await get(`${base}/`)).status, 200);
  assert.deepEqual(during, limits.map(() => 0));
  await eventually(() => limits.every((limit) => limit.peek('k').remaining === 1), 'every unit back');
});

test('a KeyedLimit closed after the route was made throws SDS_CLOSED to the error handler', async (t) => {
  const limit = new KeyedLimit({ kind: 'fixedWindow', limit: 5, periodMs: MINUTE, windowFromFirstHit: true });
  const codes = [];
  const base = await serve(t, (app) => {
    app.get('/', web.express({ policies: [web.policy({ name: 'p', limit, key: () => 'k' })] }), (req, res) => res.send('ok'));
    app.use((error, req, res, next) => {
      codes.push(error.code);
      res.status(500).send('failed');
    });
  });
  assert.equal((await get(`${base}/`)).status, 200);
  limit.close();
  assert.equal((await get(`${base}/`)).status, 500);
  assert.deepEqual(codes, ['SDS_CLOSED']);
});
