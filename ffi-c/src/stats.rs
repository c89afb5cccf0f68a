//! `sds_stats_get`: a point's sliding values and its last whole cycle.

use std::os::raw::c_char;

use sds_core::{CycleStats, Stats};

use crate::args::input;
use crate::boundary::boundary;
use crate::result::sds_result;
use crate::table::sds_table;

/// The sums of the last whole 10 s cycle, as SDS uploads them.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct sds_cycle_stats {
    /// Visits.
    pub visit_num: u64,
    /// Exceptions (counted at their requests' start).
    pub exception_num: u64,
    /// Timeouts (counted at their requests' start).
    pub timeout_num: u64,
    /// Downgrades.
    pub downgrade_num: u64,
    /// The most requests in flight at once.
    pub concurrent_num: u64,
}

/// A point's current sliding values (10 s window) and its last whole cycle.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct sds_stats {
    /// Visits in the sliding window.
    pub visit: u64,
    /// Exceptions in the sliding window.
    pub exception: u64,
    /// Timeouts in the sliding window.
    pub timeout: u64,
    /// Downgrades in the sliding window.
    pub downgrade: u64,
    /// Requests holding a concurrency permit now.
    pub concurrent: u64,
    /// The last whole cycle before `now_ms`'s.
    pub last_cycle: sds_cycle_stats,
}

impl From<&Stats> for sds_stats {
    fn from(s: &Stats) -> sds_stats {
        let CycleStats {
            visit_num,
            exception_num,
            timeout_num,
            downgrade_num,
            concurrent_num,
        } = s.last_cycle;
        sds_stats {
            visit: s.visit,
            exception: s.exception,
            timeout: s.timeout,
            downgrade: s.downgrade,
            concurrent: s.concurrent,
            last_cycle: sds_cycle_stats {
                visit_num,
                exception_num,
                timeout_num,
                downgrade_num,
                concurrent_num,
            },
        }
    }
}

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
    out: *mut sds_stats,
) -> sds_result {
    boundary(|| {
        let table = &input(table, "table")?.inner;
        let name = crate::args::name(name, name_len)?;
        let out = crate::args::out(out, "out")?;
        out.write((&table.stats(name, now_ms)?).into());
        Ok(())
    })
}
