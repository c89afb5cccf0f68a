//! Times cross N-API as JavaScript numbers of ms. Only non-negative safe
//! integers are times: NaN, fractions, negatives and values beyond 2^53 are
//! refused rather than rounded.

use crate::errors::{invalid_argument, SdsError};

/// What JavaScript passes for "now": the addon then reads the clock itself,
/// cheaper than `Date.now()` (a V8 runtime call and a heap number).
pub const NOW: f64 = -1.0;

/// `value` as ms, or the wall clock for [`NOW`].
#[inline]
pub fn ms_or_now(value: f64, what: &str) -> Result<u64, SdsError> {
    if value == NOW {
        Ok(sds_clock::now_ms())
    } else {
        ms(value, what)
    }
}

/// `Number.MAX_SAFE_INTEGER`.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Whether `value` is a non-negative safe integer.
#[inline]
pub fn is_count(value: f64) -> bool {
    // `as` saturates and drops the fraction: equal only for whole numbers
    // (and cheaper than `fract`, which is a libm call).
    (0.0..=MAX_SAFE_INTEGER).contains(&value) && value as u64 as f64 == value
}

/// `value` as ms, or an error naming `what`.
#[inline]
pub fn ms(value: f64, what: &str) -> Result<u64, SdsError> {
    if is_count(value) {
        Ok(value as u64)
    } else {
        Err(invalid_argument(format!(
            "{what} must be a non-negative integer number of ms, got {value}"
        )))
    }
}
