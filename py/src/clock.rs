//! The wall clock the binding reads when a call gives no `now_ms`: UTC
//! milliseconds, as SDS's `System.currentTimeMillis()` and every other
//! binding of this project read it, so windows line up across processes.
//!
//! `SystemTime` is `CLOCK_REALTIME` through the vDSO, exact to the
//! millisecond. `CLOCK_REALTIME_COARSE` would be cheaper, but it ticks every
//! 4 ms on this project's machines, short of what `timeoutThreshold` needs.

/// Wall-clock UTC milliseconds (0 for a clock set before 1970).
#[inline]
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_milliseconds_since_the_epoch() {
        let (a, b) = (super::now_ms(), super::now_ms());
        // After 2020-01-01 and not going backwards between two reads here.
        assert!(a > 1_577_836_800_000 && b >= a, "{a} then {b}");
    }
}
