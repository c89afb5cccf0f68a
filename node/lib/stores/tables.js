'use strict';
// What the stores of express-rate-limit and @fastify/rate-limit keep their
// counts in: KeyedLimit tables of a fixed window that starts at each key's
// first hit (core/src/keyed/mod.rs, "Counts, as stores keep them"), of this
// process or shared by the host's processes through a file.
const { KeyedLimit } = require('../keyed.js');
const { native } = require('../native.js');
const { checkOptions } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

const STORE_OPTIONS = ['shared', 'capacity', 'mode', 'prefix'];

/**
 * The rule of a store's table for windows of `windowMs`. The libraries
 * compare counts with their own limit, so the table's `limit` only sets how
 * far a count goes (2 * limit + 1 before it stays at its cap). It depends on
 * `windowMs` alone, so every process opens a shared file with the same rule.
 */
function countingRule(windowMs) {
  if (!Number.isSafeInteger(windowMs) || windowMs < 1) {
    throw invalidArgument(`the window must be a whole number of ms, at least 1, got ${describe(windowMs)}`);
  }
  const limit = native.NativeKeys.countingLimit(windowMs);
  if (limit === null) throw invalidArgument(`the window is too long to count in, got ${describe(windowMs)}`);
  return { kind: 'fixedWindow', limit, periodMs: windowMs, windowFromFirstHit: true };
}

/**
 * A store's options, checked: `shared` (a bare name under /dev/shm or a
 * path; none: this process's own table), `capacity` (keys), `mode` (of a
 * new shared file), `prefix` (put before every key).
 */
function storeOptions(options, what) {
  const { shared, capacity, mode, prefix = '' } = checkOptions(options, STORE_OPTIONS, what);
  if (shared !== undefined && (typeof shared !== 'string' || shared === '')) {
    throw invalidArgument(`${what} shared must be a name or a path, got ${describe(shared)}`);
  }
  if (mode !== undefined && shared === undefined) {
    throw invalidArgument(`${what} mode is only for a shared table (give shared too)`);
  }
  if (typeof prefix !== 'string') throw invalidArgument(`${what} prefix must be a string, got ${describe(prefix)}`);
  return { shared, capacity, mode, prefix };
}

/** The table for windows of `windowMs`: shared as `options.shared` + `suffix`, or this process's. */
function openTable(options, windowMs, suffix = '') {
  const rule = countingRule(windowMs);
  const { shared, capacity, mode } = options;
  if (shared === undefined) return new KeyedLimit(rule, capacity === undefined ? undefined : { capacity });
  const tableOptions = {};
  if (capacity !== undefined) tableOptions.capacity = capacity;
  if (mode !== undefined) tableOptions.mode = mode;
  return KeyedLimit.shared(shared + suffix, rule, tableOptions);
}

module.exports = { storeOptions, openTable, countingRule };
