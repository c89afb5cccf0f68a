//! What a key table lives in (its buckets and counters, private or in
//! shared memory), its counters read at once, and its errors.

use core::fmt;

use crate::error::ErrorCode;
use crate::sync::{const_fn, zeroed, AtomicU64, Ordering};

use super::cell::{KeyBucket, BUCKET_CELLS};
use super::hash::hash;

/// The most buckets a table may have (2^28 keys, 4 GiB of cells).
pub const MAX_KEY_BUCKETS: usize = 1 << 26;

/// Why a key table call was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// No buckets, or more than [`MAX_KEY_BUCKETS`] (`SDS_INVALID_CAPACITY`).
    InvalidCapacity,
    /// A cost of 0 (`SDS_INVALID_ARGUMENT`):
    /// [`KeyTable::peek`](super::KeyTable::peek) reads without taking.
    ZeroCost,
    /// An in-flight table's new key found every candidate cell holding
    /// units (`SDS_TABLE_FULL`): nginx answers 503 there too.
    TableFull,
    /// [`KeyTable::release`](super::KeyTable::release) on a table whose
    /// rule is not in flight (`SDS_INVALID_ARGUMENT`).
    NotInFlight,
    /// [`KeyTable::increment`](super::KeyTable::increment), `decrement` or
    /// `count` on a table whose rule is no window (`SDS_INVALID_ARGUMENT`).
    NotWindow,
    /// An in-flight call on a shared table whose process already holds
    /// units on as many keys as its ledger row keeps (`SDS_TABLE_FULL`).
    LedgerFull,
    /// A fork child's first in-flight call on a shared table found every
    /// process slot held by a live process (`SDS_TABLE_FULL`).
    NoProcessSlot,
}

impl KeyError {
    /// The stable code.
    pub const fn code(&self) -> ErrorCode {
        match self {
            KeyError::InvalidCapacity => ErrorCode::InvalidCapacity,
            KeyError::ZeroCost | KeyError::NotInFlight | KeyError::NotWindow => {
                ErrorCode::InvalidArgument
            }
            KeyError::TableFull | KeyError::LedgerFull | KeyError::NoProcessSlot => {
                ErrorCode::TableFull
            }
        }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::InvalidCapacity => write!(
                f,
                "a key table needs 1..={MAX_KEY_BUCKETS} buckets of {BUCKET_CELLS} keys"
            ),
            KeyError::ZeroCost => f.write_str("cost must be >= 1"),
            KeyError::TableFull => {
                f.write_str("key table is full: every cell the key may take holds units")
            }
            KeyError::NotInFlight => f.write_str("only an inFlight rule gives units back"),
            KeyError::NotWindow => f.write_str("only a window rule counts hits"),
            KeyError::NoProcessSlot => {
                f.write_str("every process slot of the shared key table is held by a live process")
            }
            KeyError::LedgerFull => f.write_str(
                "this process holds in-flight units on as many keys of the shared table as its ledger keeps",
            ),
        }
    }
}

impl core::error::Error for KeyError {}

/// A table's counters, kept beside its buckets: plain data (`repr(C)`,
/// integer atomics; a line of table counters, then the decisions'
/// stripes). All zero is a fresh table's.
#[repr(C, align(64))]
pub struct KeyTableState {
    pub(super) resident: AtomicU64,
    pub(super) evictions: AtomicU64,
    pub(super) lossy_evictions: AtomicU64,
    /// Non-zero once decisions are counted ([`KeyTableState::count_decisions`]).
    counting: AtomicU64,
    /// Unused (zero): the rest of the line.
    reserved: [AtomicU64; 4],
    /// Decisions admitted and refused, spread over lines by the key's
    /// fingerprint: one shared line would be written by every decision of
    /// every key (and process), a stripe only by the keys that fall in it.
    stripes: [DecisionStripe; DECISION_STRIPES],
}

/// Lines the decisions are counted on.
pub const DECISION_STRIPES: usize = 8;

/// One line of decision counts.
#[repr(C, align(64))]
struct DecisionStripe {
    admitted: AtomicU64,
    refused: AtomicU64,
    reserved: [AtomicU64; 6],
}

impl DecisionStripe {
    const_fn! {
        fn new() -> DecisionStripe {
            DecisionStripe { admitted: AtomicU64::new(0), refused: AtomicU64::new(0), reserved: zeroed() }
        }
    }
}

#[cfg(not(loom))]
const fn stripes() -> [DecisionStripe; DECISION_STRIPES] {
    [const { DecisionStripe::new() }; DECISION_STRIPES]
}

#[cfg(loom)]
fn stripes() -> [DecisionStripe; DECISION_STRIPES] {
    core::array::from_fn(|_| DecisionStripe::new())
}

impl KeyTableState {
    const_fn! {
        /// A fresh table's counters.
        pub fn new() -> KeyTableState {
            KeyTableState {
                resident: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                lossy_evictions: AtomicU64::new(0),
                counting: AtomicU64::new(0),
                reserved: zeroed(),
                stripes: stripes(),
            }
        }
    }

    /// Counts decisions from now on, in every process of a shared table.
    ///
    /// A count is an atomic add on a line of its own per decision (one hot
    /// key measured 20 ns a decision uncounted, 27 ns counted): a table
    /// counts only once something will read the counts (metrics list every
    /// table a binding opens), and pays one load per decision before.
    pub fn count_decisions(&self) {
        if self.counting.load(Ordering::Relaxed) == 0 {
            self.counting.store(1, Ordering::Relaxed);
        }
    }

    /// Counts a decision of `key`, if counting.
    #[inline(always)]
    pub(super) fn tally(&self, key: &[u8], admitted: bool) {
        if self.counting.load(Ordering::Relaxed) != 0 {
            self.count(key, admitted);
        }
    }

    /// Out of line: a decision that is not counted pays one load and one
    /// branch, not the key's hash again.
    #[cold]
    #[inline(never)]
    fn count(&self, key: &[u8], admitted: bool) {
        let stripe = &self.stripes[(hash(key) >> 8) as usize % DECISION_STRIPES];
        let counter = if admitted {
            &stripe.admitted
        } else {
            &stripe.refused
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Decisions admitted (`true`) or refused since the table was new.
    pub(super) fn decisions(&self, admitted: bool) -> u64 {
        let counter = if admitted {
            |s: &DecisionStripe| s.admitted.load(Ordering::Relaxed)
        } else {
            |s: &DecisionStripe| s.refused.load(Ordering::Relaxed)
        };
        self.stripes.iter().map(counter).sum()
    }
}

impl Default for KeyTableState {
    fn default() -> KeyTableState {
        KeyTableState::new()
    }
}

/// A table's counters read at once. Plain data: C's `sds_key_stats`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyTableStats {
    /// How many keys fit (the capacity asked for, rounded up to buckets of
    /// 4 keys).
    pub capacity: u64,
    /// Cells holding a key (a process killed while taking or giving one
    /// up leaves this one off).
    pub resident: u64,
    /// Keys whose cell was given to another key.
    pub evictions: u64,
    /// Of those, keys whose state was not a fresh key's: their next call
    /// starts from a fresh state (the only way the table forgets a limit).
    pub lossy_evictions: u64,
    /// Calls of `decide` admitted since the table counts decisions
    /// ([`KeyTable::count_decisions`](super::KeyTable::count_decisions):
    /// every binding's tables from their opening; 0 before).
    pub admitted: u64,
    /// Calls of `decide` refused since then (an error such as a full
    /// table is neither).
    pub refused: u64,
}

/// Memory a key table lives in: its buckets, and its counters unless the
/// table keeps its own (`None`: every `AsRef<[KeyBucket]>`).
pub trait KeyStorage {
    /// The buckets.
    fn buckets(&self) -> &[KeyBucket];
    /// The counters kept next to the buckets, if any.
    fn state(&self) -> Option<&KeyTableState>;
}

impl<T: AsRef<[KeyBucket]>> KeyStorage for T {
    #[inline]
    fn buckets(&self) -> &[KeyBucket] {
        self.as_ref()
    }

    #[inline]
    fn state(&self) -> Option<&KeyTableState> {
        None
    }
}

/// Buckets and counters in memory shared with other views (a mapping).
#[derive(Copy, Clone)]
pub struct SharedKeys<'a> {
    /// The counters.
    pub state: &'a KeyTableState,
    /// The buckets.
    pub buckets: &'a [KeyBucket],
}

impl KeyStorage for SharedKeys<'_> {
    #[inline]
    fn buckets(&self) -> &[KeyBucket] {
        self.buckets
    }

    #[inline]
    fn state(&self) -> Option<&KeyTableState> {
        Some(self.state)
    }
}
