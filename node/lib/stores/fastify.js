'use strict';
// @fastify/rate-limit's custom store (11.x) on key tables: its LocalStore's
// counts (a window of `timeWindow` from each key's first hit, every hit
// counted) kept where every worker of the host sees them. The plugin gives
// the window with each call, so the store keeps a table per window length,
// opened on first use (a shared one as the file `<shared>.<timeWindow>ms`).
const { storeOptions, openTable } = require('./tables.js');
const { invalidArgument } = require('../errors.js');

// What LocalStore does that a window from the first hit cannot: each is a
// window restarted (and, backing off, lengthened) by a refused hit.
const REFUSED_PARAMS = ['continueExceeding', 'exponentialBackoff'];

function refuseUnserved(params) {
  for (const name of REFUSED_PARAMS) {
    if (params !== null && typeof params === 'object' && params[name] === true) {
      throw invalidArgument(
        `FastifyRateLimitStore does not serve ${name}: its windows start at a key's first hit and last ` +
        'timeWindow, never restarted by a refused hit. Leave continueExceeding and exponentialBackoff off ' +
        '(max, timeWindow, ban, allowList, keyGenerator, groupId and per-route limits all work), or use ' +
        "the plugin's own local or Redis store for them.",
      );
    }
  }
}

/**
 * `cb(null, step(store, key, timeWindow))`, or `cb(error, null)` when the
 * step throws; `ended` without a step for a window of 0 ms. Module-level
 * steps: nothing is allocated per hit.
 */
function answer(store, key, timeWindow, cb, ended, step) {
  if (timeWindow === 0) {
    cb(null, ended);
    return;
  }
  let value;
  try {
    value = step(store, key, timeWindow);
  } catch (error) {
    cb(error, null);
    return;
  }
  cb(null, value);
}

function hit(store, key, timeWindow) {
  const count = store._table(timeWindow).increment(store._prefix + key, 1, store._time());
  return { current: count.count, ttl: count.resetMs };
}

function look(store, key, timeWindow) {
  const count = store._table(timeWindow).count(store._prefix + key, store._time());
  return count.resetMs === 0 ? { current: 0, ttl: 0 } : { current: count.count, ttl: count.resetMs };
}

class FastifyRateLimitStore {
  /**
   * A store class for the plugin's `store` option whose tables take
   * `options`: `shared` (a bare name under /dev/shm or a path; each window
   * length is its own file, `<shared>.<timeWindow>ms`), `capacity` (keys
   * per table, default 65536), `mode` (0o600 or 0o660), `prefix` (before
   * every key). The class itself is a store of this process's own tables.
   */
  static with(options) {
    const checked = storeOptions(options, 'FastifyRateLimitStore option');
    const Base = this;
    return class extends Base {
      constructor(params) {
        super(params, checked);
      }
    };
  }

  /** Built by the plugin with its options (`params`); `options` as `with` takes them. */
  constructor(params, options) {
    refuseUnserved(params);
    this._options = storeOptions(options, 'FastifyRateLimitStore option');
    this._prefix = this._options.prefix;
    // Window length (ms) -> its table; one map for a store and its children.
    this._tables = new Map();
  }

  /** Counts a hit for `key`: `cb(null, { current, ttl })`, `ttl` the ms left in its window. */
  incr(key, cb, timeWindow, max) {
    // A window of 0 ms has ended at every hit (LocalStore's answer too).
    answer(this, key, timeWindow, cb, { current: 1, ttl: 0 }, hit);
  }

  /** `key`'s counts, nothing counted: `{ current, ttl }`, `{ current: 0, ttl: 0 }` without a live window. */
  read(key, cb, timeWindow, max) {
    answer(this, key, timeWindow, cb, { current: 0, ttl: 0 }, look);
  }

  /**
   * The store of a route with its own limits: the same tables, its keys
   * apart under the prefix `<method><url>-` (as the plugin's Redis store
   * keeps them, so every process names a route's keys alike).
   */
  child(routeOptions) {
    const store = new this.constructor(routeOptions, this._options);
    const route = routeOptions.routeInfo ?? {};
    store._tables = this._tables;
    store._prefix = `${this._prefix}${route.method}${route.url}-`;
    return store;
  }

  /** Lets go of every table (shared files stay for the other processes). */
  close() {
    for (const table of this._tables.values()) table.close();
    this._tables.clear();
  }

  _table(timeWindow) {
    let table = this._tables.get(timeWindow);
    if (table === undefined) {
      table = openTable(this._options, timeWindow, `.${timeWindow}ms`);
      this._tables.set(timeWindow, table);
    }
    return table;
  }

  // LocalStore's clock, read as it reads it (so a test's fake timers move both).
  _time() {
    return Date.now();
  }
}

module.exports = { FastifyRateLimitStore };
