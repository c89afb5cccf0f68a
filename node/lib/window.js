'use strict';
const { native } = require('./native.js');
const { checkOptions } = require('./arguments.js');

const WINDOW_OPTIONS = ['bucketMs', 'buckets', 'ring'];

/**
 * A sliding window of `buckets` buckets of `bucketMs` over a ring of `ring`
 * buckets (at least two windows). Defaults are SDS's: 1000 ms x 10, ring 30.
 * Every `nowMs` defaults to the addon's clock. The methods but `increment`
 * are the addon's `NativeWindow` (node/src/windows.rs); index.d.ts
 * documents them.
 */
class SlidingWindow extends native.NativeWindow {
  constructor(options) {
    const { bucketMs = 1000, buckets = 10, ring = 3 * buckets } =
      checkOptions(options, WINDOW_OPTIONS, 'SlidingWindow option');
    super(bucketMs, buckets, ring);
    this.bucketMs = bucketMs;
    this.buckets = buckets;
    this.ring = ring;
  }

  /** Adds one at `nowMs`: `{ bucket, total }` after the write. */
  increment(nowMs) {
    return this.add(1, nowMs);
  }
}

module.exports = { SlidingWindow };
