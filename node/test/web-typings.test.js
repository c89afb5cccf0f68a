'use strict';
// index.d.ts's `web` namespace as a user's TypeScript meets it: with
// Fastify's own typings (`app.register(web.fastify, ...)` must accept the
// plugin) and node:http (Express ships no typings here), and the misuse it
// must refuse. `tsc --noEmit` over a file written to a temp dir.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');

const usage = `
import Fastify from 'fastify';
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

// @ts-expect-error an unknown header style
web.express({ headers: 'draft-7' });
// @ts-expect-error a limit must be a KeyedLimit
web.policy({ name: 'p', limit: {}, key: () => 'k' });
// @ts-expect-error a key is a string or bytes
web.policy({ name: 'p', limit: perIp, key: () => 42 });
// @ts-expect-error prefixes are numbers
web.clientAddress({ ipv4Prefix: '24' });
`;

test('tsc --noEmit: the web namespace with Fastify typings', { timeout: 120000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-web-typings-'));
  try {
    fs.writeFileSync(path.join(dir, 'usage.ts'), usage);
    const modules = path.join(root, 'node_modules');
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
        typeRoots: [path.join(modules, '@types')],
        paths: { 'sds-native': [path.join(root, 'index.d.ts')], fastify: [path.join(modules, 'fastify', 'fastify.d.ts')] },
      },
      files: ['usage.ts'],
    }));
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    const { status, stdout, stderr } = spawnSync(process.execPath, [tsc, '--noEmit', '-p', dir], { encoding: 'utf8' });
    assert.equal(status, 0, `${stdout}${stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
