//! Where everything lives in the file, and the lock bytes beyond it.
//!
//! ```text
//! 0       header, 4096 bytes of native u64 words (see HEADER_* below)
//! 4096    process slots: MAX_PROCESSES records of 32 bytes
//! 12288   table state block, 64 bytes
//! 12352   slots, `capacity` x size_of::<Slot>(), at Slot's alignment (>= 64)
//! ...     ledger: MAX_PROCESSES rows, row i for process slot i, each
//!         `capacity` x 4 bytes (the core's `Held`) rounded up to 64
//! ```
//!
//! Each ledger row starts on its own 64-byte line: a process writes its row
//! on every call that takes a permit, and no two processes share a line of
//! counters.
//!
//! Lock bytes (fcntl, past the end of the file, never read or written):
//! `INIT_LOCK` for initialisation, `PROCESS_LOCK_BASE + i` for process
//! slot `i`, `ROLE_LOCK_BASE + r` for the holder of host-wide role `r`.

use sds_core::{LayoutDescriptor, LayoutField};

/// The header's size: one page.
pub const HEADER_SIZE: usize = 4096;
/// Header words (u64, native byte order).
pub const HEADER_WORDS: usize = HEADER_SIZE / 8;
/// Word 0: the magic, the bytes "SDSTABLE".
pub const HEADER_MAGIC: usize = 0;
/// Word 1: the layout version.
pub const HEADER_VERSION: usize = 1;
/// Words 2..19: the core's `LayoutDescriptor`, one field per word in the
/// order of `LayoutField::ALL`.
pub const HEADER_DESCRIPTOR: usize = 2;
/// How many words the descriptor takes.
pub const DESCRIPTOR_WORDS: usize = LayoutField::ALL.len();
/// The descriptor's byte order word: at a fixed place in every version, so it
/// is checked before the version is read.
pub const HEADER_BYTE_ORDER: usize = HEADER_DESCRIPTOR + 14;
/// Word 32: [`READY`] once the table is whole.
pub const HEADER_READY: usize = 32;
/// Word 33: the pid of the process that initialised it (information only:
/// pids are reused and differ between pid namespaces).
pub const HEADER_CREATOR_PID: usize = 33;
/// Word 34: when the process slots were last scanned for dead holders on a
/// refused request (the callers' `now_ms`; 0 at first): written at run time,
/// the only header word that is (see `Attachment::on_refused`).
pub const HEADER_LAST_SCAN: usize = 34;

/// The magic, as the first 8 bytes of the file.
pub const MAGIC: [u8; 8] = *b"SDSTABLE";
/// The file layout this build reads and writes: the header, the process
/// slots, where the core's memory lies. What the core's memory holds is the
/// descriptor's business (its own `layout_version` included).
pub const LAYOUT_VERSION: u64 = 3;
/// The ready word's value once initialisation has finished ("READYSDS"
/// as bytes): a random word is not taken for ready.
pub const READY: u64 = u64::from_le_bytes(*b"READYSDS");

/// Processes that can be attached at once.
pub const MAX_PROCESSES: usize = 256;
/// Bytes per process record. The version pins it and [`MAX_PROCESSES`].
pub const PROCESS_RECORD_SIZE: usize = 32;
/// Where the process records start.
pub const PROCESSES_OFFSET: usize = HEADER_SIZE;
/// Bytes per ledger counter (the core's `Held`).
pub const HELD_SIZE: usize = 4;
/// Where the table state block starts.
pub const TABLE_STATE_OFFSET: usize = PROCESSES_OFFSET + MAX_PROCESSES * PROCESS_RECORD_SIZE;
/// Bytes reserved for the table state block.
pub const TABLE_STATE_SIZE: usize = 64;

/// The initialisation lock's byte: 1 TiB in, far past any table (2^20 slots
/// of a few KiB).
pub const INIT_LOCK: u64 = 1 << 40;
/// Process slot `i` is locked at this byte + `i`.
pub const PROCESS_LOCK_BASE: u64 = INIT_LOCK + 1;
/// Host-wide role `r` (see `roles.rs`) is locked at this byte + `r`.
pub const ROLE_LOCK_BASE: u64 = PROCESS_LOCK_BASE + MAX_PROCESSES as u64;

const _: () = assert!(HEADER_DESCRIPTOR + DESCRIPTOR_WORDS <= HEADER_READY);
const _: () = assert!(matches!(LayoutField::ALL[14], LayoutField::ByteOrder));
const _: () = assert!(HEADER_LAST_SCAN < HEADER_WORDS);
const _: () = assert!(TABLE_STATE_OFFSET % 64 == 0);

/// The byte order mark every kind of file keeps at [`HEADER_BYTE_ORDER`]
/// (the core's: another byte order reads it reversed).
pub fn byte_order_mark() -> u64 {
    u64::from(LayoutDescriptor::for_capacity(1).byte_order)
}

/// The descriptor stored as `words`, in the order of `LayoutField::ALL`
/// (any values: it is only compared; a word wider than 32 bits cannot
/// describe this build and reads as `u32::MAX`).
pub fn descriptor_from_words(words: [u64; DESCRIPTOR_WORDS]) -> LayoutDescriptor {
    let w = words.map(|w| u32::try_from(w).unwrap_or(u32::MAX));
    LayoutDescriptor {
        layout_version: w[0],
        capacity: w[1],
        slot_size: w[2],
        slot_align: w[3],
        state_size: w[4],
        state_align: w[5],
        counter_bucket_ms: w[6],
        counter_buckets: w[7],
        counter_ring: w[8],
        peak_cycle_ms: w[9],
        peak_ring: w[10],
        max_name_len: w[11],
        strategy_fields: w[12],
        pointer_width: w[13],
        byte_order: w[14],
        atomic_u32_size: w[15],
        atomic_u64_size: w[16],
    }
}

/// The descriptor's fields as stored, in the order of `LayoutField::ALL`.
pub fn descriptor_words(descriptor: &LayoutDescriptor) -> [u64; DESCRIPTOR_WORDS] {
    LayoutField::ALL.map(|field| u64::from(descriptor.get(field)))
}

/// The offsets of one table's file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Where the slots start.
    pub slots_offset: usize,
    /// Slots.
    pub capacity: usize,
    /// Where ledger row 0 starts (the end of the slots, 64-aligned).
    pub ledger_offset: usize,
    /// Bytes from one ledger row to the next: `capacity` counters rounded
    /// up to 64.
    pub row_stride: usize,
    /// The whole file's length.
    pub file_len: usize,
}

impl Layout {
    /// The layout of `descriptor`'s table; `None` if it would not fit before
    /// the lock bytes (or in memory).
    pub fn of(descriptor: &LayoutDescriptor) -> Option<Layout> {
        let align = usize::try_from(descriptor.slot_align).ok()?.max(64);
        let state_size = usize::try_from(descriptor.state_size).ok()?;
        if state_size != TABLE_STATE_SIZE {
            return None;
        }
        if !align.is_power_of_two() {
            return None;
        }
        let slots_offset = (TABLE_STATE_OFFSET + TABLE_STATE_SIZE).next_multiple_of(align);
        let capacity = usize::try_from(descriptor.capacity).ok()?;
        let slot_size = usize::try_from(descriptor.slot_size).ok()?;
        let slots_end = capacity.checked_mul(slot_size)?.checked_add(slots_offset)?;
        let ledger_offset = slots_end.checked_next_multiple_of(64)?;
        let row_stride = capacity
            .checked_mul(HELD_SIZE)?
            .checked_next_multiple_of(64)?;
        let file_len = row_stride
            .checked_mul(MAX_PROCESSES)?
            .checked_add(ledger_offset)?;
        if file_len as u64 >= INIT_LOCK {
            return None;
        }
        Some(Layout {
            slots_offset,
            capacity,
            ledger_offset,
            row_stride,
            file_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_state_block_and_the_ledger_rows_the_slots() {
        let layout = Layout::of(&LayoutDescriptor::for_capacity(10)).unwrap();
        assert_eq!(TABLE_STATE_OFFSET, 12288);
        assert_eq!(layout.slots_offset, 12352);
        assert_eq!(layout.ledger_offset, 12352 + 10 * 3072);
        // 10 counters of 4 bytes, on a line of their own.
        assert_eq!(layout.row_stride, 64);
        assert_eq!(layout.file_len, 12352 + 10 * 3072 + 256 * 64);
        let big = Layout::of(&LayoutDescriptor::for_capacity(1024)).unwrap();
        assert_eq!(big.row_stride, 4096);
        assert_eq!(big.file_len - big.ledger_offset, 1 << 20);
    }

    #[test]
    fn descriptor_words_round_trip() {
        let d = LayoutDescriptor::for_capacity(100);
        assert_eq!(descriptor_from_words(descriptor_words(&d)), d);
        let mut words = descriptor_words(&d);
        words[2] = u64::MAX;
        assert_eq!(descriptor_from_words(words).slot_size, u32::MAX);
    }

    #[test]
    fn the_largest_table_ends_before_the_lock_bytes() {
        let largest = sds_core::MAX_CAPACITY as u32;
        assert!(Layout::of(&LayoutDescriptor::for_capacity(largest)).is_some());
        let hostile = LayoutDescriptor {
            slot_size: u32::MAX,
            capacity: u32::MAX,
            ..LayoutDescriptor::for_capacity(largest)
        };
        assert_eq!(Layout::of(&hostile), None);
    }
}
