'use strict';
const { DowngradedError } = require('./errors.js');

function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') &&
    typeof value.then === 'function';
}

function isAsyncFunction(fn) {
  return fn.constructor && fn.constructor.name === 'AsyncFunction';
}

/**
 * Runs `fn(entry)` under `entry`: exits on return, resolve, throw or reject
 * and records throws and rejections as exceptions. Downgraded: exits at
 * once and returns `fallback(reason)`, or throws a `DowngradedError`
 * (rejects, for an async `fn`).
 */
function guard(entry, fn, fallback) {
  if (entry.downgraded) {
    const reason = entry.reason;
    entry.exit(entry.startMs);
    if (fallback !== undefined) return fallback(reason);
    const error = new DowngradedError(entry.point, reason);
    if (isAsyncFunction(fn)) return Promise.reject(error);
    throw error;
  }
  let result;
  try {
    result = fn(entry);
  } catch (error) {
    entry.error(error).exit();
    throw error;
  }
  if (!isThenable(result)) {
    entry.exit();
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      entry.exit();
      return value;
    },
    (error) => {
      entry.error(error).exit();
      throw error;
    },
  );
}

module.exports = { guard };
