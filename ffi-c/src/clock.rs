//! The default clock and the version.

use std::os::raw::c_char;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::boundary::boundary_or;

/// Wall-clock UTC milliseconds since 1970, as SDS's
/// `System.currentTimeMillis()`: the `now_ms` to pass when you do not inject
/// time. 0 if the clock is before 1970. Infallible.
///
/// Reads `CLOCK_REALTIME` (through the vDSO). `CLOCK_REALTIME_COARSE` is
/// cheaper but ticks every 4 ms where the kernel runs at HZ=250, coarser
/// than the millisecond SDS measures timeouts in.
#[no_mangle]
pub extern "C" fn sds_now_ms() -> u64 {
    boundary_or(0, || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            // u64 arithmetic: `as_millis` would go through u128.
            .map_or(0, |d| d.as_secs() * 1000 + u64::from(d.subsec_millis()))
    })
}

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library's version, e.g. `"0.1.0"`: a static NUL-terminated string,
/// never to be freed. Infallible.
#[no_mangle]
pub extern "C" fn sds_version() -> *const c_char {
    boundary_or(VERSION.as_ptr().cast(), || VERSION.as_ptr().cast())
}
