/* The public API of sds-native (index.js and index.mjs), written by hand
 * and checked by `tsc --noEmit` (test/typings.test.js). It uses Node's
 * types (node:events, node:http): referenced here, so a project need not
 * name them in its `types`. */
/// <reference types="node" />

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
  | 'SLOW_CALL_RATE'

/**
 * A strategy in SDS's JSON names; omitted, `null` and `undefined` fields take
 * SDS's defaults.
 */
export interface Strategy {
  point?: string | null
  visitThreshold?: number | null
  concurrentThreshold?: number | null
  exceptionThreshold?: number | null
  exceptionRateThreshold?: number | null
  exceptionRateStart?: number | null
  timeoutThreshold?: number | null
  timeoutCountThreshold?: number | null
  tokenBucketGeneratedTokensInSecond?: number | null
  tokenBucketSize?: number | null
  delayTime?: number | null
  retryInterval?: number | null
  downgradeRate?: number | null
  pressureTestDowngrade?: number | null
  /** Max percent (0 to 100) of admitted requests slower than `timeoutThreshold`; needs it. */
  slowCallRateThreshold?: number | null
  /** The slow-call rate is judged only once the window's visits exceed this. */
  slowCallRateStart?: number | null
  /** The token-bucket rate climbs from rate / coldFactor to rate over this many seconds. */
  warmUpPeriodSec?: number | null
  /** How cold a point starts (> 1; default 3). */
  coldFactor?: number | null
  /** Paces the token-bucket rate: a request waits at most this long (0 to 65535 ms), else TOKEN_BUCKET. */
  maxQueueingTimeMs?: number | null
  /**
   * An in-flight limit found from latency instead of `concurrentThreshold`
   * (which must then be negative): 1 AIMD, 2 VEGAS, 3 GRADIENT2 (Netflix
   * concurrency-limits), 4 GRADIENT (Envoy's gradient controller), 5 KNEE
   * (ours: settles 4 % above the knee); negative: off.
   */
  adaptiveConcurrency?: number | null
  /** The adaptive limit's floor (>= 1); negative: the algorithm's default. */
  adaptiveMinLimit?: number | null
  /** The adaptive limit's ceiling (<= 1000000, >= the floor); negative: the algorithm's default. */
  adaptiveMaxLimit?: number | null
  /** Where the adaptive limit starts (within the floor and ceiling); negative: the algorithm's default. */
  adaptiveInitialLimit?: number | null
}

/** A strategy as `strategy()` reads it back: every field, as a number. */
export type StrategyValues = { [K in Exclude<keyof Strategy, 'point'>]-?: number }

export interface ClientOptions {
  /**
   * How many points the client can hold (1 to 2^20). Default 1024. A shared
   * table's file must have been created with the same capacity.
   */
  capacity?: number
  /**
   * A table shared by every process of the host that opens the same file:
   * a bare name (no `/`) is a file under `/dev/shm`, anything else a path.
   * Created if it does not exist. Listeners stay per process.
   */
  shared?: string
  /** The shared file's mode: `0o600` (default) or `0o660` (its group too). */
  mode?: 0o600 | 0o660
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
  /** The adaptive in-flight limit now (`adaptiveConcurrency`); 0 without one. */
  adaptiveLimit: number
  /** The RTT the adaptive limit takes as its floor, µs: Vegas's no-load RTT, Gradient2's long RTT, Envoy's and KNEE's min RTT; 0 for AIMD. */
  adaptiveMinRttUs: number
  /** The latest (AIMD, Vegas), short-term (Gradient2) or windowed p50 (Envoy, KNEE) RTT, µs. */
  adaptiveRttUs: number
  /** Gradient2's long-term RTT average, µs; Envoy's min RTT + 25 %; KNEE's min RTT / (1 - h), h its headroom of 4 % or more (the latency it settles at); 0 for AIMD and Vegas. */
  adaptiveLongRttUs: number
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
  /**
   * Ms to wait before running the request: a paced point
   * (`maxQueueingTimeMs`) spaces requests evenly at its rate. 0 for any
   * other entry and when downgraded.
   */
  readonly waitMs: number
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
  run<T, F>(fn: () => T, fallback: () => F): Paced<T> | F
  run<T>(fn: () => T): RunResult<T>
  stats(nowMs?: number): Stats
  strategy(): StrategyValues | null
  setStrategy(strategy: Strategy | string): void
  removeStrategy(): void
}

/**
 * What `run` gives for `fn`'s result `T` when the request is admitted: an
 * async `fn`'s promise; a sync `fn`'s value, or a promise of it only when
 * the point is paced (`maxQueueingTimeMs`) and the request must wait first
 * (`Entry#waitMs` > 0): Node cannot block for the wait, so `run` awaits a
 * timer. No other rule makes `run` wait. The type cannot know whether a
 * point is paced (its strategy is set at run time), hence `T | Promise<T>`;
 * `await` the result on a paced point.
 */
export type Paced<T> = T extends PromiseLike<infer U> ? Promise<U> : T | Promise<T>

/**
 * What `run` without a fallback gives: `fn`'s result (see `Paced`), or, when
 * the request is downgraded and the client's console agent has a return
 * value for the point, that raw string (resolved, for an async `fn`).
 */
export type RunResult<T> = T extends PromiseLike<infer U> ? Promise<U | string> : T | string | Promise<T | string>

/**
 * The agent crate's settings, checked there; left out or `null`: the default.
 * Untyped spellings also taken: snake_case, `pullInterval` / `timeout` in seconds.
 */
export interface AdminOptions {
  /** Comma-separated `http://` or `https://` base URLs of the console, shuffled at start. */
  servers: string
  /** The app group, as created in the console. */
  appGroup: string
  /** The app, as created in the console. */
  appName: string
  /** This instance's IPv4 address (default: the host's last non-loopback one). */
  ip?: string | null
  /** This instance's host name (default: the system's). */
  hostname?: string | null
  /** Milliseconds between strategy pulls. Default 5000. */
  pullIntervalMs?: number | null
  /** Timeout of one request (connect, send, read) in ms. Default 1000. */
  timeoutMs?: number | null
  /**
   * PEM file of the CA(s) that signed the `https://` servers' certificates;
   * it replaces the system's roots, which `https://` trusts without it.
   */
  tlsCaFile?: string | null
  /** PEM client certificate (chain) shown to `https://` servers that ask for one (mutual TLS); with `tlsKeyFile`. */
  tlsCertFile?: string | null
  /** PEM private key of `tlsCertFile` (PKCS#8, SEC1 or PKCS#1). */
  tlsKeyFile?: string | null
}

/** A snapshot of a console agent's state. Times are UTC ms, 0 for never. */
export interface AdminStatus {
  /** When the last pull finished (or failed). */
  lastPullMs: number
  /** Whether that pull succeeded (strategies refused one by one included). */
  lastPullOk: boolean
  /** When the last upload finished (or failed). */
  lastUploadMs: number
  /** Whether that upload succeeded. */
  lastUploadOk: boolean
  /**
   * The strategy version held: 0 until the first applied set; -1 when the
   * console's version is null (a console on H2: every pull brings the whole
   * set, and one that differs from the set in force is applied).
   */
  version: number
  /** Whether this process uploads for the host (always on a private table). */
  isReporter: boolean
  /** The server the next request goes to. */
  server: string
  /** The last failure's text; empty if none yet (a success does not clear it). */
  lastError: string
  /** Pulls that failed since start. */
  pullFailures: number
  /** Uploads that failed since start. */
  uploadFailures: number
  /** Uploads delivered since start. */
  uploads: number
  /**
   * Strategies of the set in force waiting for room: their points are not
   * in the table, and the console may create points only while it is at
   * most half full. Tried again at each pull.
   */
  strategiesWaiting: number
  /** Points left out of every upload: names over 164 characters, which the console cannot store. */
  pointsLeftOut: number
}

/** One line of a console agent: `info` (a change applied) or `warn` (a failure). */
export interface AdminLogLine {
  level: 'info' | 'warn'
  message: string
}

export interface AdminAgentEvents {
  log: [line: AdminLogLine]
}

/**
 * The SDS console agent of a client (`client.connectAdmin`). With no 'log'
 * listener, each distinct `warn` text is a process warning
 * (`SDS_AGENT_WARNING`) once.
 */
export declare class AdminAgent extends EventEmitter {
  private constructor()
  readonly client: Client
  /** Whether `close()` has not been called. */
  readonly running: boolean
  status(): AdminStatus
  /** The console's `returnValueStr` for `point`, or `null`. */
  returnValue(point: string): string | null
  /** Stops the agent and joins its thread; idempotent. */
  close(): void
  on<K extends keyof AdminAgentEvents>(event: K, listener: (...args: AdminAgentEvents[K]) => void): this
  on(event: string | symbol, listener: (...args: any[]) => void): this
  once<K extends keyof AdminAgentEvents>(event: K, listener: (...args: AdminAgentEvents[K]) => void): this
  once(event: string | symbol, listener: (...args: any[]) => void): this
}

/**
 * The cluster crate's settings, checked there; left out or `null`: the default.
 * Untyped spellings also taken: snake_case, `syncInterval` / `timeout` / `maxBackoff` in seconds.
 */
export interface ClusterOptions {
  /**
   * The Redis server, `redis://[user[:password]@]host[:port][/db]`
   * (`rediss://` for TLS), or several: the seed nodes of a Redis Cluster.
   */
  urls: string | string[]
  /** The points whose thresholds hold for all instances together (created if absent). */
  points: string | string[]
  /** Talk to a Redis Cluster (slots, redirections). Default false. */
  redisCluster?: boolean | null
  /** Sync period in ms: one round trip per period (one per master on a Redis Cluster). Default 100. */
  syncMs?: number | null
  /** Connect and round-trip timeout in ms. Default 1000. */
  timeoutMs?: number | null
  /** Longest wait between reconnects in ms (from `syncMs`, doubling). Default 5000. */
  maxBackoffMs?: number | null
  /** First part of every key and hash tag (`{prefix:point}`); no braces. Default `'sds'`. */
  keyPrefix?: string | null
  /**
   * PEM file of the CA(s) that signed the servers' certificates (`rediss://`
   * URLs only); it replaces the system's roots, which `rediss://` trusts without it.
   */
  tlsCaFile?: string | null
  /** PEM client certificate (chain) for mutual TLS; with `tlsKeyFile`. */
  tlsCertFile?: string | null
  /** PEM private key of `tlsCertFile`. */
  tlsKeyFile?: string | null
}

/** A snapshot of a cluster syncer's state. Times are UTC ms, 0 for never. */
export interface ClusterStatus {
  /** The last sync reached Redis (for at least one point). */
  connected: boolean
  /** This process holds the host's syncer role (always on a private table). */
  syncing: boolean
  /** When the last sync that reached Redis was. */
  lastSyncMs: number
  /** The age of the other instances' counts: now minus `lastSyncMs`. */
  lagMs: number
  /** The last successful round trip, µs. */
  rttUs: number
  /** Successful syncs. */
  syncs: number
  /** Failed connection attempts and round trips. */
  failures: number
  /** Round trips sent to Redis (one per sync and server; `CLUSTER SLOTS` too on a Redis Cluster). */
  roundTrips: number
  /** Redis commands sent. */
  commands: number
  /** The last failure's message; `null` once a sync succeeds again. */
  lastError: string | null
  /** The cluster points synced. */
  points: number
  /** Cluster points whose last sync failed (a Redis Cluster master down). */
  pointsFailing: number
}

/** An exact-mode decision. No `exit` follows it. */
export interface ExactDecision {
  admitted: boolean
  /** `VISIT` or `TOKEN_BUCKET` from Redis; any reason from a local decision; `null` when admitted. */
  reason: Reason | null
  /** Redis decided (true), or Redis was unreachable and the table decided locally (false). */
  exact: boolean
}

/**
 * The syncer of a client's cluster points (`client.connectCluster`). Runs
 * until `close()`; never keeps the event loop open.
 */
export declare class ClusterSync {
  private constructor()
  readonly client: Client
  /** Whether `close()` has not been called. */
  readonly running: boolean
  status(): ClusterStatus
  /**
   * One sync now; blocks this thread for one round trip (at most `timeoutMs`).
   * Throws `SDS_UNAVAILABLE` when Redis fails or cannot be reached.
   */
  syncNow(): void
  /**
   * Exact mode: one request of a cluster point decided in Redis (one round
   * trip, on libuv's thread pool). `nowMs` defaults to the wall clock.
   */
  enterExact(point: string, nowMs?: number): Promise<ExactDecision>
  /** Stops the syncer and joins its thread; idempotent. */
  close(): void
}

export interface ClientEvents {
  downgrade: [point: string, reason: Reason, timeMs: number]
}

/** The points of one service: strategies, counters and decisions. */
export declare class Client extends EventEmitter {
  constructor(options?: ClientOptions)
  /** How many points fit. */
  readonly capacity: number
  /** The file of a shared table, or `null` for a client's own table. */
  readonly shared: string | null
  /** A handle on the point `name` (created if needed). */
  point(name: string): Point
  /** Counts a request on `name` and decides it; exit the entry when done. */
  enter(name: string, options?: EnterOptions): Entry
  /**
   * Runs `fn()` (sync or async) under an entry of `name`; exits on return,
   * resolve, throw or reject. Downgraded: `fallback()` (the reason goes to
   * the 'downgrade' listeners); without one, the console's return value for
   * the point when the client's agent has one, else a thrown (for an async
   * `fn`, rejected) `DowngradedError`.
   */
  run<T, F>(name: string, fn: () => T, fallback: () => F): Paced<T> | F
  run<T>(name: string, fn: () => T): RunResult<T>
  /** Sets the strategy of `name` from SDS JSON names or a JSON string. */
  setStrategy(name: string, strategy: Strategy | string): void
  /** Removes the strategy of `name`; its counters stay. */
  removeStrategy(name: string): void
  /**
   * The strategy of `name` in SDS JSON names, every field given; `null` when
   * it has none. A value beyond 2^53 reads as the nearest number.
   */
  strategy(name: string): StrategyValues | null
  /** The statistics of `name` at `nowMs` (default: now). */
  stats(name: string, nowMs?: number): Stats
  /**
   * Connects this client's table to the SDS console: strategies pulled,
   * statistics uploaded, on a thread of the agent's own. One agent per
   * client until it is closed.
   */
  connectAdmin(options: AdminOptions): AdminAgent
  /**
   * Makes `options.points` cluster points: their thresholds hold for every
   * instance together, counts shared through Redis by a thread of their
   * own; decisions stay local. One per client until it is closed.
   */
  connectCluster(options: ClusterOptions): ClusterSync
  /**
   * Every metric family of this client (its points, its console agent and
   * cluster sync, the last of each started, closed or not) and of the
   * process's keyed limits, read now or at `nowMs`; a family with nothing
   * to show has no samples. On a shared table the counts are the host's.
   * Counters never go back from one call to the next.
   */
  metrics(options?: MetricsOptions): MetricFamily[]
  /**
   * `metrics()` as the Prometheus text format (0.0.4), or OpenMetrics 1.0
   * with `openMetrics: true` (Content-Type: `metrics.PROMETHEUS_CONTENT_TYPE`
   * / `metrics.OPENMETRICS_CONTENT_TYPE`).
   */
  prometheusText(options?: PrometheusTextOptions): string
  on<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): this
  on(event: string | symbol, listener: (...args: any[]) => void): this
  once<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): this
  once(event: string | symbol, listener: (...args: any[]) => void): this
}

export interface MetricsOptions {
  /** The time read (ms since the epoch), default now: only gauges of a cycle depend on it. */
  nowMs?: number
}

export interface PrometheusTextOptions extends MetricsOptions {
  /** OpenMetrics 1.0 text (ends in `# EOF`) instead of the Prometheus 0.0.4 text. Default false. */
  openMetrics?: boolean
}

/** One sample of a metric family. */
export interface MetricSample {
  /** Label name to value, every label of the family. */
  labels: Record<string, string>
  value: number
}

/** A metric family and its samples, as sds-native's metrics crate names it. */
export interface MetricFamily {
  /** The family's name, a counter's without `_total` (e.g. `sds_point_requests`). */
  name: string
  /** Its samples' name in the Prometheus text: a counter's with `_total`. */
  sampleName: string
  type: 'counter' | 'gauge'
  help: string
  /** The labels' names, in the order the text writes them. */
  labelNames: string[]
  samples: MetricSample[]
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
  /** Adds one at `nowMs` (default: the addon's clock). */
  increment(nowMs?: number): Tally
  /** Adds `n` (a number up to 2^53, or a bigint up to 2^64 - 1) at `nowMs`. */
  add(n: number | bigint, nowMs?: number): Tally
  /**
   * Adds `n` for an event of time `atMs` recorded at the present `nowMs`:
   * into `atMs`'s bucket while the ring holds it, else into `nowMs`'s.
   * Returns the value of the bucket written.
   */
  addAt(atMs: number, n: number | bigint, nowMs?: number): number
  /** Sets `nowMs`'s bucket to `value` (saturating at 2^32 - 1). */
  set(value: number | bigint, nowMs?: number): void
  /** Raises `nowMs`'s bucket to at least `value`; returns the bucket's value. */
  fetchMax(value: number | bigint, nowMs?: number): number
  /** Zeroes the aligned cycle after the one holding `nowMs`. */
  clearNextCycle(nowMs?: number): void
  sum(nowMs?: number): number
  bucket(nowMs?: number): number
  lastWholeCycle(nowMs?: number): number
}

/**
 * A per-key rule (README "Per-key limits"). Names are camelCase or
 * snake_case (`periodMs` or `period_ms`); omitted, `null` and `undefined`
 * fields take the core's defaults; the core judges every value.
 */
export interface KeyRule {
  /** `rate` (GCRA), `fixedWindow`, `slidingWindow` (counter) or `inFlight`. */
  kind: 'rate' | 'fixedWindow' | 'slidingWindow' | 'inFlight'
  /** Units per period (rate), per window, or held at once (inFlight). */
  limit: number
  /** The period of a rate, the window of a window rule (ms). */
  periodMs?: number | null
  period_ms?: number | null
  /** Rate: how many units a fresh key takes at once (default `limit`). */
  burst?: number | null
  /** fixedWindow: a key's window starts at its first hit (not aligned). */
  windowFromFirstHit?: boolean | number | null
  window_from_first_hit?: boolean | number | null
  /** fixedWindow: refused calls count too. */
  countRefused?: boolean | number | null
  count_refused?: boolean | number | null
  /** Named keys with a limit of their own: `[key, limit]` pairs. */
  exceptions?: Array<[string, number]> | null
}

/** A key: a string (its UTF-8 bytes) or any bytes. */
export type Key = string | Uint8Array

export interface KeyedLimitOptions {
  /** How many keys the table holds (rounded up to a multiple of 4). Default 65536. */
  capacity?: number
  /** Its label in metrics (`sds_keyed_*{limit="..."}`); default: a shared file's name, else `private-N`. */
  name?: string
}

export interface SharedKeyedLimitOptions extends KeyedLimitOptions {
  /** The shared file's mode: `0o600` (default) or `0o660` (its group too). */
  mode?: 0o600 | 0o660
}

/** A key's decision, in ms; round up to seconds for HTTP headers. */
export interface KeyDecision {
  /** Whether the call may run: its cost was taken only if so. */
  admitted: boolean
  /** The quota: a rate's burst, a window's limit (the key's own if named). */
  limit: number
  /** Units still available after this call. */
  remaining: number
  /** ms until the key is back to a fresh state if no call comes (0: fresh). */
  resetMs: number
  /** When refused: ms until the same cost fits; `Infinity` if it never will; 0 if admitted. */
  retryAfterMs: number
  /** The policy's window: the window, or the time a whole burst takes to refill. */
  windowMs: number
}

/** A window rule's counts for a key. */
export interface KeyCount {
  /** Units counted in the key's (current) window. */
  count: number
  /** Sliding window: the previous window's count; fixed: 0. */
  previous: number
  /** ms until the window ends (fixed: 0 when the key has no window). */
  resetMs: number
}

export interface KeyStats {
  capacity: number
  /** Keys holding a cell. */
  resident: number
  /** Keys whose cell was given to another key. */
  evictions: number
  /** Of those, keys whose state was not a fresh key's (a limit forgotten). */
  lossyEvictions: number
  /** Calls of `decide` admitted since the table was opened (a shared table's: every process's, since its first opening). */
  admitted: number
  /** Calls of `decide` refused since then (an error such as a full table is neither). */
  refused: number
}

/** Limits per key by one rule, in a fixed-size table private or shared by the host. */
export declare class KeyedLimit {
  constructor(rule: KeyRule | string, options?: KeyedLimitOptions)
  /**
   * The key table file `nameOrPath` (a bare name is a file under `/dev/shm`),
   * created if needed, shared by every process of the host that opens it
   * with the same rule and capacity. Not for an `inFlight` rule.
   */
  static shared(nameOrPath: string, rule: KeyRule | string, options?: SharedKeyedLimitOptions): KeyedLimit
  /** How many keys fit. */
  readonly capacity: number
  /** The shared file, `null` for a private table. */
  readonly path: string | null
  /** The rule's kind. */
  readonly kind: KeyRule['kind']
  /** Its label in metrics: the `name` option, else a shared file's name, else `private-N`. */
  readonly name: string
  /** Decides `cost` (default 1) units for `key` at `nowMs` (default: now). */
  decide(key: Key, cost?: number, nowMs?: number): KeyDecision
  /** The decision of one unit now, nothing taken. */
  peek(key: Key, nowMs?: number): KeyDecision
  /** inFlight: gives back `units` (default 1); whether the key held any. */
  release(key: Key, units?: number): boolean
  /** Forgets `key`; whether it was held. */
  reset(key: Key): boolean
  /** Forgets every key; how many were held. */
  resetAll(): number
  /** Window rules: counts `units` (default 1) whatever the limit. */
  increment(key: Key, units?: number, nowMs?: number): KeyCount
  /** Window rules: takes up to `units` (default 1) off a live window. */
  decrement(key: Key, units?: number, nowMs?: number): KeyCount
  /** Window rules: the key's counts, nothing taken. */
  count(key: Key, nowMs?: number): KeyCount
  stats(): KeyStats
  /** Frees the table (this process's mapping of a shared one); later calls throw `SDS_CLOSED`. */
  close(): void
}

/**
 * Metrics adapters (README "Metrics"): the caller's prom-client registry or
 * OpenTelemetry meter reads a client's families at scrape or export time.
 * Neither package is a dependency of sds-native: the types below are what
 * these functions use of them.
 */
export declare namespace metrics {
  /** The Content-Type of `Client#prometheusText()`. */
  const PROMETHEUS_CONTENT_TYPE: string
  /** The Content-Type of `Client#prometheusText({ openMetrics: true })`. */
  const OPENMETRICS_CONTENT_TYPE: string

  /** What `registerPromClient` uses of a prom-client `Registry`. */
  interface PromClientRegistry {
    registerMetric(metric: any): void
    getSingleMetric(name: string): any
    removeSingleMetric(name: string): void
  }

  /** What `instrumentOtel` uses of an OpenTelemetry `Meter` (@opentelemetry/api). */
  interface OtelMeter {
    createObservableCounter(name: string, options?: { description?: string }): any
    createObservableGauge(name: string, options?: { description?: string }): any
    addBatchObservableCallback(callback: (result: any) => void, observables: any[]): void
    removeBatchObservableCallback(callback: (result: any) => void, observables: any[]): void
  }

  /** Undoes a registration. */
  interface Registration {
    unregister(): void
  }

  /**
   * Registers every family of `client` (and the process's keyed limits) in
   * `registry`, collected once per scrape; counters named with `_total` as
   * in `prometheusText()`. One client per registry.
   */
  function registerPromClient(client: Client, registry: PromClientRegistry): Registration
  /**
   * An observable counter or gauge on `meter` per family (named as the
   * family, e.g. `sds_point_requests`), observed by one batch callback.
   */
  function instrumentOtel(client: Client, meter: OtelMeter): Registration
}

/** Stores of express-rate-limit and @fastify/rate-limit on key tables (README "Rate limiting a web app"). */
export { ExpressRateLimitStore, type ExpressRateLimitInfo, type RateLimitStoreOptions } from './lib/stores/express.js'
export { FastifyRateLimitStore, type FastifyRateLimitCount, type FastifyRateLimitCallback } from './lib/stores/fastify.js'

/**
 * The web middleware (README "Our middleware (Express, Fastify)"): a route
 * maps to keyed policies (429 with `Retry-After` when one refuses) and to an
 * SDS point (503 or the route's fallback when it downgrades), with the
 * `RateLimit` / `RateLimit-Policy` headers of draft-ietf-httpapi-ratelimit-headers-10.
 */
export declare namespace web {
  /** What the built-in key functions read of a request (Express's `req`, Fastify's `request`). */
  interface Request {
    headers: import('node:http').IncomingHttpHeaders
    socket: { remoteAddress?: string }
  }

  /** A request's key for a policy; `null` or `undefined`: the policy does not apply to it. */
  type KeyFunction<Req = any> = (req: Req) => Key | null | undefined

  interface PolicyOptions<Req = any> {
    /** Its name in the headers: 1 to 64 printable ASCII characters. */
    name: string
    limit: KeyedLimit
    key: KeyFunction<Req>
    /** Units a request takes: 1 to 2^32 - 1, or a function of the request. Default 1. */
    cost?: number | ((req: Req) => number)
  }

  /** A policy made by `web.policy` (routes take only those). */
  interface Policy {
    readonly name: string
    readonly limit: KeyedLimit
    readonly key: KeyFunction
    readonly cost: number | ((req: any) => number)
  }

  /** `draft-10` (default): `RateLimit`, `RateLimit-Policy`; `draft-6`: `RateLimit-Limit/Remaining/Reset`; `x-ratelimit`: `X-RateLimit-*`. */
  type HeaderStyle = 'draft-10' | 'draft-6' | 'x-ratelimit'

  /**
   * Why a route downgraded: the point's reason (a full in-flight key table
   * answers a plain 503 without the fallback).
   */
  type DowngradeReason = Reason

  interface RouteOptions<Req, Fallback> {
    /** The client of `point` (required with it). */
    client?: Client
    /** The route's SDS point, or a function naming it per request (`null`: none). */
    point?: string | ((req: Req) => string | null | undefined)
    policies?: Policy[]
    /** Answers a downgrade instead of the 503. */
    fallback?: Fallback
    headers?: HeaderStyle
  }

  type ExpressFallback = (
    req: any,
    res: import('node:http').ServerResponse,
    reason: DowngradeReason,
  ) => unknown
  type ExpressOptions = RouteOptions<any, ExpressFallback>
  /** Express (or Connect, or `node:http`) middleware. */
  type ExpressMiddleware = (
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
    next: (err?: any) => void,
  ) => void

  /** Returns the payload (or a promise of it), or answers with `reply` itself. */
  type FastifyFallback = (request: any, reply: any, reason: DowngradeReason) => unknown
  /** The plugin's options: every later route's defaults (a route's `config.sds` overrides them; `false` turns them off). */
  type FastifyOptions = RouteOptions<any, FastifyFallback>
  /**
   * A Fastify route's `config.sds`: options overriding the plugin's for that
   * route (an omitted option keeps the plugin's), or `false`: not guarded.
   */
  type FastifyRouteConfig = FastifyOptions | false
  type FastifyPlugin = (instance: any, options: FastifyOptions, done: (err?: Error) => void) => void

  interface ClientAddressOptions {
    /** Bits of an IPv4 address that name a client (0 to 32). Default 32. */
    ipv4Prefix?: number
    /** Bits of an IPv6 address that name a client (0 to 128). Default 64. */
    ipv6Prefix?: number
    /** Proxies whose `X-Forwarded-For` is believed: addresses or CIDR networks. */
    trustedProxies?: string[]
  }

  /** Middleware guarding the routes it is mounted on. */
  function express(options?: ExpressOptions): ExpressMiddleware
  /** `app.register(web.fastify, options)`. */
  const fastify: FastifyPlugin
  function policy<Req = any>(options: PolicyOptions<Req>): Policy
  /** The client's address masked to its prefix (`203.0.113.7`, `2001:db8:1:2::/64`). */
  function clientAddress(options?: ClientAddressOptions): (req: Request) => string
  /** The header's value; a request without it is not limited by the policy. */
  function header(name: string): (req: Request) => string | undefined
}

/**
 * Fastify's route `config` (`app.get(url, { config: { sds } }, handler)`)
 * gains `sds`, read by `web.fastify` when the route is registered. An
 * augmentation in a declaration file: without fastify installed it is
 * ignored.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    sds?: web.FastifyRouteConfig
  }
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
