'use strict';
// express-rate-limit's `Store` (8.x) on a key table: its MemoryStore's
// counts (a window of `windowMs` from each key's first hit, every hit
// counted) kept where every worker of the host sees them.
const { storeOptions, openTable } = require('./tables.js');

// express-rate-limit's default windowMs, for a store used before init().
const DEFAULT_WINDOW_MS = 60_000;

class ExpressRateLimitStore {
  /**
   * `options`: `shared` (a bare name under /dev/shm or a path: one table
   * for every process that opens it; none: this process's own), `capacity`
   * (keys, default 65536), `mode` (0o600 or 0o660), `prefix` (before every
   * key, to keep limiters sharing one file apart).
   */
  constructor(options) {
    this._options = storeOptions(options, 'ExpressRateLimitStore option');
    // express-rate-limit's contract: whether another instance of the store
    // can see these keys (its double-count check and messages use it).
    this.localKeys = this._options.shared === undefined;
    this.prefix = this._options.prefix;
    this._now = this._options.now;
    this.windowMs = DEFAULT_WINDOW_MS;
    this._table = null;
  }

  /** Called by the middleware with its options: the table for its `windowMs`. */
  init(options) {
    const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    if (this._table !== null && windowMs === this.windowMs) return;
    const table = openTable(this._options, windowMs);
    this.shutdown();
    this.windowMs = windowMs;
    this._table = table;
  }

  /** `{ totalHits, resetTime }` of `key`'s live window, `undefined` when it has none. */
  get(key) {
    const count = this._open().count(this._key(key), this._time());
    if (count.resetMs === 0) return undefined;
    return { totalHits: count.count, resetTime: this._resetTime(count.resetMs) };
  }

  /** Counts a hit for `key` (starting its window if it has none): `{ totalHits, resetTime }`. */
  increment(key) {
    const count = this._open().increment(this._key(key), 1, this._time());
    return { totalHits: count.count, resetTime: this._resetTime(count.resetMs) };
  }

  /** Takes one hit off `key`'s live window (never below 0). */
  decrement(key) {
    this._open().decrement(this._key(key), 1, this._time());
  }

  /** Forgets `key`. */
  resetKey(key) {
    this._open().reset(this._key(key));
  }

  /** Forgets every key of the table (on a shared table: every process's, every prefix's). */
  resetAll() {
    this._open().resetAll();
  }

  /** Lets go of the table (a shared file stays for the other processes); a later call opens it again. */
  shutdown() {
    if (this._table !== null) this._table.close();
    this._table = null;
  }

  _open() {
    if (this._table === null) this._table = openTable(this._options, this.windowMs);
    return this._table;
  }

  _key(key) {
    return this.prefix === '' && typeof key === 'string' ? key : `${this.prefix}${key}`;
  }

  _time() {
    return this._now === undefined ? undefined : this._now();
  }

  _resetTime(resetMs) {
    return new Date((this._now === undefined ? Date.now() : this._now()) + resetMs);
  }
}

module.exports = { ExpressRateLimitStore };
