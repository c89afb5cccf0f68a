'use strict';
// Checks of what only JavaScript has (functions, option objects), so a wrong
// one gets an SDS_INVALID_ARGUMENT that names it and changes nothing.
// Numbers, names and strategies are checked by the addon.
const { invalidArgument, describe } = require('./errors.js');

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

module.exports = { checkFunction, checkOptions };
