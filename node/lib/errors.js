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

module.exports = { invalidArgument, describe, DowngradedError };
