//! The wall clock the binding reads when a call gives no `now_ms`.
//!
//! SDS counts in wall-clock UTC milliseconds so that windows line up across
//! processes. On Linux the coarse realtime clock is read through the vDSO (a
//! few ns, tick resolution of 1 to 4 ms); `SystemTime::now()` costs several
//! times more, which matters when the whole decision costs tens of ns.

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod coarse {
    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }

    const CLOCK_REALTIME_COARSE: i32 = 5;

    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }

    pub fn now_ms() -> Option<u64> {
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; libc is linked by std.
        let rc = unsafe { clock_gettime(CLOCK_REALTIME_COARSE, &mut ts) };
        if rc != 0 || ts.tv_sec < 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
    }
}

fn system_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Wall-clock UTC milliseconds.
#[inline]
pub fn now_ms() -> u64 {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    if let Some(ms) = coarse::now_ms() {
        return ms;
    }
    system_ms()
}

#[cfg(test)]
mod tests {
    #[test]
    fn coarse_clock_agrees_with_system_time() {
        let (a, b) = (super::now_ms(), super::system_ms());
        // The coarse clock lags by at most one tick.
        assert!(a.abs_diff(b) < 50, "{a} vs {b}");
    }
}
