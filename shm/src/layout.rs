//! Where everything lives in the file, and the lock bytes beyond it.
//!
//! ```text
//! 0       header, 4096 bytes of native u64 words (see HEADER_* below)
//! 4096    process slots: MAX_PROCESSES records of 32 bytes
//! 12288   table state block, 64 bytes
//! 12352   slots, `capacity` x size_of::<Slot>(), at Slot's alignment (>= 64)
//! ```
//!
//! Lock bytes (fcntl, past the end of the file, never read or written):
//! `INIT_LOCK` for initialisation, `PROCESS_LOCK_BASE + i` for process
//! slot `i`.

use crate::descriptor::{LayoutDescriptor, DESCRIPTOR_WORDS};

/// The header's size: one page.
pub const HEADER_SIZE: usize = 4096;
/// Header words (u64, native byte order).
pub const HEADER_WORDS: usize = HEADER_SIZE / 8;
/// Word 0: the magic, the bytes "SDSTABLE".
pub const HEADER_MAGIC: usize = 0;
/// Word 1: the layout version.
pub const HEADER_VERSION: usize = 1;
/// Words 2..14: the descriptor; word 2 is its byte order mark, at a fixed
/// place in every version so it is checked before the version is read.
pub const HEADER_DESCRIPTOR: usize = 2;
/// Word 32: [`READY`] once the table is whole.
pub const HEADER_READY: usize = 32;
/// Word 33: the pid of the process that initialised it (information only:
/// pids are reused and differ between pid namespaces).
pub const HEADER_CREATOR_PID: usize = 33;

/// The magic, as the first 8 bytes of the file.
pub const MAGIC: [u8; 8] = *b"SDSTABLE";
/// The layout this build reads and writes.
pub const LAYOUT_VERSION: u64 = 1;
/// The ready word's value once initialisation has finished ("READYSDS"
/// as bytes): a random word is not taken for ready.
pub const READY: u64 = u64::from_le_bytes(*b"READYSDS");

/// Processes that can be attached at once.
pub const MAX_PROCESSES: usize = 256;
/// Bytes per process record.
pub const PROCESS_RECORD_SIZE: usize = 32;
/// Where the process records start.
pub const PROCESSES_OFFSET: usize = HEADER_SIZE;
/// Where the table state block starts.
pub const TABLE_STATE_OFFSET: usize = PROCESSES_OFFSET + MAX_PROCESSES * PROCESS_RECORD_SIZE;
/// Bytes reserved for the table state block.
pub const TABLE_STATE_SIZE: usize = 64;

/// The initialisation lock's byte: 1 TiB in, far past any table (2^20 slots
/// of a few KiB).
pub const INIT_LOCK: u64 = 1 << 40;
/// Process slot `i` is locked at this byte + `i`.
pub const PROCESS_LOCK_BASE: u64 = INIT_LOCK + 1;

const _: () = assert!(HEADER_DESCRIPTOR + DESCRIPTOR_WORDS <= HEADER_READY);
const _: () = assert!(HEADER_CREATOR_PID < HEADER_WORDS);
const _: () = assert!(TABLE_STATE_OFFSET % 64 == 0);

/// The offsets of one table's file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Where the slots start.
    pub slots_offset: usize,
    /// Slots.
    pub capacity: usize,
    /// The whole file's length.
    pub file_len: usize,
}

impl Layout {
    /// The layout of `descriptor`'s table; `None` if it would not fit before
    /// the lock bytes (or in memory).
    pub fn of(descriptor: &LayoutDescriptor) -> Option<Layout> {
        let align = usize::try_from(descriptor.slot_align).ok()?.max(64);
        if !align.is_power_of_two() {
            return None;
        }
        let slots_offset = (TABLE_STATE_OFFSET + TABLE_STATE_SIZE).next_multiple_of(align);
        let capacity = usize::try_from(descriptor.capacity).ok()?;
        let slot_size = usize::try_from(descriptor.slot_size).ok()?;
        let file_len = capacity.checked_mul(slot_size)?.checked_add(slots_offset)?;
        if file_len as u64 >= INIT_LOCK {
            return None;
        }
        Some(Layout {
            slots_offset,
            capacity,
            file_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_state_block_aligned() {
        let layout = Layout::of(&LayoutDescriptor::current(10)).unwrap();
        assert_eq!(TABLE_STATE_OFFSET, 12288);
        assert_eq!(layout.slots_offset, 12352);
        assert_eq!(layout.file_len, 12352 + 10 * crate::core_table::SLOT_SIZE);
    }

    #[test]
    fn the_largest_table_ends_before_the_lock_bytes() {
        let largest = sds_core::MAX_CAPACITY as u64;
        assert!(Layout::of(&LayoutDescriptor::current(largest)).is_some());
        let hostile = LayoutDescriptor {
            slot_size: u64::MAX / 2,
            ..LayoutDescriptor::current(largest)
        };
        assert_eq!(Layout::of(&hostile), None);
    }
}
