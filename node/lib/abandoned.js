'use strict';
// Entries collected without exit(): their permit comes back and a process
// warning names the point, as Node does for an unclosed file handle.
//
// Most entries are exited in the tick that made them, so they are only
// remembered in a short list, swept at the end of the tick (or when the
// list is full, in a loop that never yields); the list holds an entry until
// its sweep, so none is collected unseen. An entry still open then (a
// request whose response ends in a later tick: most web requests) is
// watched through a WeakRef beside an abandoned copy of it that does not
// reach it; its exit marks the copy exited.
//
// Registering each such entry with a FinalizationRegistry (and
// unregistering it at its exit) made an enter + exit across a tick cost
// 0.81-0.89 µs; with a WeakRef it costs 0.41-0.43 µs (0.22-0.25 µs
// unwatched; node/README.md). What tells
// when to look is one registry cell: a sentinel object that nothing holds,
// which every collection takes; its callback reads the watched entries,
// settles those collected open, forgets those exited, and sets a new
// sentinel. So an entry dropped open is settled just after the collection
// that took it, as a registry would do it.
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

// Open entries past their tick: a WeakRef to each, then its abandoned copy.
let watched = [];
// The length at which the list is reviewed without waiting for a collection.
const MIN_REVIEW_AT = 4 * SWEEP_AT;
let reviewAt = MIN_REVIEW_AT;
// Whether a sentinel is out (only while something is watched).
let sentinelOut = false;

/** Settles an entry that was collected open: exits its abandoned copy now. */
function settleCollected(copy) {
  copy.exit();
  process.emitWarning(
    `an entry of point ${JSON.stringify(copy.point)} was collected without exit(); ` +
      'its permit is returned and the request counted as failed',
    { code: WARNING_CODE },
  );
}

/**
 * Reads the watched entries: settles those collected open, forgets those
 * exited. Run after each collection, and when the list has doubled since
 * the last reading (entries exited between collections leave it then).
 */
function review() {
  const kept = [];
  const lost = [];
  for (let i = 0; i < watched.length; i += 2) {
    const copy = watched[i + 1];
    if (copy.exited) continue;
    if (watched[i].deref() === undefined) lost.push(copy);
    else kept.push(watched[i], copy);
  }
  watched = kept;
  reviewAt = Math.max(MIN_REVIEW_AT, 2 * kept.length);
  for (const copy of lost) settleCollected(copy);
}

function afterCollection() {
  sentinelOut = false;
  review();
  if (watched.length !== 0) setSentinel();
}

const collections = new FinalizationRegistry(afterCollection);

function setSentinel() {
  sentinelOut = true;
  collections.register({}, undefined);
}

function sweep() {
  const count = recentCount;
  recentCount = 0;
  for (let i = 0; i < count; i++) {
    const entry = recent[i];
    recent[i] = undefined;
    if (!entry.exited) {
      // Open past the end of its tick: let the collector tell if it is lost.
      const copy = entry._abandonedCopy();
      entry._copy = copy;
      watched.push(new WeakRef(entry), copy);
    }
  }
  if (watched.length >= reviewAt) review();
  if (!sentinelOut && watched.length !== 0) setSentinel();
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

module.exports = { track, WARNING_CODE };
