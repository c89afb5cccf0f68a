'use strict';
// index.d.ts's `web` namespace as a user's TypeScript meets it: with
// Fastify's own typings (`app.register(web.fastify, ...)` must accept the
// plugin, a route's `config.sds` is typed by index.d.ts's augmentation of
// FastifyContextConfig) and node:http (Express ships no typings here), and
// the misuse it must refuse. `tsc --noEmit` over a file written to a temp dir.
const test = require('node:test');
const path = require('node:path');
const { typeCheck } = require('../testing/tsc.js');

const root = path.join(__dirname, '..');

const usage = `
import Fastify, { type RouteShorthandOptions } from 'fastify';
import * as http from 'node:http';
import { Client, KeyedLimit, web } from 'sds-native';

const client = new Client();
const perIp = new KeyedLimit({ kind: 'rate', limit: 10, periodMs: 1000 });
const policies: web.Policy[] = [
  web.policy({ name: 'per-ip', limit: perIp, key: web.clientAddress({ ipv6Prefix: 56, trustedProxies: ['10.0.0.0/8'] }) }),
  web.policy({ name: 'per-key', limit: perIp, key: web.header('x-api-key'), cost: 2 }),
  web.policy<{ user?: { id: string } }>({ name: 'per-user', limit: perIp, key: (req) => req.user?.id, cost: (req) => (req.user ? 1 : 5) }),
];
const middleware: web.ExpressMiddleware = web.express({
  client, point: 'orders', policies, headers: 'draft-6',
  fallback: (req, res, reason: web.DowngradeReason) => { res.statusCode = 200; res.end(reason); },
});
http.createServer((req, res) => middleware(req, res, () => res.end('ok')));
web.express({ point: (req) => (req.url === '/a' ? 'a' : null), client });

const app = Fastify();
app.register(web.fastify, { client, point: 'orders', policies, fallback: async (request, reply, reason) => ({ reason }) });
app.get('/free', { config: { sds: false } }, async () => 'free');
// A route's config.sds (FastifyContextConfig, augmented by index.d.ts).
app.get('/orders', { config: { sds: { point: 'orders', policies, headers: 'x-ratelimit', fallback: (request, reply, reason) => reason } } }, async () => 'orders');
app.route({ method: 'GET', url: '/by-name', config: { sds: { client, point: (request) => (request.url === '/a' ? 'a' : null) } }, handler: async () => 'ok' });
const routeConfig: web.FastifyRouteConfig = { policies: [] };
const declared: RouteShorthandOptions = { config: { sds: { point: 'orders', headers: 'draft-6' } } };
app.get('/declared', declared, async () => 'declared');
app.get('/typed', { config: { sds: routeConfig } }, async (request) => (request.routeOptions.config.sds === false ? 'off' : 'on'));

// @ts-expect-error an unknown header style
web.express({ headers: 'draft-7' });
// @ts-expect-error a limit must be a KeyedLimit
web.policy({ name: 'p', limit: {}, key: () => 'k' });
// @ts-expect-error a key is a string or bytes
web.policy({ name: 'p', limit: perIp, key: () => 42 });
// @ts-expect-error prefixes are numbers
web.clientAddress({ ipv4Prefix: '24' });
// A wrong option of a route's config.sds. (Fastify infers a route's
// ContextConfig from the literal and intersects it with FastifyContextConfig,
// so inline only the known options' types are checked there; a route's
// options declared as RouteShorthandOptions or RouteOptions are checked whole.)
// @ts-expect-error null is not false
app.get('/bad', { config: { sds: null } }, async () => 'bad');
// @ts-expect-error an unknown header style in a route's config
app.get('/bad', { config: { sds: { headers: 'draft-7' } } }, async () => 'bad');
// @ts-expect-error a point is a name or a function naming one
app.get('/bad', { config: { sds: { point: 42 } } }, async () => 'bad');
// @ts-expect-error policies are made by web.policy, not KeyedLimits
app.route({ method: 'GET', url: '/bad', config: { sds: { policies: [perIp] } }, handler: async () => 'bad' });
// @ts-expect-error config.sds is options or false
const on: RouteShorthandOptions = { config: { sds: true } };
// @ts-expect-error an unknown route option
const misspelt: RouteShorthandOptions = { config: { sds: { pointName: 'orders' } } };
console.log(on, misspelt);
`;

test('tsc --noEmit: the web namespace with Fastify typings', { timeout: 120000 }, () => {
  const modules = path.join(root, 'node_modules');
  typeCheck('sds-web-typings-', () => usage, {
    typeRoots: [path.join(modules, '@types')],
    paths: { 'sds-native': [path.join(root, 'index.d.ts')], fastify: [path.join(modules, 'fastify', 'fastify.d.ts')] },
  });
});
