'use strict';
// What both adapters do around a verdict: settle it when the response is
// over, wait a paced request's turn, and call a route's fallback, which may
// return a promise.
const { setTimeout: sleep } = require('node:timers/promises');

const VERDICT = Symbol('sds.web.verdict');

/**
 * Settles `verdict` when `res` (the Node ServerResponse) closes: Node emits
 * 'close' after the last byte is handed to the socket and when the client
 * goes away first, so permits come back on every path. A response already
 * closed (the client left before the route ran) settles now.
 */
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

module.exports = { settleOnClose, proceed, callFallback };
