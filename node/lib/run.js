'use strict';
const { setTimeout: sleep } = require('node:timers/promises');
const { DowngradedError } = require('./errors.js');
const { track } = require('./abandoned.js');
const { waitOf } = require('./native.js');

/**
 * `value.then` when it is a function, else undefined. Reading it may throw
 * (a revoked Proxy, a getter), so it is read once, and the caller treats a
 * throw as the call's failure.
 */
function thenOf(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const then = value.then;
  return typeof then === 'function' ? then : undefined;
}

/** Counts `error` as the call's failure, exits, and rethrows it. */
function fail(entry, error) {
  entry.error(error).exit();
  throw error;
}

function isAsyncFunction(fn) {
  return fn.constructor && fn.constructor.name === 'AsyncFunction';
}

/**
 * Runs `fn()` under `entry`: exits on return, resolve, throw or reject and
 * records throws and rejections as exceptions. Admitted with a wait (a
 * paced point): a timer of `entry.waitMs` first, then `fn`, so the result
 * is a promise whatever `fn` is; no timer when the wait is 0. Downgraded:
 * exits at once and returns `fallback()` (the arguments `fn` would have
 * had: none; the reason goes to the 'downgrade' listeners); without a
 * fallback, the console's return value for the point when `client`'s agent
 * has one (a string; resolved, for an async `fn`), else throws a
 * `DowngradedError` (rejects, for an async `fn`).
 */
function guard(entry, fn, fallback, client) {
  if (entry.downgraded) {
    entry.exit(entry.startMs);
    if (fallback !== undefined) return fallback();
    const value = client._returnValue(entry.point);
    if (value !== null) return isAsyncFunction(fn) ? Promise.resolve(value) : value;
    const error = new DowngradedError(entry.point, entry.reason);
    if (isAsyncFunction(fn)) return Promise.reject(error);
    throw error;
  }
  const wait = waitOf(entry._packed);
  if (wait === 0) return admitted(entry, fn);
  // The entry is open during the wait: the timer's closure holds it, and a
  // throw or rejection of fn after it settles it as below.
  return sleep(wait).then(() => admitted(entry, fn));
}

/** Runs `fn()` under the admitted `entry`, settling it exactly once. */
function admitted(entry, fn) {
  // Every path below settles the entry exactly once: a throw from fn, from
  // reading its result's `then`, or from calling that `then` is the call's
  // failure; otherwise the result (or what it settles to) is its success.
  let result;
  let then;
  try {
    result = fn();
    then = thenOf(result);
  } catch (error) {
    fail(entry, error);
  }
  if (then === undefined) {
    entry.exit();
    return result;
  }
  // The entry now outlives this call: a promise that never settles and is
  // dropped must still give its permit back.
  track(entry);
  // Adopts the thenable with the `then` already read (Promise.resolve would
  // read it again, and may throw synchronously on a hostile promise); a
  // throw from `then` itself rejects this promise.
  const settled = new Promise((resolve, reject) => {
    then.call(result, resolve, reject);
  });
  return settled.then(
    (value) => {
      entry.exit();
      return value;
    },
    (error) => fail(entry, error),
  );
}

module.exports = { guard };
