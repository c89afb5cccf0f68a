//! `Remote`: a cluster point's counts of the *other* instances of a service,
//! per 1 s bucket, as a syncer (the `sds-cluster` crate) last read them from
//! the shared store. A decision of a cluster point adds them to the local
//! sums; a point that is not a cluster point never reads them.
//!
//! Only the syncer writes here. It stores each second of the window it read
//! ([`Remote::store`]), then publishes the window's sums for the current
//! second and the next ([`Remote::publish`]), each sum tagged with its second
//! in the same word. A decision reads those four words when the tag is its
//! own second (the usual case: the syncer publishes every period, even while
//! the store is unreachable), else walks the ring. The ring's buckets are
//! lap-tagged like the local ones, so when the syncer stops, every remote
//! count leaves the window on its own when its second does.

use crate::counters::{BUCKET_MS, WINDOW};
use crate::sum_cache::KINDS;
use crate::sync::const_fn;
use crate::window::{locate, Bucket};

/// Seconds of remote counts kept: the window, the next second (instances
/// whose clocks run a little ahead), and one spare so that a second stored
/// ahead never takes the slot of a second still in the window.
pub const REMOTE_RING: usize = WINDOW as usize + 2;

/// Seconds in a point's sliding window (SDS: 10).
pub const WINDOW_SECONDS: u64 = WINDOW;

/// Seconds a point's ring of local counts holds (SDS: 30): the oldest
/// second whose counts a syncer can still read and push.
pub const RING_SECONDS: u64 = crate::counters::RING as u64;

/// Milliseconds in a bucket (one second).
pub const SECOND_MS: u64 = BUCKET_MS;

/// One second's counts of a point: visits (which are also the token
/// bucket's takes of that second), downgrades, exceptions and timeouts.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SecondCounts {
    /// Visits (token takes).
    pub visit: u64,
    /// Downgrades.
    pub downgrade: u64,
    /// Exceptions, at their requests' start second.
    pub exception: u64,
    /// Timeouts, at their requests' start second.
    pub timeout: u64,
}

impl SecondCounts {
    pub(crate) const fn from_sums(s: [u64; KINDS]) -> SecondCounts {
        SecondCounts {
            visit: s[0],
            downgrade: s[1],
            exception: s[2],
            timeout: s[3],
        }
    }

    pub(crate) const fn sums(&self) -> [u64; KINDS] {
        [self.visit, self.downgrade, self.exception, self.timeout]
    }
}

/// `repr(C)`: 12 × 4 lap-tagged words, then 2 × 4 tagged window sums; 448
/// bytes, all zero when nothing was ever stored.
#[repr(C)]
pub(crate) struct Remote {
    seconds: [[Bucket; KINDS]; REMOTE_RING],
    /// `window[s % 2][k]`: the sum of counter `k` over the window ending at
    /// second `s`, tagged with `s` (mod 2^32) as a bucket's lap.
    window: [[Bucket; KINDS]; 2],
}

#[cfg(not(loom))]
const fn buckets<const N: usize>() -> [[Bucket; KINDS]; N] {
    [const { [const { Bucket::new() }; KINDS] }; N]
}

#[cfg(loom)]
fn buckets<const N: usize>() -> [[Bucket; KINDS]; N] {
    core::array::from_fn(|_| core::array::from_fn(|_| Bucket::new()))
}

impl Remote {
    const_fn! {
        pub(crate) fn new() -> Remote {
            Remote { seconds: buckets(), window: buckets() }
        }
    }

    /// The others' counts in second `b`.
    pub(crate) fn second(&self, b: u64) -> [u64; KINDS] {
        let (slot, lap) = locate(b, REMOTE_RING);
        let s = &self.seconds[slot];
        [0, 1, 2, 3].map(|k| s[k].count_in(lap))
    }

    /// The others' visits in second `b` (the token bucket's remote takes).
    #[inline]
    pub(crate) fn visits(&self, b: u64) -> u64 {
        let (slot, lap) = locate(b, REMOTE_RING);
        self.seconds[slot][0].count_in(lap)
    }

    /// The others' sums over the window ending at second `b`: the published
    /// sums when they are `b`'s, else a walk of the ring.
    #[inline]
    pub(crate) fn sums(&self, b: u64) -> [u64; KINDS] {
        let words = &self.window[(b & 1) as usize];
        let tag = b as u32;
        match [0, 1, 2, 3].map(|k| words[k].count_if(tag)) {
            [Some(v), Some(d), Some(e), Some(t)] => [v, d, e, t],
            _ => self.walk(b),
        }
    }

    /// Stores the others' counts of second `b`, replacing what was there.
    pub(crate) fn store(&self, b: u64, counts: [u64; KINDS]) {
        let (slot, lap) = locate(b, REMOTE_RING);
        for (bucket, v) in self.seconds[slot].iter().zip(counts) {
            bucket.update(lap, true, |_| saturate(v));
        }
    }

    /// Publishes the window sums of second `b` and of `b + 1`.
    pub(crate) fn publish(&self, b: u64) {
        for s in [b, b + 1] {
            let sums = self.walk(s);
            for (word, v) in self.window[(s & 1) as usize].iter().zip(sums) {
                word.update(s as u32, true, |_| saturate(v));
            }
        }
    }

    fn walk(&self, b: u64) -> [u64; KINDS] {
        let mut sums = [0; KINDS];
        for s in b.saturating_sub(WINDOW - 1)..=b {
            for (sum, v) in sums.iter_mut().zip(self.second(s)) {
                *sum += v;
            }
        }
        sums
    }
}

fn saturate(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 1_700_000_000;

    #[test]
    fn published_sums_and_the_walk_agree() {
        let r = Remote::new();
        for (i, b) in (B - 9..=B + 1).enumerate() {
            r.store(b, [i as u64 + 1, 1, 0, 2]);
        }
        r.publish(B);
        assert_eq!(r.sums(B), [55, 10, 0, 20]);
        assert_eq!(r.sums(B), r.walk(B));
        // The next second: B - 9 left, B + 1 (an instance ahead) came in.
        assert_eq!(r.sums(B + 1), [65, 10, 0, 20]);
        assert_eq!(r.sums(B + 1), r.walk(B + 1));
        assert_eq!(r.visits(B + 1), 11);
    }

    #[test]
    fn stale_counts_leave_the_window_with_their_seconds() {
        let r = Remote::new();
        r.store(B, [7, 0, 1, 0]);
        r.publish(B);
        // No publish since: the tags miss and the walk ages counts out.
        assert_eq!(r.sums(B + 2), [7, 0, 1, 0]);
        assert_eq!(r.sums(B + 9), [7, 0, 1, 0]);
        assert_eq!(r.sums(B + 10), [0; KINDS]);
        assert_eq!(r.visits(B + 12), 0, "the slot of B, a lap later");
    }

    #[test]
    fn a_store_replaces_and_saturates() {
        let r = Remote::new();
        r.store(B, [3, 3, 3, 3]);
        r.store(B, [1, 0, u64::MAX, 2]);
        assert_eq!(r.second(B), [1, 0, u32::MAX as u64, 2]);
    }
}
