//! The default clock: wall-clock UTC ms, as SDS's `System.currentTimeMillis()`
//! and every other binding of this project read it.
//!
//! `CLOCK_REALTIME_COARSE` would be cheaper (DESIGN.md suggests it), but on
//! this project's machines it ticks every 4 ms (the kernel's jiffy), short of
//! the millisecond resolution `timeoutThreshold` needs; `SystemTime` is
//! `CLOCK_REALTIME` through the vDSO, exact to the millisecond (about 20 ns
//! unloaded). Callers who want no clock read at all pass `nowMs`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock UTC milliseconds; 0 before 1970.
#[inline]
pub fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
