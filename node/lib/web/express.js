'use strict';
// The Express adapter (also plain `node:http`, Connect and anything with
// `(req, res, next)`): core.js decides, this writes the answer.
const { Guard, ADMITTED, LIMITED } = require('./core.js');
const { settleOnClose, proceed, callFallback } = require('./respond.js');

/**
 * Middleware guarding the routes it is mounted on: `options.policies`
 * (keyed limits), `options.point` with `options.client` (an SDS point),
 * `options.fallback` `(req, res, reason)` answering a downgrade, `options.headers`
 * ('draft-10', 'draft-6' or 'x-ratelimit').
 */
function express(options) {
  const guard = new Guard(options, 'express');
  const fallback = guard.fallback;
  return function sdsExpress(req, res, next) {
    let verdict;
    try {
      verdict = guard.check(req);
    } catch (error) {
      return next(error);
    }
    const fields = verdict.fields;
    for (let i = 0; i < fields.length; i += 2) res.setHeader(fields[i], fields[i + 1]);
    if (verdict.kind === ADMITTED) {
      if (verdict.open) settleOnClose(verdict, res);
      // A paced point's request runs after its wait (a timer; none when 0).
      return proceed(verdict, res, next);
    }
    if (verdict.kind === LIMITED) return plain(res, 429, 'Too Many Requests');
    if (fallback === null) return plain(res, 503, 'Service Unavailable');
    // The fallback answers as a handler does; a throw or a rejection is next(error).
    return callFallback(() => fallback(req, res, verdict.reason), ignore, next);
  };
}

function ignore() {}

function plain(res, status, text) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

module.exports = { express };
