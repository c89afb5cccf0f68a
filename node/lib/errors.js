'use strict';
const { native } = require('./native.js');

/**
 * An `Error` with `.code` `SDS_INVALID_ARGUMENT`, made by the addon so the
 * code comes from the core's table.
 */
function invalidArgument(message) {
  try {
    native.throwInvalidArgument(message);
  } catch (error) {
    Error.captureStackTrace(error, invalidArgument);
    return error;
  }
  /* c8 ignore next */
  throw new Error('unreachable: throwInvalidArgument returned');
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

/** The core's code for "downgraded, no fallback given" (checked against its table in the tests). */
const DOWNGRADED_CODE = 'SDS_DOWNGRADED';

/** Thrown (or rejected) by `run` when a request is downgraded and no fallback is given. */
class DowngradedError extends Error {
  constructor(point, reason) {
    super(`point ${JSON.stringify(point)} is downgraded (${reason})`);
    this.name = 'DowngradedError';
    this.code = DOWNGRADED_CODE;
    this.point = point;
    this.reason = reason;
  }
}

module.exports = { invalidArgument, describe, DowngradedError, DOWNGRADED_CODE };
