/* Typings of lib/stores/fastify.js (exported by index.d.ts), written by
 * hand; test/stores-typings.test.js checks them against @fastify/rate-limit's
 * own store types. */
import type { RateLimitStoreOptions } from './express.js'

/** A key's count as the plugin reads it: `ttl` the ms left of its window. */
export interface FastifyRateLimitCount {
  current: number
  ttl: number
}

export type FastifyRateLimitCallback = (error: Error | null, result?: FastifyRateLimitCount) => void

/** @fastify/rate-limit's (11.x) custom store on key tables, one per window length. */
export declare class FastifyRateLimitStore {
  /** A store class for the plugin's `store` option whose tables take `options`. */
  static with(options?: RateLimitStoreOptions): typeof FastifyRateLimitStore
  /**
   * Built by the plugin with its options (`continueExceeding` or
   * `exponentialBackoff` true are refused: a window from the first hit is
   * never restarted nor lengthened); `options` as `with` takes them.
   */
  constructor(params?: object, options?: RateLimitStoreOptions)
  incr(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max?: number): void
  read(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max?: number): void
  /** A route's store: the same tables, its keys under the prefix `<method><url>-` of `routeInfo`. */
  child(routeOptions: object): FastifyRateLimitStore
  /** Lets go of every table (shared files stay). */
  close(): void
}
