'use strict';
// Entries collected without exit(): their permit comes back and a process
// warning names the point, as Node does for an unclosed file handle.
//
// Registering every entry with a FinalizationRegistry (and unregistering it
// on exit) would cost about as much as enter + exit themselves. Most entries
// are exited in the tick that made them, so they are only remembered in a
// short list, swept at the end of the tick (or when the list is full, in a
// loop that never yields): only the entries still open then are registered.
// The list holds an entry until its sweep, so none is collected unseen.
// run() settles its entry on every path, so it tracks only an entry that
// outlives the call (an async function's); a downgraded entry holds nothing
// and is not tracked.

const SWEEP_AT = 1024;
const WARNING_CODE = 'SDS_ENTRY_NOT_EXITED';

// Entries made since the last sweep, in a fixed array (no growth on the
// hot path); the sweep clears the slots so nothing stays reachable.
const recent = new Array(SWEEP_AT).fill(undefined);
let recentCount = 0;
let sweepQueued = false;

/** Settles an entry that was collected open: exits its abandoned copy now. */
function settleCollected(held) {
  held.exit();
  process.emitWarning(
    `an entry of point ${JSON.stringify(held.point)} was collected without exit(); ` +
      'its permit is returned and the request counted as failed',
    { code: WARNING_CODE },
  );
}

const registry = new FinalizationRegistry(settleCollected);

function sweep() {
  const count = recentCount;
  recentCount = 0;
  for (let i = 0; i < count; i++) {
    const entry = recent[i];
    recent[i] = undefined;
    if (!entry.exited) {
      // Open past the end of its tick: let the collector tell if it is lost.
      registry.register(entry, entry._abandonedCopy(), entry);
      entry._registered = true;
    }
  }
}

function sweepAtEndOfTick() {
  sweepQueued = false;
  sweep();
}

/** Remembers an entry that is not downgraded (it holds a permit) until the end of the tick. */
function track(entry) {
  recent[recentCount++] = entry;
  if (recentCount === SWEEP_AT) sweep();
  if (!sweepQueued) {
    sweepQueued = true;
    queueMicrotask(sweepAtEndOfTick);
  }
}

/** Forgets an entry registered by a sweep (it was exited). */
function untrack(entry) {
  registry.unregister(entry);
}

module.exports = { track, untrack, WARNING_CODE };
