'use strict';
// The Express adapter (also plain `node:http`, Connect and anything with
// `(req, res, next)`): core.js decides, respond.js answers, this writes.
const { Guard } = require('./core.js');
const { guardedHandler, callFallback } = require('./respond.js');

const EXPRESS = {
  raw: (res) => res,
  header: (res, name, value) => res.setHeader(name, value),
  plain(res, status, text) {
    res.statusCode = status;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(text);
  },
  // The fallback answers as a handler does; a throw or a rejection is next(error).
  fallback: (run, res, next) => callFallback(run, ignore, next),
};

/**
 * Middleware guarding the routes it is mounted on: `options.policies`
 * (keyed limits), `options.point` with `options.client` (an SDS point),
 * `options.fallback` `(req, res, reason)` answering a downgrade, `options.headers`
 * ('draft-10', 'draft-6' or 'x-ratelimit').
 */
function express(options) {
  return guardedHandler(new Guard(options, 'express'), EXPRESS);
}

function ignore() {}

module.exports = { express };
