//! [`AnyKeys`]: a key table as a binding holds it, private to the process
//! or shared with the host through a file, with the core's calls on either
//! (so no binding dispatches on the kind of storage itself).

use std::mem::size_of;
use std::path::Path;

use sds_core::keyed::{
    KeyBucket, KeyCount, KeyDecision, KeyError, KeyRule, KeyTable, KeyTableStats, BUCKET_CELLS,
    MAX_KEY_BUCKETS,
};

use crate::{Error, Options, SharedKeyTable};

/// A private key table: the buckets on the heap.
pub type PrivateKeyTable = KeyTable<Box<[KeyBucket]>>;

/// A private key table or this process's mapping of a shared one.
pub enum AnyKeys {
    /// This process's own table.
    Private(PrivateKeyTable),
    /// A key table file shared with other processes.
    Shared(SharedKeyTable),
}

/// Runs `$body` with `$t` bound to the core's table of `$keys`.
macro_rules! with_table {
    ($keys:expr, $t:ident => $body:expr) => {
        match $keys {
            AnyKeys::Private($t) => $body,
            AnyKeys::Shared(shared) => {
                let $t = shared.table();
                $body
            }
        }
    };
}

impl AnyKeys {
    /// A private table of `capacity` keys (rounded up to buckets of
    /// [`BUCKET_CELLS`]), its cells allocated up front: the range is checked
    /// first, and memory that cannot be had is [`KeyError::InvalidCapacity`]
    /// too, not an abort. Cells of 2 MiB or more are advised onto huge
    /// pages before they are first written (`examples/keyed_lookup.rs`).
    pub fn private(rule: KeyRule, capacity: usize) -> Result<AnyKeys, KeyError> {
        let buckets = capacity.div_ceil(BUCKET_CELLS);
        if !(1..=MAX_KEY_BUCKETS).contains(&buckets) {
            return Err(KeyError::InvalidCapacity);
        }
        let mut storage: Vec<KeyBucket> = Vec::new();
        storage
            .try_reserve_exact(buckets)
            .map_err(|_| KeyError::InvalidCapacity)?;
        advise_huge_pages(storage.as_ptr() as usize, buckets * size_of::<KeyBucket>());
        storage.resize_with(buckets, KeyBucket::new);
        KeyTable::new(storage.into_boxed_slice(), rule).map(AnyKeys::Private)
    }

    /// Opens (or creates) the key table file at `path`
    /// ([`SharedKeyTable::open`]).
    pub fn shared(
        path: impl AsRef<Path>,
        capacity: usize,
        rule: KeyRule,
        options: &Options,
    ) -> Result<AnyKeys, Error> {
        SharedKeyTable::open(path, capacity, rule, options).map(AnyKeys::Shared)
    }

    /// [`KeyTable::decide`] ([`SharedKeyTable::decide`] on a shared table).
    #[inline]
    pub fn decide(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, KeyError> {
        match self {
            AnyKeys::Private(t) => t.decide(key, now_ms, cost),
            AnyKeys::Shared(shared) => shared.decide(key, now_ms, cost),
        }
    }

    /// [`KeyTable::peek`].
    pub fn peek(&self, key: &[u8], now_ms: u64) -> KeyDecision {
        with_table!(self, t => t.peek(key, now_ms))
    }

    /// [`KeyTable::release`] (on a shared in-flight table, only units this
    /// process took: [`SharedKeyTable::release`]).
    pub fn release(&self, key: &[u8], units: u32) -> Result<bool, KeyError> {
        match self {
            AnyKeys::Private(t) => t.release(key, units),
            AnyKeys::Shared(shared) => shared.release(key, units),
        }
    }

    /// [`KeyTable::reset`].
    pub fn reset(&self, key: &[u8]) -> bool {
        with_table!(self, t => t.reset(key))
    }

    /// [`KeyTable::reset_all`].
    pub fn reset_all(&self) -> u64 {
        with_table!(self, t => t.reset_all())
    }

    /// A window rule's count after adding `delta` at `now_ms`:
    /// [`KeyTable::increment`] for `delta > 0`, [`KeyTable::decrement`] by
    /// `-delta` for `delta < 0`, [`KeyTable::count`] for 0.
    pub fn count_add(&self, key: &[u8], now_ms: u64, delta: i64) -> Result<KeyCount, KeyError> {
        let units = u32::try_from(delta.unsigned_abs()).unwrap_or(u32::MAX);
        with_table!(self, t => match delta {
            1.. => t.increment(key, now_ms, units),
            ..0 => t.decrement(key, now_ms, units),
            0 => t.count(key, now_ms),
        })
    }

    /// [`KeyTable::stats`] (a shared table's are the file's: every
    /// process's keys).
    pub fn stats(&self) -> KeyTableStats {
        with_table!(self, t => t.stats())
    }

    /// Counts decisions from now on (for every process of a shared table):
    /// see `KeyTable::count_decisions`.
    pub fn count_decisions(&self) {
        with_table!(self, t => t.count_decisions())
    }

    /// The rule.
    pub fn rule(&self) -> &KeyRule {
        with_table!(self, t => t.rule())
    }

    /// How many keys fit (the capacity asked for, rounded up to buckets).
    pub fn capacity(&self) -> usize {
        with_table!(self, t => t.capacity())
    }

    /// The shared table's file path; `None` for a private table.
    pub fn path(&self) -> Option<&Path> {
        match self {
            AnyKeys::Private(_) => None,
            AnyKeys::Shared(shared) => Some(shared.path()),
        }
    }

    /// Opens (or creates, with `mode`: 0o600 or 0o660) the key table file
    /// of `name_or_path` as every binding names it: a bare name is a file
    /// under /dev/shm ([`crate::table_path`], the rule of shared point
    /// tables), then [`AnyKeys::shared`].
    pub fn open_named(
        name_or_path: impl AsRef<std::ffi::OsStr>,
        capacity: usize,
        rule: KeyRule,
        mode: u32,
    ) -> Result<AnyKeys, Error> {
        let path = crate::table_path(name_or_path)?;
        let options = Options::of_mode(mode)?;
        AnyKeys::shared(path, capacity, rule, &options)
    }
}

/// Asks the kernel for huge pages (transparent, 2 MiB on x86-64) under a
/// private table's cells, before they are first written: a key drawn from
/// millions is a TLB miss on 4 KiB pages, a page walk that itself misses
/// the caches. Advice only: where the kernel gives none (THP `never`), the
/// cells stay on small pages. Tables under 2 MiB are left alone.
fn advise_huge_pages(start: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    // Whole 4 KiB pages inside the allocation: madvise needs a page-aligned
    // start, and must not reach memory the allocation does not own.
    let page = 4096;
    let from = start.next_multiple_of(page);
    let to = (start + len) / page * page;
    if to <= from || to - from < HUGE {
        return;
    }
    // SAFETY: the range lies within this process's own allocation, and
    // MADV_HUGEPAGE changes how its pages are backed, never their contents.
    unsafe {
        libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
    }
}
