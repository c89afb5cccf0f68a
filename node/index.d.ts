/* The public API of sds-native (index.js and index.mjs). This header is
 * hand-written; napi build appends the generated declarations of the addon's
 * `native` namespace below it. Regenerate with `npm run build`. */

import { EventEmitter } from 'node:events'

/** The core's reason names. */
export type Reason =
  | 'VISIT'
  | 'TOKEN_BUCKET'
  | 'CONCURRENT'
  | 'TIMEOUT'
  | 'EXCEPTION'
  | 'EXCEPTION_RATE'
  | 'PRESSURE_TEST'
  | 'DELAY'

/** A strategy in SDS's JSON names; omitted fields take SDS's defaults. */
export interface Strategy {
  point?: string | null
  visitThreshold?: number
  concurrentThreshold?: number
  exceptionThreshold?: number
  exceptionRateThreshold?: number
  exceptionRateStart?: number
  timeoutThreshold?: number
  timeoutCountThreshold?: number
  tokenBucketGeneratedTokensInSecond?: number
  tokenBucketSize?: number
  delayTime?: number
  retryInterval?: number
  downgradeRate?: number
  pressureTestDowngrade?: number
}

export interface ClientOptions {
  /** How many points the client can hold (1 to 2^20). Default 1024. */
  capacity?: number
}

export interface EnterOptions {
  /** The time of the request in ms (default: the wall clock). */
  nowMs?: number
  /** Whether the request is load-test traffic. */
  pressureTest?: boolean
}

/** The sums of the last whole 10 s cycle, as SDS uploads them. */
export interface CycleStats {
  visitNum: number
  exceptionNum: number
  timeoutNum: number
  downgradeNum: number
  concurrentNum: number
}

/** A point's sliding values, permits held now and last whole cycle. */
export interface Stats {
  visit: number
  exception: number
  timeout: number
  downgrade: number
  concurrent: number
  lastCycle: CycleStats
}

/** One request between `enter` and `exit`. */
export declare class Entry {
  private constructor()
  /** The point's name. */
  readonly point: string
  /** The time of `enter` in ms. */
  readonly startMs: number
  /** Whether the caller must skip the work and use its fallback. */
  readonly downgraded: boolean
  /** Why it was downgraded; `null` when it was not. */
  readonly reason: Reason | null
  /** Whether `exit` ran. */
  readonly exited: boolean
  /**
   * Marks the request failed with `err` (`exit` counts it). `null`,
   * `undefined` and a `DowngradedError` count nothing.
   */
  error(err: unknown): this
  /** Settles the entry once; later calls return `false` and do nothing. */
  exit(nowMs?: number): boolean
}

/** One point of a client, resolved to its id once. */
export declare class Point {
  private constructor()
  readonly client: Client
  readonly name: string
  enter(options?: EnterOptions): Entry
  run<T, F = T>(fn: (entry: Entry) => T, fallback?: (reason: Reason) => F): T | F
  stats(nowMs?: number): Stats
  setStrategy(strategy: Strategy | string): void
  removeStrategy(): void
}

export interface ClientEvents {
  downgrade: [point: string, reason: Reason, timeMs: number]
}

/** The points of one service: strategies, counters and decisions. */
export declare class Client extends EventEmitter {
  constructor(options?: ClientOptions)
  /** How many points fit. */
  readonly capacity: number
  /** A handle on the point `name` (created if needed). */
  point(name: string): Point
  /** Counts a request on `name` and decides it; exit the entry when done. */
  enter(name: string, options?: EnterOptions): Entry
  /**
   * Runs `fn` (sync or async) under an entry of `name`; exits on return,
   * resolve, throw or reject. Downgraded: `fallback(reason)`, or a thrown
   * (for an async `fn`, rejected) `DowngradedError`.
   */
  run<T, F = T>(name: string, fn: (entry: Entry) => T, fallback?: (reason: Reason) => F): T | F
  /** Sets the strategy of `name` from SDS JSON names or a JSON string. */
  setStrategy(name: string, strategy: Strategy | string): void
  /** Removes the strategy of `name`; its counters stay. */
  removeStrategy(name: string): void
  /** The statistics of `name` at `nowMs` (default: now). */
  stats(name: string, nowMs?: number): Stats
  on<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): this
  on(event: string | symbol, listener: (...args: any[]) => void): this
  once<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): this
  once(event: string | symbol, listener: (...args: any[]) => void): this
}

export interface SlidingWindowOptions {
  /** Bucket width in ms. Default 1000. */
  bucketMs?: number
  /** Buckets per window. Default 10. */
  buckets?: number
  /** Buckets in the ring, at least `2 * buckets`. Default `3 * buckets`. */
  ring?: number
}

export interface Tally {
  /** The value of the bucket written to. */
  bucket: number
  /** The sum of the window ending at that bucket. */
  total: number
}

/** A sliding window over a ring of epoch-tagged buckets. */
export declare class SlidingWindow {
  constructor(options?: SlidingWindowOptions)
  readonly bucketMs: number
  readonly buckets: number
  readonly ring: number
  increment(nowMs?: number): Tally
  add(n: number, nowMs?: number): Tally
  sum(nowMs?: number): number
  bucket(nowMs?: number): number
  lastWholeCycle(nowMs?: number): number
}

/** Thrown (or rejected) by `run` when downgraded without a fallback. */
export declare class DowngradedError extends Error {
  /** `SDS_DOWNGRADED`, from the core's table. */
  readonly code: 'SDS_DOWNGRADED'
  readonly point: string
  readonly reason: Reason
}

/** An error of sds-native: `code` is one of the core's stable names. */
export interface SdsError extends Error {
  code: string
}

/* ---- generated by napi build from node/src (the low-level addon) ---- */

export declare namespace native {
  /** The points of one client. Names are the UTF-8 form of the JS string. */
  export class NativeTable {
    /** A table of `capacity` points (1 to 2^20). */
    constructor(capacity: number)
    /**
     * This table's hot-path functions, which take and give their numbers
     * through `io` (see node/src/hot_path.rs): `enter()` reads the point key
     * `2 * pointId + pressureTest` and the time from `io[0..2]` and leaves
     * the packed entry and the time used there; `exitOk()` / `exitError()`
     * read the packed entry, its start time and the time from `io[0..3]`.
     * `-1` for a time means now.
     */
    hotPath(): { enter(): void; exitOk(): void; exitError(): void; io: Float64Array }
    /** The id of the point `name`, created if needed. */
    insert(name: string): number
    /** Sets the strategy of `name` from a JSON text; returns the point's id. */
    setStrategyJson(name: string, json: string): number
    /** Sets the strategy of `name` from an object of SDS JSON names. */
    setStrategyObject(name: string, fields: object): number
    /** Removes the strategy of `name`; its counters stay. */
    removeStrategy(name: string): void
    /** The stats of point `id`. */
    stats(id: number, nowMs: number): native.NativeStats
    /**
     * The stats of `name`, all zero for a point never created (which this
     * does not create).
     */
    statsByName(name: string, nowMs: number): native.NativeStats
    /** How many points exist. */
    get pointCount(): number
    /** How many points fit. */
    get capacity(): number
  }
  export class NativeWindow {
    /** `buckets` buckets of `bucket_ms` over a ring of `ring` buckets. */
    constructor(bucketMs: number, buckets: number, ring: number)
    /** Adds `n` at `now_ms`; the bucket's value and the sliding sum. */
    add(nowMs: number, n: number): native.NativeTally
    /** The sliding sum at `now_ms`. */
    sum(nowMs: number): number
    /** The value of `now_ms`'s bucket. */
    bucket(nowMs: number): number
    /** The sum of the aligned cycle before the one holding `now_ms`. */
    lastWholeCycle(nowMs: number): number
  }
  /** The layout of packed entries and the core's reason names. */
  export function entryLayout(): native.EntryLayout
  /** How JavaScript reads a packed entry without calling back into native code. */
  export interface EntryLayout {
    /** The bit set when the entry is downgraded. */
    downgradedBit: number
    /** Shift of the reason code. */
    reasonShift: number
    /** Mask of the reason code after the shift. */
    reasonMask: number
    /** The reason names, indexed by code; `null` at 0 (not downgraded). */
    reasons: Array<string | undefined | null>
    /** The bit of a point key (`2 * pointId + bit`) marking load-test traffic. */
    pressureTestBit: number
  }
  /** Every error code name of the core, in numeric order. */
  export function errorCodes(): Array<string>
  /** A point's statistics as plain numbers (`lastCycle` is assembled in JS). */
  export interface NativeStats {
    visit: number
    exception: number
    timeout: number
    downgrade: number
    concurrent: number
    visitNum: number
    exceptionNum: number
    timeoutNum: number
    downgradeNum: number
    concurrentNum: number
  }
  /** A bucket's value and the window's sum after a write. */
  export interface NativeTally {
    bucket: number
    total: number
  }
  /**
   * Throws `SDS_INVALID_ARGUMENT` with `message`: the JavaScript half calls it
   * so its own argument errors come from the core's code table too.
   */
  export function throwInvalidArgument(message: string): void
}
