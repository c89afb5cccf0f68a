'use strict';
const { native } = require('./native.js');
const { checkOptions } = require('./arguments.js');

const WINDOW_OPTIONS = ['bucketMs', 'buckets', 'ring'];

/**
 * A sliding window of `buckets` buckets of `bucketMs` over a ring of `ring`
 * buckets (at least two windows). Defaults are SDS's: 1000 ms x 10, ring 30.
 * Every `nowMs` defaults to the addon's clock.
 */
class SlidingWindow {
  constructor(options) {
    const { bucketMs = 1000, buckets = 10, ring = 3 * buckets } =
      checkOptions(options, WINDOW_OPTIONS, 'SlidingWindow option');
    this._window = new native.NativeWindow(bucketMs, buckets, ring);
    this.bucketMs = bucketMs;
    this.buckets = buckets;
    this.ring = ring;
  }

  /** Adds one at `nowMs`: `{ bucket, total }` after the write. */
  increment(nowMs) {
    return this._window.add(1, nowMs);
  }

  /** Adds `n` at `nowMs`: `{ bucket, total }` after the write. */
  add(n, nowMs) {
    return this._window.add(n, nowMs);
  }

  /**
   * Adds `n` for an event of time `atMs` recorded at the present `nowMs`
   * (an exception counted at its request's start): into `atMs`'s bucket
   * while the ring holds it, else into `nowMs`'s. The value of the bucket
   * written.
   */
  addAt(atMs, n, nowMs) {
    return this._window.addAt(atMs, n, nowMs);
  }

  /** Sets `nowMs`'s bucket to `value` (saturating at 2^32 - 1). */
  set(value, nowMs) {
    this._window.set(value, nowMs);
  }

  /** Raises `nowMs`'s bucket to at least `value`: the bucket's value. */
  fetchMax(value, nowMs) {
    return this._window.fetchMax(value, nowMs);
  }

  /** Zeroes the aligned cycle after the one holding `nowMs`, as SDS's cleanup thread. */
  clearNextCycle(nowMs) {
    this._window.clearNextCycle(nowMs);
  }

  /** The sum of the window ending in `nowMs`'s bucket. */
  sum(nowMs) {
    return this._window.sum(nowMs);
  }

  /** The value of `nowMs`'s bucket. */
  bucket(nowMs) {
    return this._window.bucket(nowMs);
  }

  /** The sum of the aligned cycle of `buckets` before the one holding `nowMs`. */
  lastWholeCycle(nowMs) {
    return this._window.lastWholeCycle(nowMs);
  }
}

module.exports = { SlidingWindow };
