//! The default clock: wall-clock UTC ms, as SDS's `System.currentTimeMillis()`.
//!
//! On Linux it is `CLOCK_REALTIME_COARSE` through the vDSO, as DESIGN.md
//! asks: about a quarter of the cost of `CLOCK_REALTIME` (measured on this
//! project's machines: 5 ns against 20 ns unloaded), which matters because
//! every guarded request reads the clock twice. The price is its tick, the
//! kernel's jiffy (4 ms on these machines): a default-clock time is up to
//! one tick behind, so an elapsed time used for `timeoutThreshold` can be
//! off by up to one tick. Callers who need exact times pass `nowMs`.

#[cfg(target_os = "linux")]
mod imp {
    use std::os::raw::{c_int, c_long};

    /// `struct timespec` of the Linux C ABIs without 64-bit time on 32-bit
    /// targets: both fields are `long`.
    #[repr(C)]
    struct Timespec {
        tv_sec: c_long,
        tv_nsec: c_long,
    }

    const CLOCK_REALTIME_COARSE: c_int = 5;

    extern "C" {
        fn clock_gettime(clock: c_int, out: *mut Timespec) -> c_int;
    }

    pub fn wall_clock_ms() -> u64 {
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `struct timespec`; the clock id
        // is Linux's (since 2.6.32); libc is linked by std.
        let rc = unsafe { clock_gettime(CLOCK_REALTIME_COARSE, &mut ts) };
        if rc != 0 || ts.tv_sec < 0 {
            return super::portable_ms();
        }
        ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn wall_clock_ms() -> u64 {
        super::portable_ms()
    }
}

fn portable_ms() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Wall-clock UTC milliseconds; 0 before 1970.
#[inline]
pub fn wall_clock_ms() -> u64 {
    imp::wall_clock_ms()
}
