'use strict';
// express-rate-limit's `Store` (8.x) on a key table: its MemoryStore's
// counts (a window of `windowMs` from each key's first hit, every hit
// counted) kept where every worker of the host sees them.
const { storeOptions, openTable } = require('./tables.js');

// express-rate-limit's default windowMs, for a store used before init().
const DEFAULT_WINDOW_MS = 60_000;

// resetTime is a window's end, the same for every hit of a key's window: a
// Date per end is reused while its slot holds it, as MemoryStore hands out
// one Date per window (a Date costs more than the table's call). The
// middleware only reads it (and copies it where it keeps it).
const DATE_SLOTS = 1024;
const dates = new Array(DATE_SLOTS).fill(null);

function dateAt(ms) {
  const slot = ms % DATE_SLOTS;
  const date = dates[slot];
  if (date !== null && date.getTime() === ms) return date;
  return (dates[slot] = new Date(ms));
}

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
    this.windowMs = DEFAULT_WINDOW_MS;
    this._table = null;
  }

  /** Called by the middleware with its options: the table for its `windowMs`. */
  init(options) {
    const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    if (this._table !== null && windowMs === this.windowMs) return;
    this.shutdown();
    // Kept even when the table cannot be had: the middleware only logs an
    // error of init, so every later call throws it again rather than count
    // in a window that was not asked for.
    this.windowMs = windowMs;
    this._table = openTable(this._options, windowMs);
  }

  /** `{ totalHits, resetTime }` of `key`'s live window, `undefined` when it has none. */
  get(key) {
    const now = this._time();
    const count = this._open().count(this._key(key), now);
    if (count.resetMs === 0) return undefined;
    return { totalHits: count.count, resetTime: dateAt(now + count.resetMs) };
  }

  /** Counts a hit for `key` (starting its window if it has none): `{ totalHits, resetTime }`. */
  increment(key) {
    const now = this._time();
    const count = this._open().increment(this._key(key), 1, now);
    return { totalHits: count.count, resetTime: dateAt(now + count.resetMs) };
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

  // MemoryStore's clock, read as it reads it (so a test's fake timers move
  // both), given to the table with every call: resetTime, now + the ms
  // left, is exactly the window's end.
  _time() {
    return Date.now();
  }

  _key(key) {
    return this.prefix === '' && typeof key === 'string' ? key : `${this.prefix}${key}`;
  }
}

module.exports = { ExpressRateLimitStore };
