//! An entry crosses N-API as one JavaScript number instead of an object.
//!
//! Layout (low bit first): state (3 bits: permit, probe, downgraded), reason
//! code (4), point index (20), probe generation (16): 43 bits, exact in a
//! double. An entry that is not a probe stays below 2^27, so V8 keeps it as a
//! small integer and allocates nothing. The start time is not packed: the
//! JavaScript side passed it in and keeps it.

use napi_derive::napi;
use sds_core::{Entry, EntryParts, ErrorCode, Flags, Reason, MAX_CAPACITY};

use crate::errors::{js_error, SdsError};

const STATE_BITS: u32 = 3;
const REASON_SHIFT: u32 = STATE_BITS;
const REASON_BITS: u32 = 4;
const POINT_SHIFT: u32 = REASON_SHIFT + REASON_BITS;
const POINT_BITS: u32 = 20;
const PROBE_SHIFT: u32 = POINT_SHIFT + POINT_BITS;
const PACKED_LIMIT: u64 = 1 << (PROBE_SHIFT + 16);

const _: () = assert!(MAX_CAPACITY <= 1 << POINT_BITS);
const _: () = assert!(Reason::ALL.len() < 1 << REASON_BITS);

/// The entry as one number.
#[inline]
pub fn pack(entry: Entry) -> f64 {
    let p = entry.into_parts();
    let bits = u64::from(p.state)
        | u64::from(p.reason) << REASON_SHIFT
        | u64::from(p.point) << POINT_SHIFT
        | u64::from(p.probe_generation) << PROBE_SHIFT;
    bits as f64
}

/// The entry that `pack` made from these numbers.
#[inline]
pub fn unpack(packed: f64, start_ms: u64) -> Result<Entry, SdsError> {
    if !(0.0..PACKED_LIMIT as f64).contains(&packed) || packed as u64 as f64 != packed {
        return Err(js_error(
            ErrorCode::InvalidEntry,
            format!(
                "{}: {packed} is not a packed entry",
                ErrorCode::InvalidEntry.description()
            ),
        ));
    }
    let bits = packed as u64;
    let field = |shift: u32, width: u32| (bits >> shift) & ((1 << width) - 1);
    Ok(Entry::from_parts(EntryParts {
        start_ms,
        point: field(POINT_SHIFT, POINT_BITS) as u32,
        probe_generation: field(PROBE_SHIFT, 16) as u16,
        state: field(0, STATE_BITS) as u8,
        reason: field(REASON_SHIFT, REASON_BITS) as u8,
    }))
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
}

/// The layout of packed entries and the core's reason names.
#[napi(namespace = "native")]
pub fn entry_layout() -> EntryLayout {
    // Asked of the core rather than written down here: the one state bit
    // that makes an entry downgraded.
    let downgraded_bit = (0..8)
        .map(|i| 1u8 << i)
        .find(|&state| {
            let parts = EntryParts {
                state,
                ..EntryParts::default()
            };
            Entry::from_parts(parts).downgraded()
        })
        .map_or(0, u32::from);
    let mut reasons = vec![None; 1 << REASON_BITS];
    for r in Reason::ALL {
        reasons[r.code() as usize] = Some(r.as_str().to_string());
    }
    reasons.truncate(
        Reason::ALL
            .iter()
            .map(|r| r.code() as usize)
            .max()
            .unwrap_or(0)
            + 1,
    );
    EntryLayout {
        downgraded_bit,
        reason_shift: REASON_SHIFT,
        reason_mask: (1 << REASON_BITS) - 1,
        reasons,
        pressure_test_bit: Flags::PRESSURE_TEST.bits(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips_every_field() {
        let parts = EntryParts {
            start_ms: 123,
            point: (1 << 20) - 1,
            probe_generation: u16::MAX,
            state: 7,
            reason: 8,
        };
        let entry = Entry::from_parts(parts);
        assert_eq!(unpack(pack(entry), 123).unwrap(), entry);
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
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, PACKED_LIMIT as f64] {
            assert!(unpack(bad, 0).is_err(), "{bad}");
        }
    }
}
