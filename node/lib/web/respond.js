'use strict';
// What both adapters do around a verdict: the request handler itself, which
// settles it when the response is over, waits a paced request's turn and
// calls a route's fallback, which may return a promise.
const { setTimeout: sleep } = require('node:timers/promises');
const { ADMITTED, LIMITED, FULL } = require('./core.js');

const VERDICT = Symbol('sds.web.verdict');

/**
 * Settles `verdict` when `res` (the Node ServerResponse) closes: Node emits
 * 'close' after the last byte is handed to the socket and when the client
 * goes away first, so permits come back on every path. A response already
 * closed (the client left before the route ran) settles now.
 */
/**
 * The request handler of both adapters, `(request, response, go)` with `go`
 * next() or done(): `guard` decides; the verdict's headers go on the
 * response; an admitted request goes on (after its paced wait) and settles
 * when the response closes; a limited one gets 429, one that met a full
 * in-flight key table a plain 503, a downgraded one 503 without a
 * fallback, else the route's fallback answers. A throw from the
 * guard (a key function's) is `go(error)`. How each is written is
 * `adapter`'s, functions of module scope (nothing allocated per request):
 * `raw(response)` the Node ServerResponse, `header(response, name, value)`,
 * `plain(response, status, text)`, and `fallback(run, response, go)` calling
 * `run()` and answering with what it gives.
 */
function guardedHandler(guard, adapter) {
  const fallback = guard.fallback;
  return function sdsGuarded(request, response, go) {
    let verdict;
    try {
      verdict = guard.check(request);
    } catch (error) {
      return go(error);
    }
    const fields = verdict.fields;
    for (let i = 0; i < fields.length; i += 2) adapter.header(response, fields[i], fields[i + 1]);
    if (verdict.kind === ADMITTED) {
      const raw = adapter.raw(response);
      if (verdict.open) settleOnClose(verdict, raw);
      // A paced point's request runs after its wait (a timer; none when 0).
      return proceed(verdict, raw, go);
    }
    if (verdict.kind === LIMITED) return adapter.plain(response, 429, 'Too Many Requests');
    if (verdict.kind === FULL) return adapter.plain(response, 503, 'Service Unavailable');
    if (fallback === null) return adapter.plain(response, 503, 'Service Unavailable');
    return adapter.fallback(() => fallback(request, response, verdict.reason), response, go);
  };
}

function settleOnClose(verdict, res) {
  if (res.destroyed || res.closed) return verdict.finish(res.statusCode);
  // One shared listener, the verdict on the response: no closure and no
  // once() wrapper per request ('close' comes once; finish() settles once).
  res[VERDICT] = verdict;
  res.on('close', onClose);
}

function onClose() {
  const verdict = this[VERDICT];
  this[VERDICT] = null;
  if (verdict) verdict.finish(this.statusCode);
}

/**
 * Calls `go` (next() or done()) once an admitted request may run: at once,
 * or after a timer of the wait its paced point gave it. A request whose
 * client left during the wait never reaches the handler ('close' settled
 * its verdict already).
 */
function proceed(verdict, res, go) {
  const wait = verdict.waitMs;
  if (wait === 0) return go();
  sleep(wait).then(() => {
    if (!res.destroyed) go();
  });
}

/** `run()`, its value (or what its promise resolves to) to `onValue`, a throw or rejection to `onError`. */
function callFallback(run, onValue, onError) {
  let result;
  try {
    result = run();
  } catch (error) {
    return onError(error);
  }
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
    return void result.then(onValue, onError);
  }
  return onValue(result);
}

module.exports = { guardedHandler, callFallback };
