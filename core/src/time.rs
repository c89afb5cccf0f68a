//! The one rule for a time a binding hands in: a whole number of ms within
//! `0..2^64` (the core's `u64` times). A negative, fractional, NaN or too
//! large time is [`ArgumentRule::Time`] (`SDS_INVALID_ARGUMENT`) everywhere,
//! rather than clamped or rounded.

use crate::error::{ArgumentRule, Error};
use crate::strategy_input::Value;

const INVALID: Error = Error::InvalidArgument(ArgumentRule::Time);

/// A time given as a signed integer (a Java `long`, a Python `int` that fit).
pub const fn from_i64(ms: i64) -> Result<u64, Error> {
    if ms < 0 {
        Err(INVALID)
    } else {
        Ok(ms as u64)
    }
}

/// A time given as a float (a JavaScript number).
#[inline]
pub fn from_f64(ms: f64) -> Result<u64, Error> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if (0.0..TWO_63).contains(&ms) {
        // Through i64: one instruction each way, where the unsigned
        // conversions are a chain. The round trip keeps only whole numbers.
        let whole = ms as i64;
        if whole as f64 == ms {
            return Ok(whole as u64);
        }
    } else if (TWO_63..TWO_64).contains(&ms) {
        // Every float this large is whole.
        return Ok(ms as u64);
    }
    Err(INVALID)
}

/// A time given as any [`Value`] (a Python `int` of any size, a JSON value).
pub fn from_value(ms: Value) -> Result<u64, Error> {
    match ms {
        Value::Integer(v) => u64::try_from(v).map_err(|_| INVALID),
        _ => Err(INVALID),
    }
}
