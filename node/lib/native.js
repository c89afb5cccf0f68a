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

module.exports = {
  native,
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
