//! `SumCache`: the sums of a point's nine completed seconds of the sliding
//! window, kept so that a decision reads a few words instead of walking 36.
//!
//! A completed second can still be written to: an exception or timeout is
//! counted at its request's start second, and a thread whose clock reading is
//! a little behind adds its visit to the second before. Such a *late write*
//! bumps the `epoch` when the cache's tag covers its second, and a cache built
//! at an older epoch is not used. The one race, a late write landing while a
//! rebuild walks past its second, is closed by ordering: a writer adds, then
//! reads the tag; a rebuilder publishes the tag, then reads the epoch and
//! walks. All four are `SeqCst`, so either the writer sees the tag (and bumps
//! the epoch) or the walk sees the write. On x86 and ARMv8 that ordering costs
//! no extra instruction; loom models `SeqCst` only through fences, so the
//! loom build adds them (`store_load_fence`).
//!
//! The sums themselves sit in a seqlock: readers never wait, a rebuild is
//! done by one thread at a time, and anyone who finds the cache busy or stale
//! walks the window itself.

use crate::sync::{const_fn, fence, zeroed, AtomicU32, AtomicU64, Ordering};

/// Counters per second.
pub(crate) const KINDS: usize = 4;

/// The seconds a window has besides the current one.
pub(crate) const COMPLETED: u64 = 9;

/// `repr(C)`, 64 bytes. A rebuilder that dies (a process of a shared table)
/// leaves `seq` odd: the cache is then never used again, and every decision
/// walks the window itself, which is slower but exact.
#[repr(C)]
pub(crate) struct SumCache {
    /// One more than the current second the sums were built for; 0: none.
    tag: AtomicU64,
    /// The epoch the sums were built at.
    built_at: AtomicU64,
    /// Bumped by every late write into a second the tag covers.
    epoch: AtomicU64,
    sums: [AtomicU64; KINDS],
    /// Even: stable. Odd: being rebuilt.
    seq: AtomicU32,
    /// Unused: no hidden padding.
    reserved: AtomicU32,
}

/// Orders a store before a later load under loom, which does not model
/// `SeqCst` loads and stores; elsewhere the `SeqCst` accesses do it.
#[inline]
fn store_load_fence() {
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

impl SumCache {
    const_fn! {
        pub(crate) fn new() -> SumCache {
            SumCache {
                tag: AtomicU64::new(0),
                built_at: AtomicU64::new(0),
                epoch: AtomicU64::new(0),
                sums: zeroed(),
                seq: AtomicU32::new(0),
                reserved: AtomicU32::new(0),
            }
        }
    }

    /// Called after a write into second `b`: invalidates the cache if its
    /// sums include `b`.
    #[inline]
    pub(crate) fn wrote(&self, b: u64) {
        store_load_fence();
        let tag = self.tag.load(Ordering::SeqCst);
        // The sums built for second `tag - 1` cover `tag - 10 ..= tag - 2`.
        if b + 1 < tag && b + 1 + COMPLETED >= tag {
            self.epoch.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Invalidates the cache whatever it holds.
    #[inline]
    pub(crate) fn invalidate(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    #[cfg(test)]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The completed seconds' sums for current second `b`, if the cache
    /// holds them and no late write came since.
    #[inline(always)]
    pub(crate) fn get(&self, b: u64) -> Option<[u64; KINDS]> {
        let before = self.seq.load(Ordering::Acquire);
        if before & 1 != 0 || self.tag.load(Ordering::Relaxed) != b + 1 {
            return None;
        }
        let built_at = self.built_at.load(Ordering::Relaxed);
        let sums = [0, 1, 2, 3].map(|k| self.sums[k].load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        let unchanged = self.seq.load(Ordering::Relaxed) == before;
        (unchanged && self.epoch.load(Ordering::SeqCst) == built_at).then_some(sums)
    }

    /// Computes the completed seconds' sums for current second `b` with
    /// `walk` and keeps them, unless another thread is rebuilding: then the
    /// sums are only computed.
    pub(crate) fn rebuild(&self, b: u64, walk: impl FnOnce() -> [u64; KINDS]) -> [u64; KINDS] {
        let before = self.seq.load(Ordering::Relaxed);
        if before & 1 != 0
            || self
                .seq
                .compare_exchange(before, before + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
        {
            return walk();
        }
        fence(Ordering::Release);
        self.tag.store(b + 1, Ordering::SeqCst);
        store_load_fence();
        let epoch = self.epoch.load(Ordering::SeqCst);
        let sums = walk();
        self.built_at.store(epoch, Ordering::Relaxed);
        for (slot, &v) in self.sums.iter().zip(sums.iter()) {
            slot.store(v, Ordering::Relaxed);
        }
        self.seq.store(before.wrapping_add(2), Ordering::Release);
        sums
    }
}
