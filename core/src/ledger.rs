//! The permit ledger: which process holds a point's concurrency permits, so
//! that the permits of a process that died are given back.
//!
//! A point's `in_flight` is one word every process of a shared table counts
//! its permits in. A process killed while it holds some would leave them
//! counted forever, and a point with `concurrentThreshold` would end up
//! refusing everything. So each process of a shared table also counts the
//! permits it holds on each point in its own **ledger row**: a `&[Held]` of
//! one counter per slot (index = point index), in shared memory, written
//! only by the process's own views. When a process is found dead, whoever
//! finds it calls [`crate::PointTable::reclaim`] on its row: every counter
//! is taken (swapped to 0) and subtracted from its point's `in_flight`. No
//! background thread and no syscall on the hot path: the cost of a call is
//! one more uncontended atomic add on a line only this process writes. A
//! private table has no ledger ([`crate::TableStorage::ledger`] is `None`).
//!
//! # Why a death can only make `in_flight` too low
//!
//! A permit is counted in the row for longer than in `in_flight`, on both
//! sides:
//!
//! - acquire: the row's counter goes up, *then* `in_flight` is raised by
//!   compare-and-swap (its release ordering keeps the row's add before it);
//!   a refusal takes the row's count back down.
//! - release: `in_flight` goes down (its acquire ordering keeps the row's
//!   subtraction after it), *then* the row's counter, saturating at 0.
//!
//! So at any instruction a process's row holds at least what it added to
//! `in_flight`, and reclaiming a row never leaves a dead process's permit
//! counted. What the row holds beyond that is a permit caught between its
//! two steps: a process killed after the row's add and before the
//! compare-and-swap succeeds (or before a refusal's undo), or after
//! `in_flight` went down and before the row did. Each such permit is
//! subtracted once too many: `in_flight` is one too low, so the point may
//! admit one request more than its threshold, per thread of the dead process
//! caught in those few instructions (in practice at most one per death).
//! The deficit heals: `in_flight` never goes below 0 (releases saturate), so
//! when the point's permits of that time have come back and a release finds
//! it at 0, the count is exact again.
//!
//! # Rules for the memory that holds the rows
//!
//! A row starts all zero ([`Held::new`]) and belongs to one process (every
//! view of that process may use it; entries are exited in the process that
//! entered them). Reclaim a dead process's row before its slot and row are
//! given to another process: reclaiming leaves the row all zero. Two
//! processes may reclaim the same row at once (each count is taken once),
//! while live processes use the table. Keep each process's row apart from
//! the others' cache lines: the counters are written on every call.

use crate::sync::{const_fn, AtomicU32, Ordering};

/// One process's count of the permits it holds on one point: one counter
/// of a ledger row (module doc). All zero is [`Held::new`]; any value is a
/// valid count.
#[repr(transparent)]
pub struct Held(AtomicU32);

impl Held {
    const_fn! {
        /// No permit held.
        pub fn new() -> Held {
            Held(AtomicU32::new(0))
        }
    }

    /// The permits counted now.
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// Counts a permit about to be taken: before `in_flight`'s raise.
    #[inline]
    pub(crate) fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Uncounts a permit: after `in_flight`'s decrease, or after a refusal.
    /// Never left below 0: a forged entry's subtraction from 0 is undone at
    /// once (one atomic subtraction on the usual path, not a loop).
    #[inline]
    pub(crate) fn remove(&self) {
        if self.0.fetch_sub(1, Ordering::Relaxed) == 0 {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Takes the whole count, leaving 0: a reclaimer's share.
    pub(crate) fn take(&self) -> u32 {
        self.0.swap(0, Ordering::AcqRel)
    }
}

impl Default for Held {
    fn default() -> Held {
        Held::new()
    }
}
