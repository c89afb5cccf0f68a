//! `Peak`: SDS's max-concurrency statistic, the most requests in flight in
//! each aligned 10 s cycle, over a ring of three cycles. The shape is a
//! constant, not stored: a point holds only its buckets, so memory shared
//! between processes never carries a width a corrupt file could make zero.
//! The buckets are [`crate::SlidingWindow`]'s (lap-tagged words), and it reads
//! exactly like `SlidingWindow::sds_max_concurrency()`.

use crate::counters::{self, BUCKET_MS};
use crate::sync::const_fn;
use crate::window::{locate, Bucket};

/// One cycle: one bucket of 10 s.
pub(crate) const CYCLE_MS: u64 = 10_000;
/// Cycles in the ring.
pub(crate) const RING: usize = 3;
const SECONDS_PER_CYCLE: usize = (CYCLE_MS / BUCKET_MS) as usize;
const _: () = assert!(SECONDS_PER_CYCLE * RING == counters::RING);

/// `repr(C)`: three lap-tagged words, 24 bytes.
#[repr(C)]
pub(crate) struct Peak {
    ring: [Bucket; RING],
}

impl Peak {
    const_fn! {
        pub(crate) fn new() -> Peak {
            Peak { ring: [Bucket::new(), Bucket::new(), Bucket::new()] }
        }
    }

    /// Raises the cycle of a second (the present) to at least `value`,
    /// given that second's slot and lap in the counters' ring: that ring of
    /// 30 s is this ring's three cycles of 10 s, so the lap is the same and
    /// the cycle's slot is a tenth of the second's (no division of the time
    /// again).
    #[inline]
    pub(crate) fn raise(&self, second_slot: usize, lap: u32, value: u64) {
        let v = u32::try_from(value).unwrap_or(u32::MAX);
        let slot = second_slot / SECONDS_PER_CYCLE;
        let Some(bucket) = self.ring.get(slot) else {
            return;
        };
        bucket.update(lap, true, |c| c.max(v));
    }

    /// [`Peak::raise`] at `now_ms`.
    #[cfg(test)]
    fn raise_at(&self, now_ms: u64, value: u64) {
        let (slot, lap) = locate(now_ms / BUCKET_MS, counters::RING);
        self.raise(slot, lap, value);
    }

    /// The peak of the cycle before the one holding `now_ms`; 0 in the first.
    pub(crate) fn last_whole_cycle(&self, now_ms: u64) -> u64 {
        match (now_ms / CYCLE_MS).checked_sub(1) {
            Some(last) => {
                let (slot, lap) = locate(last, RING);
                self.ring[slot].count_in(lap)
            }
            None => 0,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::window::SlidingWindow;

    #[test]
    fn reads_like_the_sds_max_concurrency_window() {
        let peak = Peak::new();
        let window = SlidingWindow::sds_max_concurrency();
        let writes = [
            (5_000, 3),
            (9_999, 7),
            (10_000, 2),
            (35_000, 9),
            (31_000, 4),
        ];
        for (at, v) in writes {
            peak.raise_at(at, v);
            window.fetch_max(at, v);
        }
        peak.raise_at(200_000, u64::MAX);
        window.fetch_max(200_000, u64::MAX);
        for now in [0, 9_999, 10_000, 19_999, 20_000, 40_000, 45_000, 210_000] {
            assert_eq!(
                peak.last_whole_cycle(now),
                window.last_whole_cycle(now),
                "at {now}"
            );
        }
        assert_eq!(peak.last_whole_cycle(40_000), 9);
        assert_eq!(peak.last_whole_cycle(210_000), u32::MAX as u64);
    }
}
