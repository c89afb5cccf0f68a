//! Every use of the core's table types, in one place, so the switch to the
//! core's shared layout (`TableState`, `PointTable::over`) is made here.
//!
//! Today's `PointTable` keeps its length and longest probe in itself, not in
//! the mapping: a table made in one process finds another's names through
//! `insert` (which walks every bucket a name may use) but `lookup` and
//! `stats` only walk as far as this process's own inserts went.

use std::mem::{align_of, size_of};
use std::sync::atomic::AtomicU64;

use sds_core::PointTable;
pub use sds_core::Slot;

use crate::layout::TABLE_STATE_SIZE;
use crate::mapping::{Mapping, Shared};

/// `size_of::<Slot>()`, part of the layout descriptor.
pub const SLOT_SIZE: usize = size_of::<Slot>();
/// `align_of::<Slot>()`, part of the layout descriptor.
pub const SLOT_ALIGN: usize = align_of::<Slot>();

/// A table over the mapped slots.
pub type Table<'a> = PointTable<&'a [Slot]>;

/// The block reserved for the table's own state (length, longest probe,
/// ...), which the core will keep in shared memory. Unused today.
#[repr(C, align(64))]
pub struct TableState([AtomicU64; TABLE_STATE_SIZE / 8]);

const _: () = assert!(size_of::<TableState>() == TABLE_STATE_SIZE);

impl TableState {
    pub(crate) const fn new() -> TableState {
        TableState([const { AtomicU64::new(0) }; TABLE_STATE_SIZE / 8])
    }
}

// SAFETY: words of AtomicU64: any bits are a value, changed only atomically.
unsafe impl Shared for TableState {}

// SAFETY: the core's slot is made only of atomics and changed only through
// them (`PointTable` shares `&[Slot]` between threads). Caveat until the
// core's layout change lands: two of its fields are `AtomicBool` (the delay
// turn and the strategy writer flag), and a byte other than 0 or 1 there
// would not be a valid bool. Only a process of the same user can write one
// (the file is 0600 and checked); the core's change replaces both flags
// with owner-tagged words.
unsafe impl Shared for Slot {}

/// Writes a fresh state block and `capacity` fresh slots (`Slot::new()`,
/// not zeros) into a mapping nobody else uses yet.
pub fn initialise(
    mapping: &mut Mapping,
    state_offset: usize,
    slots_offset: usize,
    capacity: usize,
) -> Option<()> {
    mapping.fill(state_offset, 1, TableState::new)?;
    mapping.fill(slots_offset, capacity, Slot::new)
}

/// The state block of a mapping.
pub fn state_at(mapping: &Mapping, offset: usize) -> Option<&TableState> {
    mapping.view::<TableState>(offset, 1)?.first()
}

/// The slots of a mapping.
pub fn slots_at(mapping: &Mapping, offset: usize, capacity: usize) -> Option<&[Slot]> {
    mapping.view::<Slot>(offset, capacity)
}

/// The core's table over the mapped state and slots. Today's core keeps
/// its state in the returned value and ignores `state`.
pub fn table_over<'a>(
    _state: &'a TableState,
    slots: &'a [Slot],
) -> Result<Table<'a>, sds_core::Error> {
    PointTable::new(slots)
}
