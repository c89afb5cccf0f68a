'use strict';
// KeyedLimit: per-key limits on a key table of the core (node/src/keys.rs),
// private to this process or shared by the host's processes through a file.
// The key-taking calls are the addon's hot functions: their numbers travel
// through `io` (cost or units and time in; the answer's numbers out), and the
// plain objects are built here, where V8 makes a literal cheaply.
const { native, NOW, ioTime } = require('./native.js');
const { checkOptions } = require('./arguments.js');
const { invalidArgument, describe } = require('./errors.js');

// 65 536 keys: 1 MiB of cells (16 bytes a key).
const DEFAULT_CAPACITY = 65536;
const PRIVATE_OPTIONS = ['capacity', 'name'];
const SHARED_OPTIONS = ['capacity', 'mode', 'name'];

/**
 * An amount as `io` takes it: a non-number goes as NaN, which the core's
 * rule refuses with the message every binding gives (a Float64Array would
 * otherwise coerce '5' to 5 and null to 0).
 */
function amount(value) {
  return typeof value === 'number' ? value : NaN;
}

function time(nowMs) {
  return nowMs === undefined ? NOW : ioTime(nowMs);
}

/**
 * A limit per key (a user, an API key, an address) by one rule: `rate`,
 * `fixedWindow`, `slidingWindow` or `inFlight` (see README "Per-key
 * limits"). Keys are strings (their UTF-8 bytes) or Buffers / Uint8Arrays.
 */
class KeyedLimit {
  /**
   * A table of this process: `rule` an object (`{ kind: 'rate', limit: 10,
   * periodMs: 1000 }`) or its JSON text; `capacity` keys (default 65536);
   * `name` its label in metrics (default `private-N`).
   */
  constructor(rule, options) {
    const { capacity = DEFAULT_CAPACITY, name } = checkOptions(options, PRIVATE_OPTIONS, 'KeyedLimit option');
    this._open(new native.NativeKeys(rule, capacity, undefined, undefined, name));
  }

  /**
   * The key table file `nameOrPath` (a bare name is a file under /dev/shm,
   * as for `new Client({ shared })`), created if needed, shared by every
   * process of the host that opens it with the same rule and capacity;
   * `mode` 0o600 (default) or 0o660; `name` its label in metrics (default:
   * the file's name). On an `inFlight` file the units of a process killed
   * while holding them are given back.
   */
  static shared(nameOrPath, rule, options) {
    const { capacity = DEFAULT_CAPACITY, mode, name } = checkOptions(options, SHARED_OPTIONS, 'KeyedLimit.shared option');
    if (typeof nameOrPath !== 'string') {
      throw invalidArgument(`nameOrPath must be a string, got ${describe(nameOrPath)}`);
    }
    const limit = Object.create(KeyedLimit.prototype);
    limit._open(new native.NativeKeys(rule, capacity, nameOrPath, mode, name));
    return limit;
  }

  _open(table) {
    this._table = table;
    const hot = table.hotPath();
    this._io = hot.io;
    this._decide = hot.decide;
    this._peek = hot.peek;
    this._increment = hot.increment;
    this._decrement = hot.decrement;
    this._count = hot.count;
    this._release = hot.release;
    this._reset = hot.reset;
    // Read once: they stay readable after close().
    this._capacity = table.capacity;
    this._path = table.path;
    this._kind = table.kind;
    this._name = table.label;
  }

  _decision() {
    const io = this._io;
    return {
      admitted: io[0] === 1,
      limit: io[1],
      remaining: io[2],
      resetMs: io[3],
      retryAfterMs: io[4],
      windowMs: io[5],
    };
  }

  _counts() {
    const io = this._io;
    return { count: io[0], previous: io[1], resetMs: io[2] };
  }

  /** Decides a call of `cost` units for `key` at `nowMs` (default: now); takes the cost only if admitted. */
  decide(key, cost = 1, nowMs = undefined) {
    const io = this._io;
    io[0] = typeof cost === 'number' ? cost : NaN;
    io[1] = nowMs === undefined ? NOW : ioTime(nowMs);
    this._decide(key);
    return this._decision();
  }

  /** The decision a call would get now, nothing taken (`admitted`: whether 1 unit would be). */
  peek(key, nowMs = undefined) {
    this._io[1] = time(nowMs);
    this._peek(key);
    return this._decision();
  }

  /** An `inFlight` rule: gives back `units` a call took; whether `key` held any. */
  release(key, units = 1) {
    this._io[0] = amount(units);
    this._release(key);
    return this._io[0] === 1;
  }

  /** Forgets `key`; whether it was held. */
  reset(key) {
    this._reset(key);
    return this._io[0] === 1;
  }

  /** Forgets every key; how many were held. */
  resetAll() {
    return this._table.resetAll();
  }

  /** A window rule: counts `units` for `key` whatever the limit (a store's increment). */
  increment(key, units = 1, nowMs = undefined) {
    this._io[0] = amount(units);
    this._io[1] = time(nowMs);
    this._increment(key);
    return this._counts();
  }

  /** A window rule: takes up to `units` off `key`'s live window. */
  decrement(key, units = 1, nowMs = undefined) {
    this._io[0] = amount(units);
    this._io[1] = time(nowMs);
    this._decrement(key);
    return this._counts();
  }

  /** A window rule: `key`'s counts, nothing taken. */
  count(key, nowMs = undefined) {
    this._io[1] = time(nowMs);
    this._count(key);
    return this._counts();
  }

  /**
   * `{ capacity, resident, evictions, lossyEvictions, admitted, refused }`, the core's names
   * in its order (a shared table's: every process's keys and decisions).
   */
  stats() {
    return this._table.stats();
  }

  /** How many keys fit (the capacity asked for, rounded up to a multiple of 4). */
  get capacity() {
    return this._capacity;
  }

  /** The rule's kind: `'rate'`, `'fixedWindow'`, `'slidingWindow'` or `'inFlight'`. */
  get kind() {
    return this._kind;
  }

  /** The file of a shared table, `null` for a private one. */
  get path() {
    return this._path;
  }

  /** Its label in metrics (`sds_keyed_*{limit="..."}`): the `name` option, else a shared file's name, else `private-N`. */
  get name() {
    return this._name;
  }

  /** Frees the table (a shared file stays for the others); later calls throw `SDS_CLOSED`. */
  close() {
    this._table.close();
  }
}

module.exports = { KeyedLimit, DEFAULT_CAPACITY };
