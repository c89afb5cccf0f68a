//! The wall clock of every binding that reads time natively (C, Python,
//! Node): UTC milliseconds, as SDS's `System.currentTimeMillis()`, so the
//! windows of processes in different languages line up. One place, so all of
//! them read the same clock the same way.
//!
//! DESIGN.md asks for the cheapest wall clock with millisecond resolution.
//! On Linux that is `CLOCK_REALTIME_COARSE` (no hardware read, about 10 ns
//! here against 32 for `CLOCK_REALTIME`) when its resolution is 1 ms or finer,
//! which depends on the kernel's tick (HZ=1000). On this project's machines it
//! ticks every 4 ms, too coarse for `timeoutThreshold`, so there the choice
//! falls on `CLOCK_REALTIME`. The choice is made once, on the first read.
//! Elsewhere, `SystemTime`.
#![forbid(unsafe_op_in_unsafe_fn)]

/// Wall-clock UTC milliseconds since 1970; 0 for a clock set before 1970.
#[inline]
pub fn now_ms() -> u64 {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    if let Some(ms) = linux::now_ms() {
        return ms;
    }
    system_ms()
}

/// The name of the clock [`now_ms`] reads (the Python module shows it as
/// `sds._native.CLOCK`, and its benchmark prints it).
pub fn source() -> &'static str {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    if let Some(name) = linux::source() {
        return name;
    }
    "SystemTime"
}

fn system_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        // u64 arithmetic: `as_millis` would go through u128.
        .map_or(0, |d| d.as_secs() * 1000 + u64::from(d.subsec_millis()))
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod linux {
    use std::sync::atomic::{AtomicI32, Ordering};

    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }

    const CLOCK_REALTIME: i32 = 0;
    const CLOCK_REALTIME_COARSE: i32 = 5;
    const UNCHOSEN: i32 = -1;
    const MS: i64 = 1_000_000;

    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
        fn clock_getres(clock: i32, res: *mut Timespec) -> i32;
    }

    static CLOCK: AtomicI32 = AtomicI32::new(UNCHOSEN);

    fn zero() -> Timespec {
        Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        }
    }

    /// The coarse clock when it resolves milliseconds, else the exact one.
    fn choose() -> i32 {
        let mut res = zero();
        // SAFETY: `res` is a valid, writable timespec; libc is linked by std.
        let rc = unsafe { clock_getres(CLOCK_REALTIME_COARSE, &mut res) };
        let fine = rc == 0 && res.tv_sec == 0 && res.tv_nsec <= MS;
        if fine {
            CLOCK_REALTIME_COARSE
        } else {
            CLOCK_REALTIME
        }
    }

    fn clock() -> i32 {
        match CLOCK.load(Ordering::Relaxed) {
            UNCHOSEN => {
                let chosen = choose();
                CLOCK.store(chosen, Ordering::Relaxed);
                chosen
            }
            chosen => chosen,
        }
    }

    #[inline]
    pub fn now_ms() -> Option<u64> {
        let mut ts = zero();
        // SAFETY: as in `choose`.
        let rc = unsafe { clock_gettime(clock(), &mut ts) };
        if rc != 0 || ts.tv_sec < 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1000 + (ts.tv_nsec / MS) as u64)
    }

    pub fn source() -> Option<&'static str> {
        match clock() {
            CLOCK_REALTIME_COARSE => Some("CLOCK_REALTIME_COARSE"),
            _ => Some("CLOCK_REALTIME"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_system_time_to_the_tick() {
        let (a, b, c) = (system_ms(), now_ms(), system_ms());
        // The coarse clock may lag the exact one by up to its 1 ms tick.
        assert!(a <= b + 1 && b <= c, "{a} {b} {c}");
    }

    #[test]
    fn names_a_clock_with_millisecond_resolution() {
        let name = source();
        assert!(
            ["CLOCK_REALTIME", "CLOCK_REALTIME_COARSE", "SystemTime"].contains(&name),
            "{name}"
        );
    }
}
