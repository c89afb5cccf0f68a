//! Everything two processes must agree on before they share a table, one
//! `u64` word each, in the header's fixed order. The core will own this
//! struct once its table layout is `#[repr(C)]`; until then the slot's
//! figures come from `core_table`.

use crate::core_table;
use crate::layout::{MAX_PROCESSES, PROCESS_RECORD_SIZE, TABLE_STATE_SIZE};

/// Written as a native `u64`: read back in another byte order it differs.
pub const BYTE_ORDER_MARK: u64 = 0x0102_0304_0506_0708;

/// How many words a descriptor takes in the header.
pub const DESCRIPTOR_WORDS: usize = 12;

/// What must match between the file and this process, field by field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LayoutDescriptor {
    /// [`BYTE_ORDER_MARK`] as this machine stores it.
    pub byte_order: u64,
    /// Slots in the table.
    pub capacity: u64,
    /// `size_of::<sds_core::Slot>()`.
    pub slot_size: u64,
    /// `align_of::<sds_core::Slot>()`.
    pub slot_align: u64,
    /// Bytes reserved for the table's state block.
    pub table_state_size: u64,
    /// Bits in a pointer.
    pub pointer_width: u64,
    /// `size_of::<AtomicU32>()`.
    pub atomic_u32_size: u64,
    /// `size_of::<AtomicU64>()`.
    pub atomic_u64_size: u64,
    /// `align_of::<AtomicU64>()` (4 on some 32-bit targets).
    pub atomic_u64_align: u64,
    /// `sds_core::MAX_NAME_LEN`.
    pub max_name_len: u64,
    /// Process slots in the registry.
    pub max_processes: u64,
    /// Bytes per process slot.
    pub process_record_size: u64,
}

const NAMES: [&str; DESCRIPTOR_WORDS] = [
    "byte order",
    "capacity",
    "slot size",
    "slot alignment",
    "table state size",
    "pointer width",
    "AtomicU32 size",
    "AtomicU64 size",
    "AtomicU64 alignment",
    "MAX_NAME_LEN",
    "process slots",
    "process slot size",
];

impl LayoutDescriptor {
    /// This build's layout for a table of `capacity` slots.
    pub fn current(capacity: u64) -> LayoutDescriptor {
        use std::mem::{align_of, size_of};
        use std::sync::atomic::{AtomicU32, AtomicU64};
        LayoutDescriptor {
            byte_order: BYTE_ORDER_MARK,
            capacity,
            slot_size: core_table::SLOT_SIZE as u64,
            slot_align: core_table::SLOT_ALIGN as u64,
            table_state_size: TABLE_STATE_SIZE as u64,
            pointer_width: usize::BITS as u64,
            atomic_u32_size: size_of::<AtomicU32>() as u64,
            atomic_u64_size: size_of::<AtomicU64>() as u64,
            atomic_u64_align: align_of::<AtomicU64>() as u64,
            max_name_len: sds_core::MAX_NAME_LEN as u64,
            max_processes: MAX_PROCESSES as u64,
            process_record_size: PROCESS_RECORD_SIZE as u64,
        }
    }

    /// The fields as stored, in order.
    pub fn to_words(&self) -> [u64; DESCRIPTOR_WORDS] {
        [
            self.byte_order,
            self.capacity,
            self.slot_size,
            self.slot_align,
            self.table_state_size,
            self.pointer_width,
            self.atomic_u32_size,
            self.atomic_u64_size,
            self.atomic_u64_align,
            self.max_name_len,
            self.max_processes,
            self.process_record_size,
        ]
    }

    /// The descriptor stored as `words` (any values: it is only compared).
    pub fn from_words(words: [u64; DESCRIPTOR_WORDS]) -> LayoutDescriptor {
        let [byte_order, capacity, slot_size, slot_align, table_state_size, pointer_width, atomic_u32_size, atomic_u64_size, atomic_u64_align, max_name_len, max_processes, process_record_size] =
            words;
        LayoutDescriptor {
            byte_order,
            capacity,
            slot_size,
            slot_align,
            table_state_size,
            pointer_width,
            atomic_u32_size,
            atomic_u64_size,
            atomic_u64_align,
            max_name_len,
            max_processes,
            process_record_size,
        }
    }

    /// The first field where `theirs` differs: its name, ours, theirs.
    pub fn first_difference(&self, theirs: &LayoutDescriptor) -> Option<(&'static str, u64, u64)> {
        NAMES
            .iter()
            .zip(self.to_words().into_iter().zip(theirs.to_words()))
            .find(|(_, (ours, theirs))| ours != theirs)
            .map(|(name, (ours, theirs))| (*name, ours, theirs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let d = LayoutDescriptor::current(100);
        assert_eq!(LayoutDescriptor::from_words(d.to_words()), d);
        assert_eq!(d.first_difference(&d), None);
    }

    #[test]
    fn names_the_first_field_that_differs() {
        let ours = LayoutDescriptor::current(100);
        let mut theirs = ours;
        theirs.slot_size += 8;
        theirs.max_name_len = 1;
        assert_eq!(
            ours.first_difference(&theirs),
            Some(("slot size", ours.slot_size, ours.slot_size + 8))
        );
        let swapped = LayoutDescriptor {
            byte_order: BYTE_ORDER_MARK.swap_bytes(),
            ..ours
        };
        assert_eq!(
            ours.first_difference(&swapped).map(|d| d.0),
            Some("byte order")
        );
    }
}
