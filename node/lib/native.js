'use strict';
// The loaded addon and what JavaScript reads from it once: how a packed
// entry is laid out, the reason names and the error codes all come from the
// core, so nothing here keeps its own copy. Internal: index.js does not
// export it.
const native = require('./binding.js').load();

const layout = native.entryLayout();
const codes = native.errorCodes();

// What the hot-path functions take for "now": the addon reads its clock,
// and enter leaves the time it used in `io[1]`.
const NOW = -1;

/**
 * A time as the hot path's `io` takes it: a number goes as it is (the addon
 * checks it by the core's rule); anything else, and the NOW marker itself,
 * goes as NaN, which that rule refuses (a Float64Array would otherwise
 * coerce '5' to 5 and null to 0).
 */
function ioTime(value) {
  return typeof value === 'number' && value !== NOW ? value : NaN;
}

// A paced entry's wait sits above this power of two; an entry below it
// (most: neither paced nor a probe) waits 0 (see node/src/entry_bits.rs).
const WAIT_UNIT = 2 ** layout.waitShift;
const PROBE_BIT = layout.probeBit;
const WAIT_MASK = layout.waitMask;

/**
 * The ms a packed entry must wait before its request runs: 0 unless the
 * point is paced (`maxQueueingTimeMs`). One comparison for the common
 * entry; the division is exact (a power of two) and `&` keeps the wait's
 * bits. A probe's high bits are its generation, not a wait.
 */
function waitOf(packed) {
  if (packed < WAIT_UNIT || (packed & PROBE_BIT) !== 0) return 0;
  return Math.floor(packed / WAIT_UNIT) & WAIT_MASK;
}

module.exports = {
  native,
  waitOf,
  NOW,
  ioTime,
  // A point key is 2 * pointId + this bit (the core's Flags::PRESSURE_TEST).
  PRESSURE_TEST_BIT: layout.pressureTestBit,
  DOWNGRADED_BIT: layout.downgradedBit,
  REASON_SHIFT: layout.reasonShift,
  REASON_MASK: layout.reasonMask,
  REASONS: layout.reasons.map((name) => name ?? null),
  CODES: codes,
};
