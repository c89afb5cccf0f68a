// ESM entry of sds-native: the CommonJS module's objects, so `import` and
// `require` in one process share one addon and the same classes.
import { createRequire } from 'node:module';

const sds = createRequire(import.meta.url)('./index.js');

export const { Client, Point, Entry, SlidingWindow, DowngradedError, AdminAgent, ClusterSync, KeyedLimit, web } = sds;
export const { ExpressRateLimitStore, FastifyRateLimitStore, metrics } = sds;
export default sds;
