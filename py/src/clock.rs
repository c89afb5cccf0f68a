//! The wall clock the binding reads when a call gives no `now_ms`: UTC
//! milliseconds, as SDS's `System.currentTimeMillis()` and every other
//! binding of this project read it, so windows line up across processes.
//!
//! It is `CLOCK_REALTIME`, exact to the millisecond. `CLOCK_REALTIME_COARSE`
//! would be cheaper (10 ns against 33 here) but ticks every 4 ms on this
//! project's machines, short of what `timeoutThreshold` needs. On 64-bit
//! Linux it is read with `clock_gettime` directly: `SystemTime::now()` costs
//! 45 ns here, and a guarded call reads the clock twice.

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod realtime {
    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }

    const CLOCK_REALTIME: i32 = 0;

    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }

    pub fn now_ms() -> Option<u64> {
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; libc is linked by std.
        let rc = unsafe { clock_gettime(CLOCK_REALTIME, &mut ts) };
        if rc != 0 || ts.tv_sec < 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
    }
}

fn system_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() * 1000 + u64::from(d.subsec_millis()))
}

/// Wall-clock UTC milliseconds (0 for a clock set before 1970).
#[inline]
pub fn now_ms() -> u64 {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    if let Some(ms) = realtime::now_ms() {
        return ms;
    }
    system_ms()
}

#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_system_time() {
        let (a, b, c) = (super::system_ms(), super::now_ms(), super::system_ms());
        assert!(a <= b && b <= c, "{a} {b} {c}");
    }
}
