//! The default clock and the version.

use std::os::raw::c_char;

use crate::boundary::boundary_or;

/// Wall-clock UTC milliseconds since 1970, as SDS's
/// `System.currentTimeMillis()`: the `now_ms` to pass when you do not inject
/// time. 0 if the clock is before 1970. Infallible.
///
/// The same clock as the Python and Node bindings: `CLOCK_REALTIME_COARSE`
/// where it resolves milliseconds, else `CLOCK_REALTIME` (both through the
/// vDSO; see the sds-clock crate).
#[no_mangle]
pub extern "C" fn sds_now_ms() -> u64 {
    boundary_or(0, sds_clock::now_ms)
}

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library's version, e.g. `"0.1.0"`: a static NUL-terminated string,
/// never to be freed. Infallible.
#[no_mangle]
pub extern "C" fn sds_version() -> *const c_char {
    boundary_or(VERSION.as_ptr().cast(), || VERSION.as_ptr().cast())
}
