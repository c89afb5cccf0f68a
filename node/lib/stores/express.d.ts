/* Typings of lib/stores/express.js (exported by index.d.ts), written by
 * hand; test/stores-typings.test.js checks them against express-rate-limit's
 * own `Store` type. */

/** A store's key tables (each store's README section says how it uses them). */
export interface RateLimitStoreOptions {
  /**
   * A bare name (a file under /dev/shm) or a path: one table for every
   * process of the host that opens it. Omitted: this process's own table.
   */
  shared?: string
  /** Keys a table holds (default 65536: 1 MiB of cells). */
  capacity?: number
  /** The mode a new shared file is created with: 0o600 (default) or 0o660. Only with `shared`. */
  mode?: number
  /** Put before every key, to keep limiters that share a file apart. */
  prefix?: string
}

/** express-rate-limit's `ClientRateLimitInfo` as this store gives it. */
export interface ExpressRateLimitInfo {
  /** The hits of the key's window so far. */
  totalHits: number
  /** When the key's window ends (its first hit + windowMs). */
  resetTime: Date
}

/** express-rate-limit's (8.x) `Store` on a key table: counts of a window from each key's first hit. */
export declare class ExpressRateLimitStore {
  constructor(options?: RateLimitStoreOptions)
  /** `true` on this process's own table, `false` on a shared one. */
  readonly localKeys: boolean
  /** The `prefix` option ('' by default). */
  readonly prefix: string
  /** The window of the table (init's `windowMs`; 60000 before init). */
  readonly windowMs: number
  /** Called by the middleware: opens the table for its `windowMs`. */
  init(options: { windowMs?: number }): void
  get(key: string): ExpressRateLimitInfo | undefined
  increment(key: string): ExpressRateLimitInfo
  decrement(key: string): void
  resetKey(key: string): void
  /** Forgets every key of the table (on a shared table: every process's). */
  resetAll(): void
  /** Lets go of the table; a later call opens it again. */
  shutdown(): void
}
