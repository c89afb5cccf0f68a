'use strict';
// The loaded addon and what JavaScript reads from it once: how a packed
// entry is laid out, the reason names and the error table all come from the
// core, so nothing here keeps its own copy.
const native = require('./binding.js').load();

const layout = native.entryLayout();

module.exports = {
  native,
  // What the hot-path functions take for "now": the addon reads the clock,
  // and enter leaves the time it used in `io[1]`.
  NOW: -1,
  // A point key is 2 * pointId + this bit (the core's Flags::PRESSURE_TEST).
  PRESSURE_TEST_BIT: layout.pressureTestBit,
  DOWNGRADED_BIT: layout.downgradedBit,
  REASON_SHIFT: layout.reasonShift,
  REASON_MASK: layout.reasonMask,
  REASONS: layout.reasons.map((name) => name ?? null),
};
