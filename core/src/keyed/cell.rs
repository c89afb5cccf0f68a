//! A cell's two words, and a bucket of cells in one cache line.
//!
//! - The key word: `fingerprint (48 bits) << 16 | leaving (1 bit) << 15 |
//!   generation (15 bits)`. A fingerprint of 0 is an empty cell. Taking a
//!   cell for another key is a compare-and-swap of this word that also adds
//!   1 to the generation. In-flight tables mark a cell leaving before they
//!   take it (table.rs).
//! - The state word: `generation (low 10 bits) << 54 | payload (54 bits)`.
//!   A state whose generation is not its key word's was left by another
//!   owner: it reads as a fresh key's (payload 0) as long as the key word
//!   is still the one the decision started from. Every update is a
//!   compare-and-swap of the whole word, so an update computed for one
//!   owner fails once the cell has changed hands (unless 1 024 owners
//!   passed through it meanwhile and the payload is equal bit for bit).
//!
//! All zero is an empty cell, and any bit pattern is a valid one: the
//! words are plain data any process can map.

use crate::sync::{const_fn, AtomicU64};

use super::hash::FINGERPRINT_BITS;

/// Cells per bucket: one 64-byte line.
pub const BUCKET_CELLS: usize = 4;

const GEN_BITS: u32 = 64 - FINGERPRINT_BITS;
pub(crate) const PAYLOAD_BITS: u32 = 54;
const PAYLOAD: u64 = (1 << PAYLOAD_BITS) - 1;
const STATE_GEN: u64 = (1 << (64 - PAYLOAD_BITS)) - 1;

/// One key's cell: 16 bytes, `repr(C)`, two integer atomics.
#[repr(C)]
pub struct KeyCell {
    pub(crate) key: AtomicU64,
    pub(crate) state: AtomicU64,
}

/// A bucket: the cells one probe reads, aligned to a cache line.
#[repr(C, align(64))]
pub struct KeyBucket {
    pub(crate) cells: [KeyCell; BUCKET_CELLS],
}

const _: () = assert!(core::mem::size_of::<KeyCell>() == 16);
const _: () = assert!(core::mem::size_of::<KeyBucket>() == 64);

impl KeyCell {
    const_fn! {
        /// An empty cell.
        pub fn new() -> KeyCell {
            KeyCell {
                key: AtomicU64::new(0),
                state: AtomicU64::new(0),
            }
        }
    }
}

impl KeyBucket {
    const_fn! {
        /// A bucket of empty cells.
        pub fn new() -> KeyBucket {
            KeyBucket {
                cells: [KeyCell::new(), KeyCell::new(), KeyCell::new(), KeyCell::new()],
            }
        }
    }
}

impl Default for KeyCell {
    fn default() -> KeyCell {
        KeyCell::new()
    }
}

impl Default for KeyBucket {
    fn default() -> KeyBucket {
        KeyBucket::new()
    }
}

/// The fingerprint of a key word (0: empty).
#[inline]
pub(crate) fn owner(key_word: u64) -> u64 {
    key_word >> GEN_BITS
}

/// The generation: 15 bits, the state's 10 low ones and 5 bits of marks.
const GENERATION: u64 = (1 << (GEN_BITS - 1)) - 1;
/// The leaving mark (in-flight tables, table.rs).
const LEAVING: u64 = 1 << (GEN_BITS - 1);
/// One mark more in the generation's bits above the state's.
const MARK: u64 = STATE_GEN + 1;

/// The key word of `fingerprint` taking over a cell whose word was `old`:
/// the next generation, unmarked.
#[inline]
pub(crate) fn taken(old: u64, fingerprint: u64) -> u64 {
    fingerprint << GEN_BITS | (old.wrapping_add(1) & GENERATION)
}

/// `old` with no owner, its generation kept.
#[inline]
pub(crate) fn emptied(old: u64) -> u64 {
    old & GENERATION
}

/// Whether a cell is being given up (an in-flight claim checks that its
/// owner holds no units).
#[inline]
pub(crate) fn leaving(word: u64) -> bool {
    word & LEAVING != 0
}

/// `word` marked leaving, with a new mark count: a claim that lost its
/// mark to a cancel cannot complete on a later mark (unless 32 marks came
/// between its two steps). The state's generation stays.
#[inline]
pub(crate) fn marked(word: u64) -> u64 {
    let marks = (word & GENERATION & !STATE_GEN).wrapping_add(MARK) & GENERATION & !STATE_GEN;
    (word & !GENERATION) | LEAVING | marks | (word & STATE_GEN)
}

/// Whether two key words name the same owner (marks aside).
#[inline]
pub(crate) fn same_owner(a: u64, b: u64) -> bool {
    let owner_and_state_gen = !(GENERATION | LEAVING) | STATE_GEN;
    (a ^ b) & owner_and_state_gen == 0
}

/// `word` without its leaving mark.
#[inline]
pub(crate) fn unmarked(word: u64) -> u64 {
    word & !LEAVING
}

/// The payload of `state` if it belongs to `key_word`'s owner; `None` if
/// another owner, earlier or later, left it.
#[inline]
pub(crate) fn payload_of(state: u64, key_word: u64) -> Option<u64> {
    (state >> PAYLOAD_BITS == key_word & STATE_GEN).then_some(state & PAYLOAD)
}

/// The state word holding `payload` for `key_word`'s owner.
#[inline]
pub(crate) fn state_word(key_word: u64, payload: u64) -> u64 {
    (key_word & STATE_GEN) << PAYLOAD_BITS | (payload & PAYLOAD)
}
