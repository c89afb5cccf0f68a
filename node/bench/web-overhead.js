'use strict';
// What web.express and web.fastify add to a request, against the framework's
// own cost: an empty handler with and without the middleware guarding it
// with one policy (a rate per client address that admits everything, with
// its RateLimit headers) and one point (a concurrency limit never reached,
// exited when the response closes).
// - Fastify: fastify.inject, awaited one after the other (no socket).
// - Express: the same in-process requests (light-my-request, the injector
//   fastify.inject is built on, installed with fastify, calls the app as
//   Node's server would); with BENCH_EXPRESS_HTTP=1 instead, real HTTP
//   requests over one keep-alive connection on loopback, one after the
//   other (that figure includes Node's HTTP server and the client's side,
//   and is the noisier). Not both in one process: light-my-request swaps
//   the prototype of Express's request and response objects for its own.
// - For scale, each framework's own rate limiter on its in-memory store
//   with its default headers (one limit per client address, never
//   reached): @fastify/rate-limit and express-rate-limit. They hold no
//   point, and their stores count in this process only.
// - Fastify with a hook, Express with a middleware, that only sets two
//   headers and listens for the response's 'close': the floor of any
//   middleware doing what ours does.
// - The middleware alone: web.express's function called on a bare request
//   and response, its response's 'close' fired by hand (what it costs, with
//   no framework around it).
// CPU time of this process per request (user + system, so that other
// processes on a loaded machine do not count; for Express it includes the
// HTTP client's side, in this process too), medians of BENCH_ROUNDS rounds
// (default 25) after a warm-up round; wall time beside it.
// Run: node bench/web-overhead.js (from node/).
const http = require('node:http');
const { EventEmitter } = require('node:events');
const { setImmediate: setImmediatePromise } = require('node:timers/promises');
const express = require('express');
const Fastify = require('fastify');
const { medians } = require('../testing/timing.js');
const { Client, KeyedLimit, web } = require('..');

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 25;
const FASTIFY_OPS = 1_000;
const EXPRESS_OPS = 400;
const BARE_OPS = 20_000;
const YIELD_EVERY = 50;

/** One policy and one point, admitting everything. */
function guardOptions() {
  const client = new Client();
  client.setStrategy('bench', { concurrentThreshold: 1_000_000 });
  const perIp = new KeyedLimit({ kind: 'rate', limit: 1_000_000, periodMs: 1000 });
  return { client, point: 'bench', policies: [web.policy({ name: 'per-ip', limit: perIp, key: web.clientAddress() })] };
}

/** `with`: 'none', 'web' (our middleware) or 'peer' (the framework's rate limiter). */
async function fastifyApp(guard) {
  const app = Fastify();
  if (guard === 'web') await app.register(web.fastify, guardOptions());
  if (guard === 'peer') await app.register(require('@fastify/rate-limit'), { max: 1e9, timeWindow: 1000 });
  if (guard === 'floor') {
    // What any such hook pays in Fastify before deciding anything: the hook,
    // two headers, a listener on the response's 'close'.
    const noop = () => {};
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('RateLimit-Policy', '"per-ip";q=1000000;w=1');
      reply.header('RateLimit', '"per-ip";r=999999;t=1');
      reply.raw.on('close', noop);
      done();
    });
  }
  app.get('/', (request, reply) => reply.send(''));
  await app.ready();
  return async () => {
    const res = await app.inject({ method: 'GET', url: '/' });
    if (res.statusCode !== 200) throw new Error(`fastify answered ${res.statusCode}`);
  };
}

/** The app of expressApp as an in-process call. */
function injected(app) {
  const inject = require('light-my-request');
  return async () => {
    const res = await inject(app, { method: 'GET', url: '/' });
    if (res.statusCode !== 200) throw new Error(`express answered ${res.statusCode}`);
  };
}

/** What any such Express middleware pays before deciding anything. */
function floorMiddleware(req, res, next) {
  res.setHeader('RateLimit-Policy', '"per-ip";q=1000000;w=1');
  res.setHeader('RateLimit', '"per-ip";r=999999;t=1');
  res.on('close', floorClosed);
  next();
}

function floorClosed() {}

async function expressApp(guard) {
  const app = express();
  if (guard === 'web') app.use(web.express(guardOptions()));
  if (guard === 'peer') app.use(require('express-rate-limit').rateLimit({ windowMs: 1000, limit: 1e9 }));
  if (guard === 'floor') app.use(floorMiddleware);
  app.get('/', (req, res) => res.end());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const { port } = server.address();
  const request = () => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`express answered ${res.statusCode}`));
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
  const close = () => {
    agent.destroy();
    server.close();
  };
  return { request, close, inject: injected(app) };
}

/** web.express's function alone on a bare request and response. */
function bareMiddleware() {
  const middleware = web.express(guardOptions());
  const socket = { remoteAddress: '127.0.0.1' };
  const req = { socket, headers: {} };
  class Response extends EventEmitter {
    setHeader() {}
  }
  const next = () => {};
  return () => {
    const res = new Response();
    res.statusCode = 200;
    middleware(req, res, next);
    res.emit('close');
  };
}

/**
 * CPU and wall ns per call of `fn` over `ops` calls, awaited one after the
 * other. Every `YIELD_EVERY` calls the event loop runs its immediates: an
 * injected request ends (its response's 'close') in a setImmediate, which a
 * loop of awaits alone never reaches, so without this every request of the
 * run, and what it holds, would stay alive until the run ends (a server's
 * event loop runs them between requests).
 */
async function timeAwaited(fn, ops) {
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    await fn();
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await setImmediatePromise();
  }
  return finish(cpu, wall, ops);
}

function timeSync(fn, ops) {
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) fn();
  return finish(cpu, wall, ops);
}

function finish(cpu, wall, ops) {
  const used = process.cpuUsage(cpu);
  return { cpu: ((used.user + used.system) * 1000) / ops, wall: Number(process.hrtime.bigint() - wall) / ops };
}

async function main() {
  const plainFastify = await fastifyApp('none');
  const guardedFastify = await fastifyApp('web');
  const peerFastify = await fastifyApp('peer');
  const floorFastify = await fastifyApp('floor');
  const plainExpress = await expressApp('none');
  const guardedExpress = await expressApp('web');
  const peerExpress = await expressApp('peer');
  const floorExpress = await expressApp('floor');
  const bare = bareMiddleware();
  // Each framework's base case is timed before and after its variants in
  // every round, and a variant's cost is its excess over the mean of the two
  // (paired within the round, so the machine's drift cancels out); the
  // figures are the medians over the rounds.
  const groups = [
    ['fastify (inject)', () => timeAwaited(plainFastify, FASTIFY_OPS), [
      ['web.fastify', () => timeAwaited(guardedFastify, FASTIFY_OPS)],
      ['@fastify/rate-limit', () => timeAwaited(peerFastify, FASTIFY_OPS)],
      ['a hook setting 2 headers, listening for close', () => timeAwaited(floorFastify, FASTIFY_OPS)],
    ]],
    process.env.BENCH_EXPRESS_HTTP === '1'
      ? ['express (HTTP keep-alive, loopback)', () => timeAwaited(plainExpress.request, EXPRESS_OPS), [
        ['web.express', () => timeAwaited(guardedExpress.request, EXPRESS_OPS)],
        ['express-rate-limit', () => timeAwaited(peerExpress.request, EXPRESS_OPS)],
        ['a middleware setting 2 headers, listening for close', () => timeAwaited(floorExpress.request, EXPRESS_OPS)],
      ]]
      : ['express (inject)', () => timeAwaited(plainExpress.inject, FASTIFY_OPS), [
        ['web.express', () => timeAwaited(guardedExpress.inject, FASTIFY_OPS)],
        ['express-rate-limit', () => timeAwaited(peerExpress.inject, FASTIFY_OPS)],
        ['a middleware setting 2 headers, listening for close', () => timeAwaited(floorExpress.inject, FASTIFY_OPS)],
      ]],
  ];
  let round = 0;
  const ns = await medians(ROUNDS, async (record) => {
    round++;
    for (const [framework, base, variants] of groups) {
      const before = await base();
      // The variants' order turns each round, so none always runs first.
      const times = [];
      for (let k = 0; k < variants.length; k++) {
        const i = (k + round) % variants.length;
        times[i] = await variants[i][1]();
      }
      const after = await base();
      const cpu = (before.cpu + after.cpu) / 2;
      record(framework, cpu);
      record(`${framework} (wall)`, (before.wall + after.wall) / 2);
      variants.forEach(([name], i) => {
        record(`${framework} + ${name}`, times[i].cpu - cpu);
        record(`${framework} + ${name} (wall)`, times[i].wall);
      });
    }
    record('web.express alone', timeSync(bare, BARE_OPS).cpu);
  });
  for (const app of [plainExpress, guardedExpress, peerExpress, floorExpress]) app.close();
  const us = (name) => ns[name] / 1000;
  console.log(`node ${process.version}, medians of ${ROUNDS} rounds, CPU µs per request (wall µs beside)`);
  console.log('| framework + middleware | empty handler | added | overhead | wall (empty / with) |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [framework, , variants] of groups) {
    for (const [name] of variants) {
      const base = us(framework);
      const added = us(`${framework} + ${name}`);
      const wall = `${us(`${framework} (wall)`).toFixed(1)} / ${us(`${framework} + ${name} (wall)`).toFixed(1)}`;
      console.log(`| ${framework} + ${name} | ${base.toFixed(2)} | ${added.toFixed(2)} | ${((100 * added) / base).toFixed(1)} % | ${wall} |`);
    }
  }
  console.log(`\nweb.express alone (one policy, one point, headers, settled on close): ${us('web.express alone').toFixed(2)} µs CPU`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
