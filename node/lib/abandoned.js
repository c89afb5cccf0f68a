'use strict';
// Entries collected without exit(): their permit comes back and a process
// warning names the point, as Node does for an unclosed file handle.
//
// Registering every entry with a FinalizationRegistry (and unregistering it
// on exit) would cost about as much as enter + exit themselves. Most entries
// are exited in the tick that made them (synchronous work, run() of a sync
// function), so they are only remembered in a short list, and the list is
// swept at the end of the tick, or when it grows long in a loop that never
// yields: only the entries still open then are registered. An entry dropped
// and collected before its sweep cannot be: the list holds it until then.

const { NOW } = require('./native.js');

const SWEEP_AT = 1024;
const WARNING_CODE = 'SDS_ENTRY_NOT_EXITED';

let recent = [];
let sweepQueued = false;

/** What exiting an entry needs, without the entry (which must be collectable). */
class OpenEntry {
  constructor(entry) {
    this.hot = entry._hot;
    this.packed = entry._packed;
    this.startMs = entry.startMs;
    this.point = entry.point;
  }

  /** Exits as failed, now: the request never said it succeeded. */
  exit() {
    const hot = this.hot;
    const io = hot.io;
    io[0] = this.packed;
    io[1] = this.startMs;
    io[2] = NOW;
    hot.exitError();
  }
}

/** Settles an entry that was collected open. */
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
  const entries = recent;
  recent = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!entry.exited) {
      registry.register(entry, new OpenEntry(entry), entry);
      entry._registered = true;
    }
  }
}

function sweepAtEndOfTick() {
  sweepQueued = false;
  sweep();
}

/** Remembers a new entry (not downgraded: it holds what exit returns) until the end of the tick. */
function track(entry) {
  if (recent.push(entry) >= SWEEP_AT) sweep();
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
