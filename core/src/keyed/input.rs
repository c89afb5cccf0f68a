//! What a binding hands the key table, judged once for every language: a
//! cost or a number of units given as a wide integer (a Python `int`, a
//! JavaScript number, a Java `long`), and a key given as UTF-16 text (a
//! JavaScript or Java string), so each binding gives the same verdict and
//! message.

use core::fmt;

use super::KeyError;
use crate::{ErrorCode, Value};

/// A cost or a number of units the core does not take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnitsError {
    /// 0: the core's own [`KeyError::ZeroCost`] (`cost must be >= 1`), as
    /// the table gives it for a `u32` 0.
    Zero,
    /// Below 0, above `u32::MAX`, or no whole number: `what` names the
    /// argument (`"cost"`, `"units"`).
    OutOfRange(&'static str),
}

impl UnitsError {
    /// `SDS_INVALID_ARGUMENT`, for both.
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }
}

impl fmt::Display for UnitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitsError::Zero => KeyError::ZeroCost.fmt(f),
            UnitsError::OutOfRange(what) => {
                write!(f, "{what} must be an integer from 1 to {}", u32::MAX)
            }
        }
    }
}

impl core::error::Error for UnitsError {}

/// A cost or a number of units given as a whole number of any sign:
/// `1..=u32::MAX` is taken, 0 is [`UnitsError::Zero`], the rest
/// [`UnitsError::OutOfRange`].
#[inline]
pub const fn units_from_i128(n: i128, what: &'static str) -> Result<u32, UnitsError> {
    if n == 0 {
        Err(UnitsError::Zero)
    } else if n < 0 || n > u32::MAX as i128 {
        Err(UnitsError::OutOfRange(what))
    } else {
        Ok(n as u32)
    }
}

/// A cost or a number of units as a binding sorted it into a [`Value`] (a
/// JavaScript number through [`Value::from_f64`]): an integer as
/// [`units_from_i128`] judges it; anything else (a fraction, NaN, an
/// infinity, an integer beyond `i128`) is [`UnitsError::OutOfRange`].
pub fn units_from_value(value: Value, what: &'static str) -> Result<u32, UnitsError> {
    match value {
        Value::Integer(n) => units_from_i128(n, what),
        _ => Err(UnitsError::OutOfRange(what)),
    }
}

/// A UTF-16 text (a JavaScript or Java string) holding a surrogate that is
/// not half of a pair: it has no UTF-8 form, and replacing it (with
/// U+FFFD) would make two texts one key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LoneSurrogate {
    /// The surrogate (`0xD800..=0xDFFF`).
    pub unit: u16,
    /// Its index in the text's UTF-16 units.
    pub index: usize,
}

impl LoneSurrogate {
    /// `SDS_INVALID_ARGUMENT`.
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }

    /// The message naming the text (`"key"`): `key is not valid UTF-16:
    /// lone surrogate U+D800 at index 1`.
    pub fn about<'a>(&'a self, what: &'a str) -> impl fmt::Display + 'a {
        struct About<'a>(&'a LoneSurrogate, &'a str);
        impl fmt::Display for About<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let (lone, what) = (self.0, self.1);
                write!(
                    f,
                    "{what} is not valid UTF-16: lone surrogate U+{:04X} at index {}",
                    lone.unit, lone.index
                )
            }
        }
        About(self, what)
    }
}

/// The first lone surrogate of the UTF-16 `wide`, if any.
pub fn lone_surrogate(wide: &[u16]) -> Option<LoneSurrogate> {
    let mut index = 0;
    for c in char::decode_utf16(wide.iter().copied()) {
        match c {
            Ok(c) => index += c.len_utf16(),
            Err(e) => {
                let unit = e.unpaired_surrogate();
                return Some(LoneSurrogate { unit, index });
            }
        }
    }
    None
}

/// The UTF-8 of the UTF-16 `wide`, written to the start of `out`: its
/// length. `out` must hold three bytes per unit (no unit takes more); a
/// lone surrogate is refused.
///
/// # Panics
/// If `out` is shorter than the UTF-8 (at most `3 * wide.len()`).
pub fn utf16_to_utf8(wide: &[u16], out: &mut [u8]) -> Result<usize, LoneSurrogate> {
    let mut n = 0;
    let mut index = 0;
    for c in char::decode_utf16(wide.iter().copied()) {
        let c = c.map_err(|e| LoneSurrogate {
            unit: e.unpaired_surrogate(),
            index,
        })?;
        index += c.len_utf16();
        n += c.encode_utf8(&mut out[n..]).len();
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;
    use std::vec;
    use std::vec::Vec;

    use super::*;

    #[test]
    fn units_take_1_to_u32_max_and_refuse_the_rest_with_one_message() {
        assert_eq!(units_from_i128(1, "cost"), Ok(1));
        assert_eq!(units_from_i128(u32::MAX.into(), "cost"), Ok(u32::MAX));
        assert_eq!(units_from_i128(0, "units"), Err(UnitsError::Zero));
        assert_eq!(UnitsError::Zero.to_string(), KeyError::ZeroCost.to_string());
        let range = "units must be an integer from 1 to 4294967295";
        for n in [-1, i128::MIN, u32::MAX as i128 + 1, i128::MAX] {
            let e = units_from_i128(n, "units").unwrap_err();
            assert_eq!(
                (e.code(), e.to_string().as_str()),
                (ErrorCode::InvalidArgument, range)
            );
        }
        assert_eq!(units_from_value(Value::from_f64(7.0), "cost"), Ok(7));
        for v in [1.5, f64::NAN, f64::INFINITY, -2.0, 1e300] {
            let e = units_from_value(Value::from_f64(v), "cost").unwrap_err();
            assert_eq!(e, UnitsError::OutOfRange("cost"));
        }
    }

    fn utf8(wide: &[u16]) -> Result<Vec<u8>, LoneSurrogate> {
        let mut out = vec![0; 3 * wide.len()];
        let n = utf16_to_utf8(wide, &mut out)?;
        Ok(out[..n].to_vec())
    }

    #[test]
    fn utf16_text_is_its_utf8_and_a_lone_surrogate_is_found_by_index() {
        let text = "aé€😀";
        let wide: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(utf8(&wide), Ok(text.as_bytes().to_vec()));
        assert_eq!(lone_surrogate(&wide), None);
        assert_eq!(utf8(&[]), Ok(vec![]));
        // Three bytes per unit at most.
        assert_eq!(utf8(&[0xFFFF; 4]).map(|b| b.len()), Ok(12));
        let lone = LoneSurrogate {
            unit: 0xD800,
            index: 1,
        };
        assert_eq!(utf8(&[0x61, 0xD800, 0x61]), Err(lone));
        assert_eq!(lone_surrogate(&[0x61, 0xD800, 0x61]), Some(lone));
        // After a pair (two units), at index 2.
        let wide: Vec<u16> = "😀".encode_utf16().chain([0xDC00]).collect();
        let lone = LoneSurrogate {
            unit: 0xDC00,
            index: 2,
        };
        assert_eq!(
            (utf8(&wide), lone_surrogate(&wide)),
            (Err(lone), Some(lone))
        );
        assert_eq!(
            lone.about("key").to_string(),
            "key is not valid UTF-16: lone surrogate U+DC00 at index 2"
        );
    }
}
