//! An entry crosses N-API as one JavaScript number instead of an object: the
//! core's packed entry (`sds_core::packed`: 43 bits, exact in a double; an
//! entry that is neither a probe nor paced stays below 2^27, so V8 keeps it
//! as a small integer and allocates nothing). The start time is not packed:
//! the JavaScript side passed it in and keeps it. A paced entry's wait sits
//! in the bits above 2^27 (a probe's generation sits there instead), so
//! JavaScript reads it from the number without calling back.

use napi_derive::napi;
use sds_core::{packed, Entry, ErrorCode, Flags, Reason};

use crate::errors::{js_error, SdsError};

/// `Number.MAX_SAFE_INTEGER`: the integers a number holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `value` as an integer, if it is a whole number within `0..=max` (at
/// most [`MAX_SAFE_INTEGER`]). For the numbers of the hot path's protocol
/// (point keys, packed entries), which JavaScript made from the addon's own.
#[inline]
pub fn whole_up_to(value: f64, max: f64) -> Option<u64> {
    debug_assert!(max <= MAX_SAFE_INTEGER);
    if !(0.0..=max).contains(&value) {
        return None;
    }
    // `as` drops the fraction, so the round trip is equal only for whole
    // numbers. Through i64, not u64: the signed conversions are one
    // instruction each, the unsigned ones a chain of a dozen.
    let int = value as i64;
    (int as f64 == value).then_some(int as u64)
}

/// `value` as a JavaScript number; exact below 2^53, where every packed
/// entry and clock reading is (one instruction, see [`whole_up_to`]).
#[inline]
pub fn number(value: u64) -> f64 {
    value as i64 as f64
}

/// The entry as one number.
#[inline]
pub fn pack(entry: Entry) -> f64 {
    number(entry.pack())
}

/// The entry that `pack` made from these numbers.
#[inline]
pub fn unpack(packed: f64, start_ms: u64) -> Result<Entry, SdsError> {
    whole_up_to(packed, MAX_SAFE_INTEGER)
        .and_then(|bits| Entry::unpack(bits, start_ms))
        .ok_or_else(|| {
            js_error(
                ErrorCode::InvalidEntry,
                format!(
                    "{}: {packed} is not a packed entry",
                    ErrorCode::InvalidEntry.description()
                ),
            )
        })
}

/// How JavaScript reads a packed entry without calling back into native code.
#[napi(object, namespace = "native")]
pub struct EntryLayout {
    /// The bit set when the entry is downgraded.
    pub downgraded_bit: u32,
    /// Shift of the reason code.
    pub reason_shift: u32,
    /// Mask of the reason code after the shift.
    pub reason_mask: u32,
    /// The reason names, indexed by code; `null` at 0 (not downgraded).
    pub reasons: Vec<Option<String>>,
    /// The bit of a point key (`2 * pointId + bit`) marking load-test traffic.
    pub pressure_test_bit: u32,
    /// The bit set when the entry is a delay's probe: its high bits are
    /// then the probe's generation, not a wait.
    pub probe_bit: u32,
    /// Shift of the wait in ms (an entry that is not a probe).
    pub wait_shift: u32,
    /// Mask of the wait after the shift.
    pub wait_mask: u32,
}

/// The layout of packed entries and the core's reason names.
#[napi(namespace = "native")]
pub fn entry_layout() -> EntryLayout {
    let mut reasons = vec![None; Reason::ALL.len() + 1];
    for r in Reason::ALL {
        reasons[r.code() as usize] = Some(r.as_str().to_string());
    }
    EntryLayout {
        downgraded_bit: packed::DOWNGRADED as u32,
        reason_shift: packed::REASON_SHIFT,
        reason_mask: packed::REASON_MASK as u32,
        reasons,
        pressure_test_bit: Flags::PRESSURE_TEST.bits(),
        probe_bit: packed::PROBE as u32,
        wait_shift: packed::GENERATION_SHIFT,
        wait_mask: u16::MAX as u32,
    }
}

// The wait (16 bits, `EntryParts::wait_ms`) fills every bit above its shift.
const _: () = assert!(packed::GENERATION_SHIFT + u16::BITS == packed::BITS);

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::EntryParts;

    #[test]
    fn pack_round_trips_every_field() {
        let parts = EntryParts {
            start_ms: 123,
            point: (1 << 20) - 1,
            probe_generation: u16::MAX,
            state: 7,
            reason: 8,
            wait_ms: 0,
        };
        let entry = Entry::from_parts(parts);
        assert_eq!(unpack(pack(entry), 123).unwrap(), entry);
    }

    #[test]
    fn a_wait_is_read_the_way_javascript_reads_it() {
        let layout = entry_layout();
        for wait_ms in [1, 100, 1000, u16::MAX] {
            let parts = EntryParts {
                point: (1 << 20) - 1,
                state: 1,
                wait_ms,
                ..EntryParts::default()
            };
            let entry = Entry::from_parts(parts);
            let number = pack(entry);
            assert_eq!(unpack(number, 0).unwrap().wait_ms(), u64::from(wait_ms));
            // lib/entry.js: a division by 2^shift (exact), then the mask.
            let js = (number / f64::from(1u32 << layout.wait_shift)).floor() as u64
                & u64::from(layout.wait_mask);
            assert_eq!(js, u64::from(wait_ms));
            assert_eq!(number as u64 & u64::from(layout.probe_bit), 0);
        }
        // A probe's high bits are its generation: the probe bit says so.
        let probe = EntryParts {
            state: 1 | 2,
            probe_generation: 7,
            ..EntryParts::default()
        };
        let number = pack(Entry::from_parts(probe));
        assert_ne!(number as u64 & u64::from(layout.probe_bit), 0);
        assert_eq!(unpack(number, 0).unwrap().wait_ms(), 0);
    }

    #[test]
    fn a_plain_entry_is_a_small_integer() {
        let parts = EntryParts {
            point: (1 << 20) - 1,
            state: 5,
            reason: 8,
            ..EntryParts::default()
        };
        assert!(pack(Entry::from_parts(parts)) < (1u64 << 30) as f64);
    }

    #[test]
    fn garbage_is_refused() {
        for bad in [
            -1.0,
            0.5,
            f64::NAN,
            f64::INFINITY,
            (1u64 << packed::BITS) as f64,
        ] {
            assert!(unpack(bad, 0).is_err(), "{bad}");
        }
    }
}
