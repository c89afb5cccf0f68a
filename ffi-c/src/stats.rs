//! `sds_stats_get`: a point's sliding values and its last whole cycle, in
//! the core's `Stats` (C's `sds_stats`).

use std::os::raw::c_char;

use sds_core::Stats;

use crate::boundary::boundary;
use crate::result::sds_result;
use crate::table::{named_point_out, sds_table, with_view};

/// Writes the statistics of point `name` at `now_ms` to `*out`; all zero
/// for a point that does not exist (it is not created). Thread-safe.
///
/// # Safety
/// `table` must be a live table, `name` point to `name_len` bytes, `out` to
/// a writable `sds_stats`.
#[no_mangle]
pub unsafe extern "C" fn sds_stats_get(
    table: *const sds_table,
    name: *const c_char,
    name_len: usize,
    now_ms: u64,
    out: *mut Stats,
) -> sds_result {
    boundary(|| {
        let (table, name, out) = named_point_out(table, name, name_len, out)?;
        out.write(with_view!(table, t => t.stats(name, now_ms)?));
        Ok(())
    })
}
