//! `Peak`: SDS's max-concurrency statistic, the most requests in flight in
//! each aligned 10 s cycle, over a ring of three cycles. The shape is a
//! constant, not stored: a point holds only its buckets, so memory shared
//! between processes never carries a width a corrupt file could make zero.
//! The buckets are [`crate::SlidingWindow`]'s (lap-tagged words), and it reads
//! exactly like `SlidingWindow::sds_max_concurrency()`.

use crate::sync::const_fn;
use crate::window::{locate, Bucket};

/// One cycle: one bucket of 10 s.
pub(crate) const CYCLE_MS: u64 = 10_000;
/// Cycles in the ring.
pub(crate) const RING: usize = 3;

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

    /// Raises the cycle of `now_ms` (the present) to at least `value`.
    #[inline]
    pub(crate) fn raise(&self, now_ms: u64, value: u64) {
        let v = u32::try_from(value).unwrap_or(u32::MAX);
        let (slot, lap) = locate(now_ms / CYCLE_MS, RING);
        self.ring[slot].update(lap, true, |c| c.max(v));
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
            peak.raise(at, v);
            window.fetch_max(at, v);
        }
        peak.raise(200_000, u64::MAX);
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
