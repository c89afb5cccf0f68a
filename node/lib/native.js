'use strict';
// The loaded addon and what JavaScript reads from it once: how a packed
// entry is laid out, the reason names and the error table all come from the
// core, so nothing here keeps its own copy.
const native = require('./binding.js').load();

const layout = native.entryLayout();
// enter/exit as raw N-API callbacks: the cheapest call the addon can offer.
const hot = native.hotPath();

module.exports = {
  native,
  enter: hot.enter,
  exit: hot.exit,
  // What enter/exit take for "now": the addon reads the clock, and enter
  // leaves the time it used in CLOCK[0].
  NOW: -1,
  CLOCK: hot.clock,
  DOWNGRADED_BIT: layout.downgradedBit,
  REASON_SHIFT: layout.reasonShift,
  REASON_MASK: layout.reasonMask,
  REASONS: layout.reasons.map((name) => name ?? null),
};
