'use strict';
// Checks of JavaScript arguments before they reach the addon, so a wrong type
// gets an SDS_INVALID_ARGUMENT that names the argument (and changes nothing).
const { invalidArgument, describe } = require('./errors.js');

/** A time or count in ms: a non-negative safe integer. */
function checkMs(value, what) {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw invalidArgument(`${what} must be a non-negative integer number of ms, got ${describe(value)}`);
}

/** `value`, or the wall clock when it is undefined. */
function msOrNow(value, what) {
  return value === undefined ? Date.now() : checkMs(value, what);
}

function checkCount(value, what) {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw invalidArgument(`${what} must be a non-negative integer, got ${describe(value)}`);
}

function checkName(name) {
  if (typeof name !== 'string') {
    throw invalidArgument(`point name must be a string, got ${describe(name)}`);
  }
  return name;
}

function checkFunction(fn, what) {
  if (typeof fn !== 'function') throw invalidArgument(`${what} must be a function, got ${describe(fn)}`);
  return fn;
}

/** `options` as an object with only the `allowed` keys; `{}` when undefined. */
function checkOptions(options, allowed, what) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgument(`${what} must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw invalidArgument(`unknown ${what} key ${JSON.stringify(key)} (known: ${allowed.join(', ')})`);
    }
  }
  return options;
}

module.exports = { checkMs, msOrNow, checkCount, checkName, checkFunction, checkOptions };
