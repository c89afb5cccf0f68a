//! The hot path: `sds_enter` fills a caller-owned `sds_entry`, `sds_exit`
//! settles it. No allocation, no lock, no thread-local.

use core::fmt::Write;
use std::os::raw::c_char;

use sds_core::{Entry, EntryParts, Flags, Outcome, PointId, Reason};

use crate::args::{input, TextWriter};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;
use crate::table::{point_id, sds_table};

/// Why a request was downgraded: the core's reason codes. `sds_entry.reason`
/// holds one.
#[repr(u8)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum sds_reason {
    /// Not downgraded.
    None = 0,
    /// Too many visits in the sliding window (`visit_threshold`).
    Visit = 1,
    /// The current second took more tokens than the bucket gives.
    TokenBucket = 2,
    /// No concurrency permit was left (`concurrent_threshold`).
    Concurrent = 3,
    /// Too many timeouts in the sliding window.
    Timeout = 4,
    /// Too many exceptions in the sliding window.
    Exception = 5,
    /// Too high a share of exceptions in the sliding window.
    ExceptionRate = 6,
    /// Load-test traffic on a point with `pressure_test_downgrade` 1.
    PressureTest = 7,
    /// A delay started by an earlier downgrade is still running.
    Delay = 8,
}

macro_rules! same_reasons {
    ($($variant:ident),*) => {
        $(const _: () = assert!(sds_reason::$variant as u8 == Reason::$variant.code());)*

        impl From<Option<Reason>> for sds_reason {
            // Exhaustive: a reason added to the core does not build until it
            // has a C name.
            fn from(reason: Option<Reason>) -> sds_reason {
                match reason {
                    None => sds_reason::None,
                    $(Some(Reason::$variant) => sds_reason::$variant,)*
                }
            }
        }
    };
}
same_reasons!(
    Visit,
    TokenBucket,
    Concurrent,
    Timeout,
    Exception,
    ExceptionRate,
    PressureTest,
    Delay
);

/// How a request ended, for `sds_exit`.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum sds_outcome {
    /// It returned normally.
    Ok = 0,
    /// It failed with an error that counts as an exception.
    Error = 1,
}
const _: () = assert!(sds_outcome::Ok as u32 == Outcome::Ok as u32);
const _: () = assert!(sds_outcome::Error as u32 == Outcome::Error as u32);

/// Marks on a request, or-ed into `sds_enter`'s `flags`.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum sds_flag {
    /// Ordinary traffic.
    None = 0,
    /// Load-test traffic (downgraded where `pressure_test_downgrade` is 1).
    PressureTest = 1,
}
const _: () = assert!(sds_flag::PressureTest as u32 == Flags::PRESSURE_TEST.bits());

/// One request between `sds_enter` and `sds_exit`: plain data the caller
/// owns (a local variable, a field of a request struct); copying it is fine.
/// Pass it to `sds_exit` exactly once, on the table it came from.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct sds_entry {
    /// The `now_ms` of `sds_enter`.
    pub start_ms: u64,
    /// The point's index in its table.
    pub point: u32,
    /// Which delay a probe belongs to.
    pub probe_generation: u16,
    /// Bits: 1 holds a concurrency permit, 2 is a delay's probe, 4 downgraded.
    pub state: u8,
    /// An `sds_reason`: `SDS_REASON_NONE` (0) unless downgraded.
    pub reason: u8,
}

impl From<Entry> for sds_entry {
    fn from(entry: Entry) -> sds_entry {
        let p = entry.into_parts();
        sds_entry {
            start_ms: p.start_ms,
            point: p.point,
            probe_generation: p.probe_generation,
            state: p.state,
            reason: p.reason,
        }
    }
}

impl From<&sds_entry> for Entry {
    fn from(e: &sds_entry) -> Entry {
        Entry::from_parts(EntryParts {
            start_ms: e.start_ms,
            point: e.point,
            probe_generation: e.probe_generation,
            state: e.state,
            reason: e.reason,
        })
    }
}

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
    out: *mut sds_entry,
) -> sds_result {
    boundary(|| {
        let table = &input(table, "table")?.inner;
        let name = crate::args::name(name, name_len)?;
        let out = crate::args::out(out, "out")?;
        let flags = known_flags(flags)?;
        let id = point_id(table, name)?;
        out.write(table.enter_point(id, now_ms, flags)?.into());
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
    out: *mut sds_entry,
) -> sds_result {
    boundary(|| {
        let table = &input(table, "table")?.inner;
        let out = crate::args::out(out, "out")?;
        let flags = known_flags(flags)?;
        let entry = table.enter_point(PointId::from_index(point), now_ms, flags)?;
        out.write(entry.into());
        Ok(())
    })
}

fn known_flags(bits: u32) -> Result<Flags, Failure> {
    let flags = Flags::from_bits(bits);
    if flags.bits() != bits {
        return Err(Failure::invalid(&format_args!(
            "flags {bits:#x} has bits that are no sds_flag"
        )));
    }
    Ok(flags)
}

/// Settles an entry at `now_ms` with `outcome` (an `sds_outcome`): returns
/// its concurrency permit, counts its exception and its timeout, and settles
/// a probe. Thread-safe; any thread may exit any entry.
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
    entry: *const sds_entry,
    now_ms: u64,
    outcome: u32,
) -> sds_result {
    boundary(|| {
        let table = &input(table, "table")?.inner;
        let entry = Entry::from(input(entry, "entry")?);
        let outcome = match outcome {
            0 => Outcome::Ok,
            1 => Outcome::Error,
            other => {
                return Err(Failure::invalid(&format_args!(
                    "outcome {other} is no sds_outcome"
                )))
            }
        };
        table.exit(&entry, now_ms, outcome)?;
        Ok(())
    })
}

/// Whether the request must skip the real work and use its fallback; false
/// for NULL. Infallible.
///
/// # Safety
/// `entry` must be NULL or point to a readable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_entry_downgraded(entry: *const sds_entry) -> bool {
    boundary_or(false, || {
        entry.as_ref().is_some_and(|e| Entry::from(e).downgraded())
    })
}

/// Why the request was downgraded; `SDS_REASON_NONE` when it was not or for
/// NULL. Infallible.
///
/// # Safety
/// `entry` must be NULL or point to a readable `sds_entry`.
#[no_mangle]
pub unsafe extern "C" fn sds_entry_reason(entry: *const sds_entry) -> sds_reason {
    boundary_or(sds_reason::None, || {
        entry
            .as_ref()
            .map_or(sds_reason::None, |e| Entry::from(e).reason().into())
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
        let mut writer = TextWriter::new(buf, len, written)?;
        let text = match u8::try_from(code).ok().map(|c| (c, Reason::from_code(c))) {
            Some((0, _)) => "NONE",
            Some((_, Some(reason))) => reason.as_str(),
            _ => return Err(Failure::invalid(&format_args!("{code} is no sds_reason"))),
        };
        let _ = writer.write_str(text);
        writer.finish();
        Ok(())
    })
}
