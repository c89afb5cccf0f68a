//! Every use of the core's table types, in one place: the state block and
//! the slots in the mapping, and the view a process makes over them.

use std::mem::{align_of, size_of};

use sds_core::{Owner, PointTable, Shared as SharedStorage};
pub use sds_core::{Slot, TableState};

use crate::layout::TABLE_STATE_SIZE;
use crate::mapping::{Mapping, Shared};
use crate::shared_file::Attachment;

/// A view of the mapped table as one process's owner, asking the file's
/// process slots whether another owner lives.
pub type Table<'a> = PointTable<SharedStorage<'a>, &'a Attachment>;

const _: () = assert!(size_of::<TableState>() == TABLE_STATE_SIZE);
const _: () = assert!(align_of::<TableState>() <= 64);

// SAFETY: the core's `TableState` is `repr(C)`, made only of integer atomics
// (any bit pattern is a valid state) and changed only through them.
unsafe impl Shared for TableState {}

// SAFETY: the core's `Slot` is `repr(C)`, made only of integer atomics and
// arrays of them (any bit pattern is a valid slot; all zero is a fresh one)
// and changed only through them.
unsafe impl Shared for Slot {}

/// The state block of a mapping.
pub fn state_at(mapping: &Mapping, offset: usize) -> Option<&TableState> {
    mapping.view::<TableState>(offset, 1)?.first()
}

/// The slots of a mapping.
pub fn slots_at(mapping: &Mapping, offset: usize, capacity: usize) -> Option<&[Slot]> {
    mapping.view::<Slot>(offset, capacity)
}

/// The core's view over the mapped state and slots, as `owner`.
#[inline]
pub fn table_over<'a>(
    state: &'a TableState,
    slots: &'a [Slot],
    owner: Owner,
    liveness: &'a Attachment,
) -> Result<Table<'a>, sds_core::Error> {
    PointTable::with_owner(SharedStorage::new(state, slots), owner, liveness)
}
