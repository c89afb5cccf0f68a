'use strict';
// The stores' typings (lib/stores/*.d.ts, exported by index.d.ts) against
// the libraries' own: a store passes where express-rate-limit takes a
// `Store` and where @fastify/rate-limit takes a store class, checked with
// `tsc --noEmit` (the TypeScript pinned in package.json) on a file written
// to a temporary directory that sees the package's node_modules.
const test = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { typeCheck } = require('../testing/tsc.js');

const packageDir = path.join(__dirname, '..');

const USAGE = (entry) => `
import { rateLimit, type Store } from 'express-rate-limit'
import Fastify from 'fastify'
import fastifyRateLimit from '@fastify/rate-limit'
import { ExpressRateLimitStore, FastifyRateLimitStore, type RateLimitStoreOptions } from ${JSON.stringify(entry)}

const options: RateLimitStoreOptions = { shared: 'api-limits', capacity: 1 << 16, mode: 0o660, prefix: 'login:' }
const store: Store = new ExpressRateLimitStore(options)
rateLimit({ windowMs: 60_000, limit: 100, store: new ExpressRateLimitStore() })
const info = new ExpressRateLimitStore().increment('key')
const hits: number = info.totalHits
const resetAt: Date = info.resetTime
const local: boolean = store.localKeys ?? false

const app = Fastify()
app.register(fastifyRateLimit, { max: 100, timeWindow: 60_000, store: FastifyRateLimitStore.with({ shared: 'api' }) })
app.register(fastifyRateLimit, { store: FastifyRateLimitStore })
new FastifyRateLimitStore().incr('key', (error, result) => {
  if (error === null && result !== undefined) console.log(result.current + result.ttl)
}, 60_000, 100)

// @ts-expect-error an unknown option
new ExpressRateLimitStore({ sharde: 'x' })
// @ts-expect-error capacity is a number
FastifyRateLimitStore.with({ capacity: '1024' })
console.log(hits, resetAt, local)
`;

test('the stores type-check where express-rate-limit and @fastify/rate-limit take a store', { timeout: 120000 }, () => {
  typeCheck('sds-stores-typings-', (dir) => {
    fs.symlinkSync(path.join(packageDir, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const entry = path.relative(dir, path.join(packageDir, 'index.js')).split(path.sep).join('/');
    return USAGE(entry);
  }, {
    // express-rate-limit's typings import express's, which the package
    // does not install (@types/express): they resolve to any. Our own
    // .d.ts files are checked strictly by test/typings.test.js.
    skipLibCheck: true,
  });
});
