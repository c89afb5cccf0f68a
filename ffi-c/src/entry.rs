//! The hot path: `sds_enter` fills a caller-owned `sds_entry` (the core's
//! `EntryParts`), `sds_exit` settles it. No allocation, no lock, no
//! thread-local.

use core::fmt::Write;
use std::os::raw::c_char;

use sds_core::{Entry, EntryParts, Flags, Outcome, PointId, Reason};

use crate::args::{input, write_text};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;
use crate::table::{named_point_out, point_id, sds_table, table_input, with_view};

/// Why a request was downgraded: `SDS_REASON_NONE` (0) or one of the core's
/// reason codes; `sds_entry.reason` holds one. The header's `enum
/// sds_reason` is the core's `Reason` itself, renamed by cbindgen
/// (`cbindgen.toml` adds the 0), as `sds_result` is the core's `ErrorCode`.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct sds_reason(pub u8);

impl sds_reason {
    /// Not downgraded.
    #[allow(non_upper_case_globals)]
    pub const None: sds_reason = sds_reason(0);

    /// The C value of a core reason or none.
    pub const fn of(reason: Option<Reason>) -> sds_reason {
        match reason {
            Some(reason) => sds_reason(reason.code()),
            None => sds_reason::None,
        }
    }
}

impl PartialEq<Reason> for sds_reason {
    fn eq(&self, reason: &Reason) -> bool {
        self.0 == reason.code()
    }
}

impl core::fmt::Debug for sds_reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(Reason::from_code(self.0).map_or("NONE", Reason::as_str))
    }
}

/// Marks on a request, or-ed into `sds_enter`'s `flags`.
// The core's `Flags` is a set of bits, not an enum: C names its bits here.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum sds_flag {
    /// Ordinary traffic.
    None = 0,
    /// Load-test traffic (downgraded where `pressure_test_downgrade` is 1).
    PressureTest = 1,
}
const _: () = assert!(sds_flag::None as u32 == Flags::NONE.bits());
const _: () = assert!(sds_flag::PressureTest as u32 == Flags::PRESSURE_TEST.bits());
const _: () = assert!(sds_flag::PressureTest as u32 == Flags::KNOWN_BITS);

/// Counts a request to point `name` (created if needed) at `now_ms` and
/// decides whether it is downgraded; writes the entry to `*out`. Use the
/// fallback when `sds_entry_downgraded(out)` (or `out->reason != 0`), and
/// call `sds_exit` in every case. Thread-safe.
///
/// `flags` is 0 or `SDS_FLAG_PRESSURE_TEST`. Returns
/// `SDS_RESULT_INVALID_ARGUMENT` for other bits, the name errors,
/// `SDS_RESULT_TABLE_FULL` for a new name in a full table, or
/// `SDS_RESULT_NULL_ARGUMENT`; nothing is counted then.
///
/// # Safety
/// `table` must be a live table, `name` point to `name_len` bytes, `out` to
/// a writable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_enter(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    now_ms: u64,
    flags: u32,
    out: *mut EntryParts,
) -> sds_result {
    boundary(|| {
        let (table, name, out) = named_point_out(table, name, name_len, out)?;
        let flags = Flags::from_known_bits(flags)?;
        let entry = with_view!(table, t => t.enter_point(point_id(t, name)?, now_ms, flags)?);
        out.write(entry.into_parts());
        Ok(())
    })
}

/// Enters the point with index `point` (from `sds_table_point`), skipping
/// the name lookup of `sds_enter`; otherwise the same. Returns
/// `SDS_RESULT_INVALID_ENTRY` for an index that is no point of this table.
///
/// # Safety
/// `table` must be a live table and `out` point to a writable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_enter_point(
    table: *const sds_table,
    point: u32,
    now_ms: u64,
    flags: u32,
    out: *mut EntryParts,
) -> sds_result {
    boundary(|| {
        let table = table_input(table)?;
        let out = crate::args::out(out, "out")?;
        let flags = Flags::from_known_bits(flags)?;
        let id = PointId::from_index(point);
        let entry = with_view!(table, t => t.enter_point(id, now_ms, flags)?);
        out.write(entry.into_parts());
        Ok(())
    })
}

/// Settles an entry at `now_ms` with `outcome` (an `sds_outcome`): returns
/// its concurrency permit, counts its exception and its timeout, and settles
/// a probe. `SDS_OUTCOME_ABANDONED` is for an entry its caller lost (a
/// handle freed without exit): no timeout or latency sample is taken from
/// it. Thread-safe; any thread may exit any entry.
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for an unknown outcome,
/// `SDS_RESULT_INVALID_ENTRY` for an entry whose point is not in this table,
/// `SDS_RESULT_NULL_ARGUMENT`; nothing changes then. Exiting an entry twice
/// is a bug the library cannot see (it would return a permit twice).
///
/// # Safety
/// `table` must be a live table and `entry` point to a readable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_exit(
    table: *const sds_table,
    entry: *const EntryParts,
    now_ms: u64,
    outcome: u32,
) -> sds_result {
    boundary(|| {
        let table = table_input(table)?;
        let entry = Entry::from_parts(*input(entry, "entry")?);
        let outcome = Outcome::from_code(outcome.into())?;
        with_view!(table, t => t.exit(&entry, now_ms, outcome)?);
        Ok(())
    })
}

/// Whether the request must skip the real work and use its fallback; false
/// for NULL. Infallible.
///
/// # Safety
/// `entry` must be NULL or point to a readable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_entry_downgraded(entry: *const EntryParts) -> bool {
    boundary_or(false, || {
        entry
            .as_ref()
            .is_some_and(|e| Entry::from_parts(*e).downgraded())
    })
}

/// Why the request was downgraded; `SDS_REASON_NONE` when it was not or for
/// NULL. Infallible.
///
/// # Safety
/// `entry` must be NULL or point to a readable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_entry_reason(entry: *const EntryParts) -> sds_reason {
    boundary_or(sds_reason::None, || {
        sds_reason::of(entry.as_ref().and_then(|e| Entry::from_parts(*e).reason()))
    })
}

/// Writes the name of reason `code` as SDS reports it (`VISIT`,
/// `TOKEN_BUCKET`, ...; `NONE` for 0) into `buf`, like `sds_result_message`.
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a code that is no reason.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_reason_name(
    code: u32,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> sds_result {
    boundary(|| {
        write_text(buf, len, written, |w| {
            let _ = w.write_str(
                match u8::try_from(code).map(|c| (c, Reason::from_code(c))) {
                    Ok((0, _)) => "NONE",
                    Ok((_, Some(reason))) => reason.as_str(),
                    _ => return Err(Failure::invalid(&format_args!("{code} is no sds_reason"))),
                },
            );
            Ok(())
        })
    })
}
