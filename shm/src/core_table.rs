//! Every use of the core's table types, in one place: the state block, the
//! slots and the ledger rows in the mapping, and the views a process makes
//! over them.

use std::mem::{align_of, size_of};

use sds_core::{Held, Liveness, Owner, PointTable, Shared as SharedStorage};
pub use sds_core::{Slot, TableState};

use crate::layout::{Layout, HELD_SIZE, MAX_PROCESSES, TABLE_STATE_OFFSET, TABLE_STATE_SIZE};
use crate::mapping::{Mapping, Shared};
use crate::shared_file::Attachment;

/// A view of the mapped table as one process's owner, asking the file's
/// process slots whether another owner lives, and counting the permits it
/// takes in its process slot's ledger row.
pub type Table<'a> = PointTable<SharedStorage<'a>, &'a Attachment>;

const _: () = assert!(size_of::<TableState>() == TABLE_STATE_SIZE);
const _: () = assert!(align_of::<TableState>() <= 64);
const _: () = assert!(size_of::<Held>() == HELD_SIZE);
const _: () = assert!(align_of::<Held>() <= 64);

// SAFETY: the core's `TableState` is `repr(C)`, made only of integer atomics
// (any bit pattern is a valid state) and changed only through them.
unsafe impl Shared for TableState {}

// SAFETY: the core's `Slot` is `repr(C)`, made only of integer atomics and
// arrays of them (any bit pattern is a valid slot; all zero is a fresh one)
// and changed only through them.
unsafe impl Shared for Slot {}

// SAFETY: the core's `Held` is `repr(transparent)` over an `AtomicU32`: any
// bits are a count (all zero is none), changed only atomically.
unsafe impl Shared for Held {}

/// The table's memory in a mapping: its state, its slots and every process
/// slot's ledger row, each checked in bounds and aligned once.
#[derive(Copy, Clone)]
pub struct Memory<'a> {
    pub state: &'a TableState,
    pub slots: &'a [Slot],
    /// All the rows, `stride` counters apart.
    rows: &'a [Held],
    stride: usize,
}

impl<'a> Memory<'a> {
    /// The memory of `layout` in `mapping`; `None` if any part is out of the
    /// mapping or misaligned.
    pub fn of(mapping: &'a Mapping, layout: &Layout) -> Option<Memory<'a>> {
        let stride = layout.row_stride / HELD_SIZE;
        Some(Memory {
            state: mapping.view::<TableState>(TABLE_STATE_OFFSET, 1)?.first()?,
            slots: mapping.view::<Slot>(layout.slots_offset, layout.capacity)?,
            rows: mapping.view::<Held>(layout.ledger_offset, MAX_PROCESSES * stride)?,
            stride,
        })
    }

    /// The ledger row of process slot `process` (one counter per slot);
    /// empty for a slot out of range.
    pub fn row(&self, process: usize) -> &'a [Held] {
        let start = process.saturating_mul(self.stride);
        self.rows
            .get(start..start.saturating_add(self.slots.len()))
            .unwrap_or(&[])
    }

    /// The core's view as `owner`, counting its permits in process slot
    /// `process`'s row.
    #[inline]
    pub fn table(
        &self,
        owner: Owner,
        process: usize,
        liveness: &'a Attachment,
    ) -> Result<Table<'a>, sds_core::Error> {
        let storage = SharedStorage::with_ledger(self.state, self.slots, self.row(process));
        PointTable::with_owner(storage, owner, liveness)
    }

    /// Gives back the permits counted in process slot `process`'s row,
    /// leaving it counting nothing, and recounts each point it held permits
    /// on from `live` (every process slot's row): how many the row held.
    /// The caller holds the slot's lock, so its holder is dead or is this
    /// process detaching; it recounts as `owner` (this process, alive to
    /// `liveness`).
    pub fn reclaim(
        &self,
        process: usize,
        owner: u32,
        liveness: impl Liveness,
        live: &[&[Held]],
    ) -> u64 {
        let Some(owner) = Owner::new(owner) else {
            return 0;
        };
        PointTable::with_owner(SharedStorage::new(self.state, self.slots), owner, liveness)
            .and_then(|view| view.reclaim(self.row(process), live))
            // Only a row of the wrong length is refused: none is made here.
            .unwrap_or(0)
    }

    /// Recounts point `id` as `owner` from `live` (every process slot's
    /// row): its new count of permits in flight.
    pub fn recount(
        &self,
        id: sds_core::PointId,
        owner: Owner,
        liveness: impl Liveness,
        live: &[&[Held]],
    ) -> Result<u32, sds_core::Error> {
        PointTable::with_owner(SharedStorage::new(self.state, self.slots), owner, liveness)?
            .recount(id, live)
    }
}
