'use strict';
const { NOW, ioTime, waitOf, DOWNGRADED_BIT, REASON_SHIFT, REASON_MASK, REASONS } = require('./native.js');
const { DowngradedError } = require('./errors.js');

const OPEN = 0;
const FAILED = 1;
const EXITED = 2;
const ABANDONED = 3;

/**
 * Whether `err` is the library's own downgrade signal. `instanceof` walks the
 * prototype chain, which a revoked Proxy refuses: such an error is not ours.
 */
function isDowngradedError(err) {
  try {
    return err instanceof DowngradedError;
  } catch {
    return false;
  }
}

/**
 * One request between `enter` and `exit`. The addon returned it as one packed
 * number; the start time is the one JavaScript passed in or the addon read.
 */
class Entry {
  constructor(hot, point, packed, startMs) {
    this._hot = hot;
    this._packed = packed;
    this._state = OPEN;
    // Its abandoned copy, once lib/abandoned.js watches it (open past its tick).
    this._copy = null;
    this.point = point;
    this.startMs = startMs;
  }

  /** Whether the caller must skip the work and use its fallback. */
  get downgraded() {
    // `&` reads the low 32 bits, exact for any packed value.
    return (this._packed & DOWNGRADED_BIT) !== 0;
  }

  /** The core's reason name (`'VISIT'`, ...), or `null` when not downgraded. */
  get reason() {
    return REASONS[(this._packed >>> REASON_SHIFT) & REASON_MASK] ?? null;
  }

  /**
   * The ms to wait before running the request: a paced point
   * (`maxQueueingTimeMs`) spaces its requests evenly at its rate, and the
   * core never sleeps. 0 for every other entry, and when downgraded.
   */
  get waitMs() {
    return waitOf(this._packed);
  }

  /** Whether `exit` ran. */
  get exited() {
    return this._state === EXITED;
  }

  /**
   * Marks the request as failed: `exit` counts the exception. `null`,
   * `undefined`, the library's own `DowngradedError` and calls after `exit`
   * count nothing (SEMANTICS: a null error and the downgrade error do not
   * count). Never throws, so `run` always gets to exit.
   */
  error(err) {
    if (this._state === OPEN && err != null && !isDowngradedError(err)) {
      this._state = FAILED;
    }
    return this;
  }

  /**
   * A copy of this open entry, marked abandoned, that does not reach this
   * one: what lib/abandoned.js exits when this one is collected. The core
   * counts an abandoned request as failed, never as a timeout or a latency
   * sample (when it ended is unknown).
   */
  _abandonedCopy() {
    const copy = new Entry(this._hot, this.point, this._packed, this.startMs);
    copy._state = ABANDONED;
    return copy;
  }

  /**
   * Settles the entry at `nowMs` (default: now): returns its permit, counts
   * its exception and timeout. Only the first call counts; it returns
   * whether it did.
   */
  exit(nowMs) {
    if (this._state === EXITED) return false;
    const hot = this._hot;
    const io = hot.io;
    io[0] = this._packed;
    io[1] = this.startMs;
    io[2] = nowMs === undefined ? NOW : ioTime(nowMs);
    const state = this._state;
    if (state === OPEN) hot.exitOk();
    else if (state === FAILED) hot.exitError();
    else hot.exitAbandoned();
    // Only now: an exit the addon refused (a bad time) leaves the entry open.
    this._state = EXITED;
    // Watched: the copy must not be settled when this one is collected.
    if (this._copy !== null) this._copy._state = EXITED;
    return true;
  }
}

module.exports = { Entry };
