'use strict';
// What the stores of express-rate-limit and @fastify/rate-limit keep their
// counts in: KeyedLimit tables of a fixed window that starts at each key's
// first hit (core/src/keyed/mod.rs, "Counts, as stores keep them"), of this
// process or shared by the host's processes through a file.
const { KeyedLimit } = require('../keyed.js');
const { checkOptions } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

const STORE_OPTIONS = ['shared', 'capacity', 'mode', 'prefix'];

// Counts go up to 2^21 - 1 per window where the window's length allows it.
const COUNT_BITS = 21;
// The core's bound for a window from the first hit: count bits + bits(W) + 4 <= 54.
const TIME_AND_COUNT_BITS = 50;
const MIN_COUNT_BITS = 12;

function bitLength(value) {
  let bits = 0;
  for (let v = value; v >= 1; v = Math.floor(v / 2)) bits++;
  return bits;
}

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
  const countBits = Math.max(MIN_COUNT_BITS, Math.min(COUNT_BITS, TIME_AND_COUNT_BITS - bitLength(windowMs)));
  return { kind: 'fixedWindow', limit: 2 ** (countBits - 1) - 1, periodMs: windowMs, windowFromFirstHit: true };
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
