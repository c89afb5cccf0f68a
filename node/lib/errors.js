'use strict';
const { CODES } = require('./native.js');

/** An `Error` with `.code` `SDS_INVALID_ARGUMENT` (the name from the core's table). */
function invalidArgument(message) {
  const error = new Error(message);
  error.code = CODES.invalidArgument;
  Error.captureStackTrace(error, invalidArgument);
  return error;
}

/** 'an array', 'a Map', 'an object'...; never throws (a revoked Proxy is 'an object'). */
function describeObject(value) {
  try {
    if (Array.isArray(value)) return 'an array';
    const proto = Object.getPrototypeOf(value);
    const name = proto !== null && typeof proto.constructor === 'function' ? proto.constructor.name : '';
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  } catch {
    return 'an object';
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return describeObject(value);
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/**
 * Reports an error that a listener (`who`) threw as a process warning with
 * code `SDS_LISTENER_ERROR`, its stack in the detail. Never throws itself,
 * whatever was thrown (a revoked Proxy, a hostile toString).
 */
function warnListenerError(who, error) {
  let text = 'a value that cannot be shown';
  let stack;
  try {
    text = String(error);
    if (error instanceof Error) stack = error.stack;
  } catch {
    // Keep what was read.
  }
  process.emitWarning(`${who} threw: ${text}`, { code: 'SDS_LISTENER_ERROR', detail: stack });
}

/** Thrown (or rejected) by `run` when a request is downgraded and no fallback is given. */
class DowngradedError extends Error {
  constructor(point, reason) {
    super(`point ${JSON.stringify(point)} is downgraded (${reason})`);
    this.name = 'DowngradedError';
    this.code = CODES.downgraded;
    this.point = point;
    this.reason = reason;
  }
}

module.exports = { invalidArgument, describe, warnListenerError, DowngradedError };
