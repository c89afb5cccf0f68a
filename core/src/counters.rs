//! A point's four event counters (visit, downgrade, exception, timeout) in
//! one ring of 1 s buckets: SDS's counter window (1000 ms × 10, ring 30) laid
//! out so that one second's four buckets sit side by side. A decision reads
//! the sums it needs in one walk over the window instead of one per counter,
//! and the constant bucket width makes the bucket index a multiplication.
//! Each bucket is still lap-tagged on its own, exactly like
//! [`crate::SlidingWindow`]'s (the same `Bucket` code).

use crate::sync::const_fn;
use crate::window::{locate, runs, Bucket};

const BUCKET_MS: u64 = 1000;
const WINDOW: u64 = 10;
const RING: usize = 30;
const KINDS: usize = 4;

/// Which counter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    Visit = 0,
    Downgrade = 1,
    Exception = 2,
    Timeout = 3,
}

/// Sums of the four counters, indexed by [`Counter`].
pub(crate) type Sums = [u64; KINDS];

pub(crate) struct Counters {
    seconds: [[Bucket; KINDS]; RING],
}

#[cfg(not(loom))]
const fn ring() -> [[Bucket; KINDS]; RING] {
    [const { [const { Bucket::new() }; KINDS] }; RING]
}

#[cfg(loom)]
fn ring() -> [[Bucket; KINDS]; RING] {
    core::array::from_fn(|_| core::array::from_fn(|_| Bucket::new()))
}

impl Counters {
    const_fn! {
        pub(crate) fn new() -> Counters {
            Counters { seconds: ring() }
        }
    }

    /// The 1 s bucket of `now_ms`.
    #[inline]
    pub(crate) const fn bucket_of(now_ms: u64) -> u64 {
        now_ms / BUCKET_MS
    }

    /// Whether the ring ending at bucket `now` still holds bucket `at`.
    #[inline]
    pub(crate) fn holds(at: u64, now: u64) -> bool {
        now.abs_diff(at) < RING as u64
    }

    /// Adds `n` to `counter` in bucket `b`: its new value, or `None` when
    /// the ring moved past `b`.
    #[inline]
    pub(crate) fn add(&self, counter: Counter, b: u64, n: u32) -> Option<u64> {
        let (slot, lap) = locate(b, RING);
        self.seconds[slot][counter as usize]
            .update(lap, |c| c.saturating_add(n))
            .map(u64::from)
    }

    /// The sliding sums (10 buckets ending at `b`) of the counters `wanted`
    /// selects, in one walk; the others read 0.
    #[inline]
    pub(crate) fn sums(&self, b: u64, wanted: [bool; KINDS]) -> Sums {
        self.sums_ending_at(b, wanted)
    }

    /// The sums of the aligned 10 s cycle before the one holding bucket `b`.
    pub(crate) fn last_whole_cycle(&self, b: u64) -> Sums {
        match b / WINDOW {
            0 => [0; KINDS],
            cycle => self.sums_ending_at(cycle * WINDOW - 1, [true; KINDS]),
        }
    }

    /// Dispatches to a walk compiled for exactly the counters wanted, so the
    /// walk loads only those and tests nothing per bucket.
    #[inline]
    fn sums_ending_at(&self, last: u64, wanted: [bool; KINDS]) -> Sums {
        let mask = wanted
            .iter()
            .enumerate()
            .fold(0u8, |m, (i, &w)| m | ((w as u8) << i));
        macro_rules! walks {
            ($($m:literal)*) => {
                match mask {
                    $($m => self.walk::<$m>(last),)*
                    _ => [0; KINDS],
                }
            };
        }
        walks!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    }

    #[inline]
    fn walk<const MASK: u8>(&self, last: u64) -> Sums {
        let (newer, older, lap) = runs(last, WINDOW, RING);
        let mut sums = [0; KINDS];
        for (run, lap) in [(newer, lap), (older, lap.wrapping_sub(1))] {
            for second in &self.seconds[run] {
                for (kind, sum) in sums.iter_mut().enumerate() {
                    if MASK & (1 << kind) != 0 {
                        *sum += second[kind].count_in(lap);
                    }
                }
            }
        }
        sums
    }
}
