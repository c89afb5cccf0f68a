//! `sds_table`: an opaque point table, either private (a `PointTable` over
//! a heap array of slots) or this process's view of a shared table file
//! (`shared.rs`). An `sds_table *` is `Arc::into_raw` of an
//! `sds_shm::AnyTable`, so the console agent (`agent.rs`) can hold the table
//! past `sds_table_free` while the hot path reaches it with no indirection.
//! Every export reaches the table through [`with_view!`], so the private hot
//! path pays one well-predicted branch and nothing else.

use std::os::raw::c_char;

use std::sync::Arc;

use sds_core::{
    check_capacity, ErrorCode, Liveness, PointId, PointTable, Slot, Strategy, TableStorage,
    MAX_CAPACITY,
};
use sds_shm::AnyTable;

use crate::args::{bytes, input, out, Out};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;
use crate::strategy::parse;

/// The longest point name in bytes (the core's `MAX_NAME_LEN`).
pub const SDS_MAX_NAME_LEN: usize = 256;
/// The largest table capacity (the core's `MAX_CAPACITY`).
pub const SDS_MAX_CAPACITY: usize = 1 << 20;
const _: () = assert!(SDS_MAX_NAME_LEN == sds_core::MAX_NAME_LEN);
const _: () = assert!(SDS_MAX_CAPACITY == MAX_CAPACITY);

/// Point names to points, in a fixed capacity. Opaque: create it with
/// `sds_table_new` or `sds_table_open_shared`, free it with
/// `sds_table_free`. Every function taking a `const sds_table *` may be
/// called from any number of threads at once.
// Never instantiated: an `sds_table *` points to the `AnyTable` inside an
// `Arc` (see the module's comment), reached through [`table_input`].
pub struct sds_table {
    _opaque: [u8; 0],
}

/// The table behind a live `sds_table *`.
///
/// # Safety
/// `table` must be NULL or a live table.
#[inline(always)]
pub(crate) unsafe fn table_input<'a>(table: *const sds_table) -> Result<&'a AnyTable, Failure> {
    (table as *const AnyTable)
        .as_ref()
        .ok_or_else(|| Failure::null("table"))
}

/// Writes a new table to `*out` as an `sds_table *`.
///
/// # Safety
/// `out` must be NULL or point to a writable `sds_table *`.
pub(crate) unsafe fn table_output(
    out_ptr: *mut *mut sds_table,
    make: impl FnOnce() -> Result<AnyTable, Failure>,
) -> Result<(), Failure> {
    let out = out(out_ptr, "out")?;
    out.write(Arc::into_raw(Arc::new(make()?)) as *mut sds_table);
    Ok(())
}

/// Another reference to the table of a live `sds_table *` (for the agent).
///
/// # Safety
/// `table` must be a live table.
pub(crate) unsafe fn table_arc(table: *const sds_table) -> Arc<AnyTable> {
    let table = table as *const AnyTable;
    Arc::increment_strong_count(table);
    Arc::from_raw(table)
}

/// Runs `$body` with `$t` bound to the table of `$table` (an `&AnyTable`):
/// the private table, or this process's view of the shared one (a fork
/// child registers first, which may fail; its `enter_point` gives back dead
/// holders' permits after a refusal for concurrency). The body is compiled once per
/// kind of table, so neither pays for the other beyond the branch.
macro_rules! with_view {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            sds_shm::AnyTable::Private($t) => $body,
            sds_shm::AnyTable::Shared(shared) => {
                let view = shared
                    .view()
                    .map_err(|e| $crate::shared::failure(shared.path(), &e))?;
                let $t = &view;
                $body
            }
        }
    };
}
pub(crate) use with_view;

/// The checked `(table, name, name_len)` arguments that most exports start
/// with.
///
/// # Safety
/// `table` must be NULL or a live table; `name` as [`crate::args::name`].
// Always inlined: `sds_enter` is on the hot path.
#[inline(always)]
pub(crate) unsafe fn named_point<'a>(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
) -> Result<(&'a AnyTable, &'a [u8]), Failure> {
    let table = table_input(table)?;
    Ok((table, crate::args::name(name, name_len)?))
}

/// `named_point` for a call that writes its answer to `out` (NULL refused,
/// after the table and the name are checked).
///
/// # Safety
/// As `named_point`.
pub(crate) unsafe fn named_point_out<'a, T>(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    out: *mut T,
) -> Result<(&'a AnyTable, &'a [u8], Out<T>), Failure> {
    let (table, name) = named_point(table, name, name_len)?;
    Ok((table, name, crate::args::out(out, "out")?))
}

/// The point named `name`, created if needed. Lookup first: the common
/// case (an existing point) then only reads shared memory, where the core's
/// get-or-create `insert` tries a compare-and-swap on the slot's cache line
/// on every call, contended when threads share a point.
// Generic over the storage so private and shared tables both use it.
#[inline(always)]
pub(crate) fn point_id<S: TableStorage, L: Liveness>(
    table: &PointTable<S, L>,
    name: &[u8],
) -> Result<PointId, Failure> {
    Ok(match table.lookup(name)? {
        Some(id) => id,
        None => table.insert(name)?,
    })
}

/// Creates a table for up to `capacity` points (1 to `SDS_MAX_CAPACITY`)
/// and writes it to `*out`. About 2.1 KiB per point is allocated up front.
///
/// Returns `SDS_RESULT_INVALID_CAPACITY` for 0, above the maximum, or when
/// the memory cannot be allocated; `SDS_RESULT_NULL_ARGUMENT` if `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to a writable `sds_table *`.
#[no_mangle]
pub unsafe extern "C" fn sds_table_new(capacity: usize, out: *mut *mut sds_table) -> sds_result {
    boundary(|| {
        table_output(out, || {
            check_capacity(capacity)?;
            let mut slots: Vec<Slot> = Vec::new();
            slots.try_reserve_exact(capacity).map_err(|_| {
                Failure::new(
                    ErrorCode::InvalidCapacity,
                    &format_args!("cannot allocate {capacity} slots"),
                )
            })?;
            slots.extend((0..capacity).map(|_| Slot::new()));
            let table = PointTable::new(slots.into_boxed_slice())?;
            Ok(AnyTable::Private(table))
        })
    })
}

/// Frees a table; NULL is a no-op. Infallible. Every entry of the table is
/// void afterwards, and using the table again is undefined behaviour. A
/// shared table is detached (see `sds_table_open_shared`): the file and its
/// points stay for the other processes. An agent started on the table
/// (`sds_agent_start`) keeps it alive until `sds_agent_stop`. The exporter
/// of its metrics (`sds_metrics_text`) goes with it.
///
/// # Safety
/// `table` must be NULL or come from `sds_table_new` or
/// `sds_table_open_shared` and not be freed yet, with no other thread using
/// it.
#[no_mangle]
pub unsafe extern "C" fn sds_table_free(table: *mut sds_table) {
    boundary_or((), || {
        if !table.is_null() {
            crate::metrics::forget_table(table);
            drop(Arc::from_raw(table as *const AnyTable));
        }
    })
}

/// How many points fit; 0 for NULL. Infallible.
///
/// # Safety
/// `table` must be NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn sds_table_capacity(table: *const sds_table) -> usize {
    boundary_or(0, || table_input(table).map_or(0, AnyTable::capacity))
}

/// How many points exist; 0 for NULL. Infallible.
///
/// # Safety
/// `table` must be NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn sds_table_len(table: *const sds_table) -> usize {
    boundary_or(0, || {
        table_input(table).map_or(0, |t| match t {
            AnyTable::Private(t) => t.len(),
            AnyTable::Shared(shared) => shared.len(),
        })
    })
}

/// Writes the index of point `name` (created if needed) to `*out`: a handle
/// for `sds_enter_point` that stays valid as long as the table.
///
/// Returns the name errors, `SDS_RESULT_TABLE_FULL` or
/// `SDS_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `table` must be a live table, `name` point to `name_len` bytes and `out`
/// to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn sds_table_point(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    out: *mut u32,
) -> sds_result {
    boundary(|| {
        let (table, name, out) = named_point_out(table, name, name_len, out)?;
        let id = with_view!(table, t => point_id(t, name)?);
        out.write(id.index());
        Ok(())
    })
}

/// Sets the strategy of point `name` (created if needed). Counters, permits
/// in flight and a running delay are kept as SEMANTICS.md §4 says.
///
/// Returns `SDS_RESULT_INVALID_STRATEGY` (nothing changes, the old strategy
/// stays), `SDS_RESULT_TABLE_FULL`, the name errors, or
/// `SDS_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `table` must be a live table, `name` point to `name_len` bytes and
/// `strategy` to a readable struct.
#[no_mangle]
pub unsafe extern "C" fn sds_table_set_strategy(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    strategy: *const Strategy,
) -> sds_result {
    boundary(|| {
        let (table, name) = named_point(table, name, name_len)?;
        let strategy = input(strategy, "strategy")?;
        with_view!(table, t => t.set_strategy(name, strategy)?);
        Ok(())
    })
}

/// Sets the strategy of point `name` from SDS strategy JSON (see
/// `sds_strategy_from_json`). Malformed JSON, unknown fields and invalid
/// values are rejected whole and change nothing.
///
/// # Safety
/// `table` must be a live table, `name` point to `name_len` bytes and
/// `json` to `json_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_table_set_strategy_json(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    json: *const c_char,
    json_len: usize,
) -> sds_result {
    boundary(|| {
        let (table, name) = named_point(table, name, name_len)?;
        let strategy = parse(bytes(json, json_len, "json")?)?;
        with_view!(table, t => t.set_strategy(name, &strategy)?);
        Ok(())
    })
}

/// Removes the strategy of point `name`: it passes every request again, and
/// its counters stay. A point that does not exist is not created.
///
/// # Safety
/// `table` must be a live table and `name` point to `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_table_remove_strategy(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
) -> sds_result {
    boundary(|| {
        let (table, name) = named_point(table, name, name_len)?;
        with_view!(table, t => t.remove_strategy(name)?);
        Ok(())
    })
}
