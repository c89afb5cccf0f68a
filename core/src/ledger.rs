//! The permit ledger: which process holds a point's concurrency permits, so
//! that the permits of a process that died are given back, exactly.
//!
//! A point's `in_flight` is one word every process of a shared table counts
//! its permits in. A process killed while it holds some would leave them
//! counted forever, and a point with `concurrentThreshold` would end up
//! refusing everything. So each process of a shared table also counts the
//! permits it holds on each point in its own **ledger row**: a `&[Held]` of
//! one counter per slot (index = point index), in shared memory, written
//! only by the process's own views (and tagged by recounts, below). No
//! background thread and no syscall on the hot path: the cost of a permit is
//! one more uncontended atomic add and one subtraction on a line only this
//! process writes. A private table has no ledger
//! ([`crate::TableStorage::ledger`] is `None`).
//!
//! # A row holds at least what its process put in `in_flight`
//!
//! A permit is counted in the row for longer than in `in_flight`, on both
//! sides: acquire counts it in the row, *then* raises `in_flight` by
//! compare-and-swap; release lowers `in_flight`, *then* the row. So at any
//! instruction a process's row holds its permits in `in_flight`, plus at
//! most one per thread caught between the two steps.
//!
//! # A dead process's permits: the count is made again, not subtracted
//!
//! Subtracting a dead row from `in_flight` cannot be exact: a permit caught
//! between the two steps is in the row and not in `in_flight`, and nothing
//! tells it apart. So whoever finds a process dead empties its row and
//! **recounts** each point it held permits on
//! ([`crate::PointTable::reclaim`], [`crate::PointTable::recount`]):
//! `in_flight` becomes the sum of the live processes' rows (in_flight.rs).
//! While a recount reads the rows, the point's `in_flight` is frozen (no
//! permit is taken or returned), and each row it reads is tagged with the
//! recount's epoch, which the frozen word's thaw publishes: every counter of
//! the point, an empty one too, so a counter's tag is always the last
//! recount's, never one that many recounts ago wrapped round to the next
//! one's (the tag is 7 bits). A thread caught
//! between its two steps learns from the tag whether the recount counted its
//! step, and settles it: an acquire that was counted holds its permit (and
//! gives it back if that put the point over its threshold); a refusal's undo
//! or a release that was counted takes the extra one out of `in_flight`, if
//! no later recount has already left it out. So a recount's result is the
//! live processes' permits exactly, and stays so.
//!
//! # Rules for the memory that holds the rows
//!
//! A row starts all zero ([`Held::new`]) and belongs to one process (every
//! view of that process may use it; entries are exited in the process that
//! entered them). Empty a dead process's row before its slot and row are
//! given to another process: [`crate::PointTable::reclaim`] leaves each
//! count 0 (and each tag as it was). Two processes may reclaim the same row
//! at once (each count is taken once), while live processes use the table.
//! Keep each process's row apart from the others' cache lines: the counters
//! are written on every call.

use crate::sync::{const_fn, AtomicU32, Ordering};

/// Bits of the permit count, low in the word.
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u32 = (1 << COUNT_BITS) - 1;
/// The recount epoch that last read the counter, above the count.
const TAG_MASK: u32 = 0x7f;

/// One process's count of the permits it holds on one point: one counter
/// of a ledger row (module doc). All zero is [`Held::new`]; any value is a
/// valid count. The low 24 bits count permits, the next 7 name the last
/// recount that read them (in_flight.rs).
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
        self.0.load(Ordering::Acquire) & COUNT_MASK
    }

    /// The epoch of the last recount that read this counter.
    #[inline]
    pub(crate) fn tag(&self) -> u32 {
        tag_of(self.0.load(Ordering::Acquire))
    }

    /// Counts a permit about to be taken, before `in_flight`'s raise;
    /// returns the tag it found.
    #[inline]
    pub(crate) fn add(&self) -> u32 {
        tag_of(self.0.fetch_add(1, Ordering::AcqRel))
    }

    /// Uncounts a permit: after `in_flight`'s decrease, or a refusal's
    /// undo. Never below 0 (a forged entry's exit changes nothing). Returns
    /// the tag it found.
    #[inline]
    pub(crate) fn remove(&self) -> u32 {
        let mut seen = self.0.load(Ordering::Relaxed);
        while seen & COUNT_MASK != 0 {
            match self
                .0
                .compare_exchange_weak(seen, seen - 1, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
        tag_of(seen)
    }

    /// A recount of epoch `epoch` reads the count: the count, the counter
    /// tagged with `epoch`. An empty one is tagged too: a thread's step
    /// compares the tag its add found with the tag after, and a tag left
    /// from a recount 128 epochs back would read as the racing recount's
    /// (its permit counted twice).
    pub(crate) fn read_for(&self, epoch: u32) -> u32 {
        let mut seen = self.0.load(Ordering::Acquire);
        loop {
            let count = seen & COUNT_MASK;
            let tagged = count | (epoch & TAG_MASK) << COUNT_BITS;
            match self
                .0
                .compare_exchange_weak(seen, tagged, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return count,
                Err(now) => seen = now,
            }
        }
    }

    /// Takes the whole count, leaving it 0: a dead row's. The tag stays
    /// the last recount's (a tag of 0 would read as a recount's 128 epochs
    /// on, as in `read_for`).
    pub(crate) fn take(&self) -> u32 {
        self.0.fetch_and(!COUNT_MASK, Ordering::AcqRel) & COUNT_MASK
    }
}

#[inline]
fn tag_of(word: u32) -> u32 {
    (word >> COUNT_BITS) & TAG_MASK
}

impl Default for Held {
    fn default() -> Held {
        Held::new()
    }
}
