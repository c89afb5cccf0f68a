'use strict';
const { EventEmitter } = require('node:events');
const { native, NOW, ioTime, PRESSURE_TEST_BIT, DOWNGRADED_BIT } = require('./native.js');
const { Entry } = require('./entry.js');
const { guard } = require('./run.js');
const { AdminAgent, ClusterSync } = require('./services.js');
const { track } = require('./abandoned.js');
const { invalidArgument, describe, warnListenerError } = require('./errors.js');
const { checkFunction, checkOptions } = require('./arguments.js');
const metrics = require('./metrics.js');

const CLIENT_OPTIONS = ['capacity', 'shared', 'mode'];
const ENTER_OPTIONS = ['nowMs', 'pressureTest'];
const METRICS_OPTIONS = ['nowMs'];
const TEXT_OPTIONS = ['openMetrics', 'nowMs'];

/**
 * An object literal, `Object.create(null)` or one from another realm: its
 * prototype is null or has none. A Map, Date, array, class instance or boxed
 * primitive would pass as an empty strategy (every rule off), so it is refused.
 */
function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  try {
    const proto = Object.getPrototypeOf(value);
    return proto === null || Object.getPrototypeOf(proto) === null;
  } catch {
    return false; // a revoked Proxy
  }
}

function enterFlags(options) {
  const { pressureTest } = options;
  if (pressureTest === undefined) return 0;
  if (typeof pressureTest !== 'boolean') {
    throw invalidArgument(`pressureTest must be a boolean, got ${describe(pressureTest)}`);
  }
  return pressureTest ? PRESSURE_TEST_BIT : 0;
}

/**
 * The points of one service: their strategies, counters and decisions.
 * Emits `'downgrade'` `(point, reason, timeMs)` for every downgraded request.
 */
class Client extends EventEmitter {
  constructor(options) {
    super();
    const { capacity = 1024, shared, mode } = checkOptions(options, CLIENT_OPTIONS, 'Client option');
    // With `shared`, the addon checks the name and mode and opens the file.
    this._table = new native.NativeTable(capacity, shared, mode);
    this._hot = this._table.hotPath();
    // Name -> point id: the name crosses N-API once, later calls pass the id.
    this._ids = new Map();
    this._points = new Map();
    // The slots of the background services (lib/services.js): the connected
    // console agent and the running cluster syncer, null when none.
    this._agent = null;
    this._cluster = null;
    // The last of each started, closed or not: metrics show a closed one as
    // down (lib/metrics.js). The exporter is made on first use.
    this._started = { _agent: null, _cluster: null };
    this._exporter = null;
  }

  /**
   * Connects this client's table to the SDS console: returns a running
   * `AdminAgent` (see lib/services.js). One agent per client at a time.
   */
  connectAdmin(options) {
    return AdminAgent.connect(this, options);
  }

  /**
   * Makes `options.points` cluster points, whose thresholds hold for every
   * instance of the service together, their counts shared through Redis:
   * returns a running `ClusterSync` (see lib/services.js). One per client at
   * a time.
   */
  connectCluster(options) {
    return ClusterSync.connect(this, options);
  }

  /** The connected agent's return value for `point`, or null. */
  _returnValue(point) {
    return this._agent === null ? null : this._agent.returnValue(point);
  }

  /** How many points fit. */
  get capacity() {
    return this._table.capacity;
  }

  /** The file of a shared table (a bare name resolved under /dev/shm), or `null`. */
  get shared() {
    return this._table.sharedPath;
  }

  /** A handle on the point `name` (created if needed) that skips the name lookup. */
  point(name) {
    let point = this._points.get(name);
    if (point === undefined) {
      point = new Point(this, name, this._idOf(name));
      this._points.set(name, point);
    }
    return point;
  }

  /** Counts a request on `name` and decides it; exit the entry when done. */
  enter(name, options) {
    let id = this._ids.get(name);
    if (id === undefined) id = this._idOf(name);
    return this._enter(id, name, options);
  }

  /** Runs `fn` guarded by the point `name`; see `Point#run`. */
  run(name, fn, fallback) {
    checkFunction(fn, 'fn');
    if (fallback !== undefined) checkFunction(fallback, 'fallback');
    let id = this._ids.get(name);
    if (id === undefined) id = this._idOf(name);
    return guard(this._enter(id, name, undefined, false), fn, fallback, this);
  }

  /**
   * Sets the strategy of `name`: an object of SDS JSON names
   * (`{ visitThreshold: 10 }`) or a JSON string. An invalid strategy throws
   * and the old one stays.
   */
  setStrategy(name, strategy) {
    if (typeof strategy !== 'string' && !isPlainObject(strategy)) {
      throw invalidArgument(`strategy must be a plain object or a JSON string, got ${describe(strategy)}`);
    }
    this._ids.set(name, this._table.setStrategy(name, strategy));
  }

  /** Removes the strategy of `name`; its counters stay. */
  removeStrategy(name) {
    this._table.removeStrategy(name);
  }

  /** The strategy of `name` in SDS JSON names, or `null` when it has none. */
  strategy(name) {
    return this._table.strategy(name);
  }

  /** The sliding values of `name` and its last whole 10 s cycle at `nowMs` (default: now). */
  stats(name, nowMs) {
    return this._table.stats(name, nowMs);
  }

  /**
   * Every metric family of this client (its points, its console agent and
   * cluster sync) and of the process's keyed limits, read now (or at
   * `nowMs`): `[{ name, sampleName, type, help, labelNames, samples: [{
   * labels, value }] }]`, a family with nothing to show with no samples.
   * On a shared table the counts are the host's.
   */
  metrics(options) {
    const { nowMs } = checkOptions(options, METRICS_OPTIONS, 'metrics option');
    return metrics.collect(this, nowMs);
  }

  /**
   * `metrics()` as the Prometheus text format (0.0.4), or OpenMetrics 1.0
   * with `openMetrics: true`: the body of a `/metrics` response (its
   * Content-Type: `metrics.PROMETHEUS_CONTENT_TYPE` /
   * `metrics.OPENMETRICS_CONTENT_TYPE`).
   */
  prometheusText(options) {
    const { openMetrics = false, nowMs } = checkOptions(options, TEXT_OPTIONS, 'prometheusText option');
    return metrics.text(this, openMetrics, nowMs);
  }

  _idOf(name) {
    const id = this._table.insert(name);
    this._ids.set(name, id);
    return id;
  }

  /** `tracked`: whether a dropped, never exited entry is watched for (lib/abandoned.js). */
  _enter(id, name, options, tracked = true) {
    let now = NOW;
    let flags = 0;
    if (options !== undefined) {
      const checked = checkOptions(options, ENTER_OPTIONS, 'enter option');
      if (checked.nowMs !== undefined) now = ioTime(checked.nowMs);
      flags = enterFlags(checked);
    }
    // Arguments and results travel through hot.io (see node/src/hot_path.rs).
    const hot = this._hot;
    const io = hot.io;
    io[0] = 2 * id + flags;
    io[1] = now;
    hot.enter();
    const packed = io[0];
    const entry = new Entry(hot, name, packed, io[1]);
    if ((packed & DOWNGRADED_BIT) === 0) {
      if (tracked) track(entry);
    } else if (this.listenerCount('downgrade') > 0) {
      this._emitDowngrade(entry);
    }
    return entry;
  }

  /**
   * A failing listener changes nothing for the request (README, the sugar
   * contract): the caller still gets its entry, and so its fallback; the
   * error becomes a process warning.
   */
  _emitDowngrade(entry) {
    try {
      this.emit('downgrade', entry.point, entry.reason, entry.startMs);
    } catch (error) {
      warnListenerError(`a 'downgrade' listener of point ${JSON.stringify(entry.point)}`, error);
    }
  }
}

/** One point of a client, resolved to its id once. */
class Point {
  constructor(client, name, id) {
    this.client = client;
    this.name = name;
    this._id = id;
  }

  /** Counts a request and decides it; exit the entry when done. */
  enter(options) {
    return this.client._enter(this._id, this.name, options);
  }

  /**
   * Runs `fn()` (sync or async) under an entry: exits on return, resolve,
   * throw or reject, and counts throws and rejections as exceptions. When
   * downgraded, returns `fallback()` without calling `fn`; with no fallback,
   * the console's return value for the point (a string, resolved for an
   * async function) when the client's agent has one, else throws a
   * `DowngradedError` (rejects, for an async function).
   */
  run(fn, fallback) {
    checkFunction(fn, 'fn');
    if (fallback !== undefined) checkFunction(fallback, 'fallback');
    return guard(this.client._enter(this._id, this.name, undefined, false), fn, fallback, this.client);
  }

  /** The point's statistics at `nowMs` (default: now). */
  stats(nowMs) {
    return this.client.stats(this.name, nowMs);
  }

  /** This point's strategy, or `null`; see `Client#strategy`. */
  strategy() {
    return this.client.strategy(this.name);
  }

  /** Sets this point's strategy; see `Client#setStrategy`. */
  setStrategy(strategy) {
    this.client.setStrategy(this.name, strategy);
  }

  /** Removes this point's strategy. */
  removeStrategy() {
    this.client.removeStrategy(this.name);
  }
}

module.exports = { Client, Point };
