//! `SlidingWindow`: a lock-free ring of time buckets, each tagged with the lap
//! of the ring it holds.
//!
//! Time `t` falls in bucket `b = t / bucket_ms`; bucket `b` lives in slot
//! `b % ring` and belongs to lap `b / ring`. A slot is one `AtomicU64` packing
//! `lap (high 32 bits) | count (low 32 bits)`. A reader counts a slot only when
//! its lap is the one it expects, so a bucket left over from an older lap reads
//! as zero and the first writer of the new lap resets it in the same
//! compare-and-swap that adds to it. No background thread, no lock: the ring
//! cleans itself, and an idle gap of any length is read exactly.
//!
//! # Clock steps and outliers
//!
//! A write at `now_ms` is the present: when its slot holds a *newer* lap (the
//! clock stepped back by a ring or more, or one write came from a time far
//! ahead), that slot is restarted at the writer's lap. So after a step back of
//! any size the window counts again from the very next write, and a single
//! outlier time, in either direction, costs at most the one bucket it shares a
//! slot with. Reads are exact for their own time: a slot of any other lap
//! reads as zero, so a window read just after a step back holds only what was
//! written since (the history before the step is not in it).
//!
//! A *late* write, one that belongs to an earlier time than the present (an
//! exception counted at its request's start), goes through
//! [`SlidingWindow::add_at`], which knows both times: it lands in its own
//! bucket while the ring holds it, and otherwise at the present, so it is
//! never dropped and never restarts a newer bucket.
//!
//! # Limits of the packing
//!
//! - A bucket counts up to `u32::MAX` (4 294 967 295) and then saturates; sums
//!   of many buckets are `u64`.
//! - Laps are compared modulo 2^32: a slot idle for exactly a multiple of 2^32
//!   laps would read as current, that is after `2^32 × ring × bucket_ms`:
//!   4 083 years for SDS counters (1 s × 30), 272 years for Sentinel's second
//!   window (500 ms × 4), 4 years at 1 ms buckets and a ring of 30. Telling a
//!   late write's older lap from a newer one uses serial-number arithmetic,
//!   exact for gaps up to 2^31 laps; beyond that a late write is counted at
//!   the present.

use core::ops::Range;

use crate::error::{Error, WindowRule};
use crate::sync::{const_fn, AtomicU64, Ordering};

/// The most buckets a ring may hold.
pub const MAX_RING: usize = 1 << 16;

pub(crate) const COUNT_MASK: u64 = u32::MAX as u64;

/// One slot of a ring: a lap tag and a count in one atomic word (`repr(transparent)`:
/// 8 bytes, all zero is an empty bucket, any bit pattern a valid one).
#[derive(Debug)]
#[repr(transparent)]
pub struct Bucket(AtomicU64);

impl Bucket {
    const_fn! {
        /// An empty bucket.
        pub fn new() -> Bucket {
            Bucket(AtomicU64::new(0))
        }
    }
}

impl Bucket {
    /// The count if this bucket holds `lap`, else 0 (stale or newer).
    #[inline]
    pub(crate) fn count_in(&self, lap: u32) -> u64 {
        // The word minus `lap << 32` is the count exactly when the word's lap
        // is `lap` (any other lap leaves a high half): one subtraction and
        // one compare per bucket on the hot sums.
        let rest = self
            .0
            .load(Ordering::SeqCst)
            .wrapping_sub((lap as u64) << 32);
        if rest <= COUNT_MASK {
            rest
        } else {
            0
        }
    }

    /// The count it holds, whatever its lap.
    #[inline]
    pub(crate) fn raw_count(&self) -> u64 {
        self.0.load(Ordering::SeqCst) & COUNT_MASK
    }

    /// The count if this bucket holds `lap`, else `None` (a bucket holding
    /// `lap` with a count of 0 is `Some(0)`).
    #[inline]
    pub(crate) fn count_if(&self, lap: u32) -> Option<u64> {
        let rest = self
            .0
            .load(Ordering::Acquire)
            .wrapping_sub((lap as u64) << 32);
        (rest <= COUNT_MASK).then_some(rest)
    }

    /// Applies `f` to the count of `lap` (zero if the bucket holds another
    /// lap) and stores the result: the new count and the word it replaced.
    /// A newer lap is restarted when `restart_newer`, else left alone
    /// (`None`).
    ///
    /// The swap and `count_in`'s load are `SeqCst`: a point's cache of
    /// completed seconds (counters.rs) needs a late write and a cache rebuild
    /// to be in one total order. On x86 and ARMv8 they compile to the same
    /// instructions as `AcqRel` and `Acquire`.
    #[inline]
    pub(crate) fn update(
        &self,
        lap: u32,
        restart_newer: bool,
        f: impl Fn(u32) -> u32,
    ) -> Option<(u32, u64)> {
        self.update_guarded(lap, restart_newer, f, || {})
    }

    /// [`Bucket::update`], calling `before_discard` before each attempt
    /// to replace a non-zero count of another lap (a write that will take
    /// a count out of the ring; counters.rs announces it to readers of the
    /// totals). A write into its own lap never calls it.
    #[inline]
    pub(crate) fn update_guarded(
        &self,
        lap: u32,
        restart_newer: bool,
        f: impl Fn(u32) -> u32,
        mut before_discard: impl FnMut(),
    ) -> Option<(u32, u64)> {
        let mut word = self.0.load(Ordering::Acquire);
        loop {
            let count = match age(word, lap) {
                Age::Current => (word & COUNT_MASK) as u32,
                Age::Newer if !restart_newer => return None,
                Age::Stale | Age::Newer => {
                    if word & COUNT_MASK != 0 {
                        before_discard();
                    }
                    0
                }
            };
            let next = pack(lap, f(count));
            if next == word {
                return Some((count, word));
            }
            match self
                .0
                .compare_exchange_weak(word, next, Ordering::SeqCst, Ordering::Acquire)
            {
                Ok(_) => return Some(((next & COUNT_MASK) as u32, word)),
                Err(seen) => word = seen,
            }
        }
    }

    /// Zeroes the count of `lap` if this bucket holds it.
    fn clear(&self, lap: u32) {
        let word = self.0.load(Ordering::Acquire);
        if age(word, lap) == Age::Current {
            // Losing this race to a concurrent writer of the same lap is
            // the same as that write landing just after the clear.
            let _ =
                self.0
                    .compare_exchange(word, pack(lap, 0), Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

/// Bucket `b` of a ring of `ring` slots: its slot and its lap tag (modulo
/// 2^32: the truncation is the design).
#[inline]
pub(crate) fn locate(b: u64, ring: usize) -> (usize, u32) {
    ((b % ring as u64) as usize, (b / ring as u64) as u32)
}

/// The slots of the `len` buckets ending at bucket `last` (none before time
/// zero), as contiguous runs: one ending at `last`'s slot, of `last`'s lap,
/// and, when the buckets wrap around the ring, one at its end, a lap older.
#[inline]
pub(crate) fn runs(last: u64, len: u64, ring: usize) -> (Range<usize>, Range<usize>, u32) {
    let n = len.min(last.saturating_add(1)) as usize;
    let (end, lap) = locate(last, ring);
    if n <= end + 1 {
        (end + 1 - n..end + 1, ring..ring, lap)
    } else {
        (0..end + 1, ring - (n - end - 1)..ring, lap)
    }
}

impl Default for Bucket {
    fn default() -> Bucket {
        Bucket::new()
    }
}

/// A bucket's value and the window's sum, both read after a write.
// `repr(C)`: cbindgen makes C's `sds_tally` of it.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Tally {
    /// The value of the bucket written to.
    pub bucket: u64,
    /// The sum of the window ending at that bucket.
    pub total: u64,
}

/// How a slot's lap relates to the lap a reader or writer expects.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Age {
    /// The slot holds the expected bucket.
    Current,
    /// The slot holds an older lap (or was never written): it reads as zero.
    Stale,
    /// The slot holds a newer lap: the expected bucket is gone.
    Newer,
}

#[inline]
fn age(word: u64, lap: u32) -> Age {
    let held = (word >> 32) as u32;
    if held == lap {
        Age::Current
    } else if word == 0 || (held.wrapping_sub(lap) as i32) < 0 {
        // An all-zero word is a never-written slot: stale for any lap, so a
        // fresh ring works at any absolute time, not only near t = 0.
        Age::Stale
    } else {
        Age::Newer
    }
}

/// Whether a write of `lap` that replaced `word` threw away a count of a lap
/// other than the one just before (the usual reuse of a slot): a clock step,
/// an outlier, or a slot idle for more than a ring.
#[inline]
pub(crate) fn discarded_unusual(word: u64, lap: u32) -> bool {
    let held = (word >> 32) as u32;
    word & COUNT_MASK != 0 && held != lap && held != lap.wrapping_sub(1)
}

#[inline]
fn pack(lap: u32, count: u32) -> u64 {
    ((lap as u64) << 32) | count as u64
}

/// Sum of the counts of the buckets in `run` that belong to `lap`.
#[inline]
fn sum_lap(run: &[Bucket], lap: u32) -> u64 {
    run.iter().map(|b| b.count_in(lap)).sum()
}

#[inline]
fn saturate(v: u64) -> u32 {
    if v > COUNT_MASK {
        u32::MAX
    } else {
        v as u32
    }
}

/// A sliding window over a ring of epoch-tagged buckets.
///
/// `S` is the storage: a fixed array for the core's own windows
/// (`[Bucket; 30]` for SDS), or any `AsRef<[Bucket]>` a binding owns. The
/// ring's length is the storage's length. All operations take the time in
/// milliseconds; none allocates, blocks or panics.
#[derive(Debug)]
pub struct SlidingWindow<S = [Bucket; 30]> {
    bucket_ms: u64,
    buckets: u64,
    /// The bucket index last computed: a hint that spares the division
    /// while time stays in one bucket. Any value is safe: it is checked.
    recent: AtomicU64,
    slots: S,
}

/// SDS's counters: 1 s buckets, a 10 s window, a ring of 30 (three cycles).
pub type SdsCounterWindow = SlidingWindow<[Bucket; 30]>;
/// SDS's max-concurrency statistic: one 10 s bucket per cycle, a ring of 3.
pub type SdsMaxConcurrencyWindow = SlidingWindow<[Bucket; 3]>;
/// Sentinel's second view: 2 buckets of 500 ms; the ring keeps one more window.
pub type SentinelSecondWindow = SlidingWindow<[Bucket; 4]>;
/// Sentinel's minute view: 60 buckets of 1 s; the ring keeps one more window.
pub type SentinelMinuteWindow = SlidingWindow<[Bucket; 120]>;
/// Hystrix's rolling number: 10 buckets of 1 s; the ring keeps one more window.
pub type HystrixWindow = SlidingWindow<[Bucket; 20]>;

/// Checks window parameters (a ring of `ring` buckets): lets a binding refuse
/// them before it allocates the storage.
pub const fn check_parameters(bucket_ms: u64, buckets: usize, ring: usize) -> Result<(), Error> {
    if bucket_ms == 0 {
        Err(Error::InvalidWindow(WindowRule::ZeroBucketWidth))
    } else if buckets == 0 {
        Err(Error::InvalidWindow(WindowRule::ZeroBuckets))
    } else if ring > MAX_RING {
        Err(Error::InvalidWindow(WindowRule::RingTooLong))
    } else if ring / 2 < buckets {
        Err(Error::InvalidWindow(WindowRule::RingTooShort))
    } else {
        Ok(())
    }
}

macro_rules! named_window {
    ($(#[$doc:meta])* $name:ident, $ring:literal, $bucket_ms:literal, $buckets:literal) => {
        impl SlidingWindow<[Bucket; $ring]> {
            const_fn! {
                $(#[$doc])*
                pub fn $name() -> Self {
                    SlidingWindow { bucket_ms: $bucket_ms, buckets: $buckets, recent: AtomicU64::new(0), slots: empty_ring() }
                }
            }
        }
    };
}

named_window!(
    /// SDS counters: 1000 ms × 10 buckets, ring 30.
    sds_counter, 30, 1000, 10
);
named_window!(
    /// SDS max-concurrency: 10 000 ms × 1 bucket, ring 3.
    sds_max_concurrency, 3, 10_000, 1
);
named_window!(
    /// Sentinel's second: 500 ms × 2 buckets, ring 4.
    sentinel_second, 4, 500, 2
);
named_window!(
    /// Sentinel's minute: 1000 ms × 60 buckets, ring 120.
    sentinel_minute, 120, 1000, 60
);
named_window!(
    /// Hystrix's rolling number: 1000 ms × 10 buckets, ring 20.
    hystrix, 20, 1000, 10
);

#[cfg(not(loom))]
const fn empty_ring<const N: usize>() -> [Bucket; N] {
    [const { Bucket::new() }; N]
}

#[cfg(loom)]
fn empty_ring<const N: usize>() -> [Bucket; N] {
    core::array::from_fn(|_| Bucket::new())
}

impl<const N: usize> SlidingWindow<[Bucket; N]> {
    const_fn! {
        /// A window of `buckets` buckets of `bucket_ms` over a ring of `N`.
        /// Needs `bucket_ms >= 1`, `buckets >= 1` and `N >= 2 * buckets`.
        pub fn new(bucket_ms: u64, buckets: usize) -> Result<Self, Error> {
            match check_parameters(bucket_ms, buckets, N) {
                Ok(()) => Ok(SlidingWindow { bucket_ms, buckets: buckets as u64, recent: AtomicU64::new(0), slots: empty_ring() }),
                Err(e) => Err(e),
            }
        }
    }
}

impl<S: AsRef<[Bucket]>> SlidingWindow<S> {
    /// A window over caller-owned storage, whose length is the ring's. The
    /// storage should be fresh ([`Bucket::new`]); existing contents are kept.
    pub fn with_storage(bucket_ms: u64, buckets: usize, storage: S) -> Result<Self, Error> {
        check_parameters(bucket_ms, buckets, storage.as_ref().len())?;
        Ok(SlidingWindow {
            bucket_ms,
            buckets: buckets as u64,
            recent: AtomicU64::new(0),
            slots: storage,
        })
    }

    /// Width of one bucket in ms.
    pub fn bucket_ms(&self) -> u64 {
        self.bucket_ms
    }

    /// Buckets per window (`W`).
    pub fn buckets(&self) -> usize {
        self.buckets as usize
    }

    /// Buckets in the ring.
    pub fn ring(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// The index of the bucket holding `now_ms`.
    #[inline]
    pub fn bucket_index(&self, now_ms: u64) -> u64 {
        // A 64-bit division costs more than the rest of an increment; most
        // calls fall in the bucket of the previous one, which a multiply
        // confirms (b * bucket_ms <= now for any b this stored, no overflow).
        let hint = self.recent.load(Ordering::Relaxed);
        if now_ms.wrapping_sub(hint.wrapping_mul(self.bucket_ms)) < self.bucket_ms {
            return hint;
        }
        let b = now_ms / self.bucket_ms;
        self.recent.store(b, Ordering::Relaxed);
        b
    }

    #[inline]
    fn locate(&self, b: u64) -> (&Bucket, u32) {
        let slots = self.slots.as_ref();
        let (slot, lap) = locate(b, slots.len());
        (&slots[slot], lap)
    }

    #[inline]
    fn read(&self, b: u64) -> u64 {
        let (slot, lap) = self.locate(b);
        slot.count_in(lap)
    }

    /// Writes bucket `b` as the present: a slot holding a newer lap is
    /// restarted (see the module doc on clock steps).
    #[inline]
    fn update(&self, b: u64, f: impl Fn(u32) -> u32) -> u32 {
        let (slot, lap) = self.locate(b);
        slot.update(lap, true, f).map_or(0, |(v, _)| v)
    }

    /// Sum of the `len` buckets ending at bucket `last`.
    #[inline]
    fn sum_ending_at(&self, last: u64, len: u64) -> u64 {
        let slots = self.slots.as_ref();
        let (newer, older, lap) = runs(last, len, slots.len());
        sum_lap(&slots[newer], lap) + sum_lap(&slots[older], lap.wrapping_sub(1))
    }

    /// Adds one at `now_ms`; see [`SlidingWindow::add`].
    #[inline]
    pub fn increment(&self, now_ms: u64) -> Tally {
        self.add(now_ms, 1)
    }

    /// Adds `n` to the bucket of `now_ms` (saturating at `u32::MAX`) and
    /// returns that bucket's value and the sliding sum ending there. `now_ms`
    /// is the present: a slot that holds a newer lap (the clock stepped back,
    /// or an outlier wrote it) is restarted.
    #[inline]
    pub fn add(&self, now_ms: u64, n: u64) -> Tally {
        let b = self.bucket_index(now_ms);
        let bucket = u64::from(self.update(b, |c| saturate(u64::from(c).saturating_add(n))));
        Tally {
            bucket,
            total: self.sum_ending_at(b, self.buckets),
        }
    }

    /// Adds `n` for an event of time `at_ms` recorded at the present `now_ms`
    /// (an exception counted at its request's start): into `at_ms`'s bucket
    /// while the ring ending at `now_ms` holds it and no newer lap took its
    /// slot, else into `now_ms`'s bucket, so it is never dropped. Returns the
    /// value of the bucket written. An `at_ms` after `now_ms` (the clock went
    /// back in between) counts at `now_ms`.
    pub fn add_at(&self, at_ms: u64, now_ms: u64, n: u64) -> u64 {
        u64::from(self.place_late(at_ms, now_ms, n).1)
    }

    /// [`SlidingWindow::add_at`], returning the value of the bucket written
    /// and the sliding sum of the window ending at that bucket: the window
    /// of `at_ms` when the write landed there (what SDS's
    /// `incrementAndGet(at).getSlidingCycleValue()` returns for a late
    /// exception), else the window of `now_ms`.
    pub fn add_at_tally(&self, at_ms: u64, now_ms: u64, n: u64) -> Tally {
        let (b, bucket) = self.place_late(at_ms, now_ms, n);
        Tally {
            bucket: u64::from(bucket),
            total: self.sum_ending_at(b, self.buckets),
        }
    }

    /// Adds `n` for an event of `at_ms` recorded at `now_ms` (the rule of
    /// [`SlidingWindow::add_at`]): the index of the bucket written and its value.
    #[inline]
    fn place_late(&self, at_ms: u64, now_ms: u64, n: u64) -> (u64, u32) {
        let add = |c: u32| saturate(u64::from(c).saturating_add(n));
        let (at, now) = (self.bucket_index(at_ms), self.bucket_index(now_ms));
        if at <= now && now - at < self.ring() as u64 {
            let (slot, lap) = self.locate(at);
            if let Some((v, _)) = slot.update(lap, false, add) {
                return (at, v);
            }
        }
        (now, self.update(now, add))
    }

    /// The sliding sum: the `W` buckets ending at `now_ms`'s bucket, the
    /// current, partly elapsed bucket included.
    #[inline]
    pub fn sum(&self, now_ms: u64) -> u64 {
        self.sum_ending_at(self.bucket_index(now_ms), self.buckets)
    }

    /// The value of `now_ms`'s bucket.
    #[inline]
    pub fn bucket(&self, now_ms: u64) -> u64 {
        self.read(self.bucket_index(now_ms))
    }

    /// The sum of the aligned cycle of `W` buckets before the one holding
    /// `now_ms` (cycle `k` is buckets `k*W .. (k+1)*W`); 0 in the first cycle.
    pub fn last_whole_cycle(&self, now_ms: u64) -> u64 {
        let cycle = self.bucket_index(now_ms) / self.buckets;
        if cycle == 0 {
            return 0;
        }
        self.sum_ending_at(cycle * self.buckets - 1, self.buckets)
    }

    /// Zeroes the aligned cycle after the one holding `now_ms`, as SDS's
    /// cleanup thread does. Stale slots already read as zero and are left
    /// alone, so a late write into an older bucket is not lost to the clear;
    /// slots of a newer lap are never touched.
    pub fn clear_next_cycle(&self, now_ms: u64) {
        let first = (self.bucket_index(now_ms) / self.buckets + 1) * self.buckets;
        for b in first..first.saturating_add(self.buckets) {
            let (slot, lap) = self.locate(b);
            slot.clear(lap);
        }
    }

    /// Sets the bucket of `now_ms` to `value` (saturating at `u32::MAX`);
    /// `now_ms` is the present, as for [`SlidingWindow::add`].
    pub fn set(&self, now_ms: u64, value: u64) {
        let v = saturate(value);
        self.update(self.bucket_index(now_ms), |_| v);
    }

    /// Raises the bucket of `now_ms` to at least `value` and returns the
    /// bucket's value; `now_ms` is the present, as for [`SlidingWindow::add`].
    pub fn fetch_max(&self, now_ms: u64, value: u64) -> u64 {
        let v = saturate(value);
        u64::from(self.update(self.bucket_index(now_ms), |c| c.max(v)))
    }

    /// Whether the ring ending at `now_ms`'s bucket still holds the bucket of
    /// `at_ms`.
    pub fn holds(&self, at_ms: u64, now_ms: u64) -> bool {
        let (at, now) = (self.bucket_index(at_ms), self.bucket_index(now_ms));
        now.abs_diff(at) < self.ring() as u64
    }
}
