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

/// `value` as an integer, if it is a whole number within `0..=max` (at
/// most [`MAX_SAFE_INTEGER`]).
#[inline]
pub fn whole_up_to(value: f64, max: f64) -> Option<u64> {
    debug_assert!(max <= MAX_SAFE_INTEGER);
    if !(0.0..=max).contains(&value) {
        return None;
    }
    // `as` drops the fraction, so the round trip is equal only for whole
    // numbers. Through i64, not u64: the signed conversions are one
    // instruction each, the unsigned ones a chain of a dozen, and this runs
    // up to three times per guarded request.
    let int = value as i64;
    (int as f64 == value).then_some(int as u64)
}

/// `value` as a JavaScript number; exact below 2^53, where every time and
/// packed entry is (one instruction, see [`whole_up_to`]).
#[inline]
pub fn number(value: u64) -> f64 {
    value as i64 as f64
}

/// Whether `value` is a non-negative safe integer.
#[inline]
pub fn is_count(value: f64) -> bool {
    whole_up_to(value, MAX_SAFE_INTEGER).is_some()
}

/// `value` as ms, or an error naming `what`.
#[inline]
pub fn ms(value: f64, what: &str) -> Result<u64, SdsError> {
    if let Some(ms) = whole_up_to(value, MAX_SAFE_INTEGER) {
        Ok(ms)
    } else {
        Err(invalid_argument(format!(
            "{what} must be a non-negative integer number of ms, got {value}"
        )))
    }
}
