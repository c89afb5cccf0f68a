//! A point's four event counters (visit, downgrade, exception, timeout) in
//! one ring of 1 s buckets: SDS's counter window (1000 ms × 10, ring 30) laid
//! out so that one second's four buckets sit side by side. A decision reads
//! the nine completed seconds' sums from a cache (sum_cache.rs) and adds the
//! current second, and the constant bucket width makes the bucket index a
//! multiplication. Each bucket is still lap-tagged on its own, exactly like
//! [`crate::SlidingWindow`]'s (the same `Bucket` code).

use crate::sum_cache::{SumCache, COMPLETED, KINDS};
use crate::sync::{const_fn, spin, zeroed, AtomicU32, AtomicU64, Ordering};
use crate::window::{discarded_unusual, locate, runs, Bucket, COUNT_MASK};

pub(crate) const BUCKET_MS: u64 = 1000;
pub(crate) const WINDOW: u64 = COMPLETED + 1;
pub(crate) const RING: usize = 30;

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

/// A second of the ring: its number, its lap and its four buckets.
#[derive(Copy, Clone)]
pub(crate) struct Place<'a> {
    pub(crate) b: u64,
    /// The slot in the ring of `RING` seconds.
    pub(crate) slot: usize,
    pub(crate) lap: u32,
    buckets: &'a [Bucket; KINDS],
}

/// `repr(C)`: 30 × 4 lap-tagged words, the cache, then the retired
/// counts and their guard; 1 064 bytes.
///
/// # Totals
///
/// A bucket's count leaves the ring only when a write of a later lap
/// restarts its slot, in the compare-and-swap that returns the word it
/// replaced: that writer adds the count to `retired`. So every event ever
/// counted is in exactly one place, a slot or `retired`, and
/// [`Counters::totals`] (their sum) only grows, at the cost of a few more
/// atomic adds per counter and second, never per event.
///
/// Between the swap and the add the count is in neither place, so such a
/// writer announces itself: `retiring` counts writers between their
/// announcement (before the swap) and the add, and `retire_epoch` the adds
/// done. A reader sums only while no writer is between the two, and sums
/// again when one passed meanwhile: any two reads, in any processes, are in
/// order. A writer killed between the two leaves `retiring` raised: readers
/// then sum after a bounded wait, and that bucket's count is lost to the
/// totals (one reset for a scraper, as a process restart).
#[repr(C)]
pub(crate) struct Counters {
    seconds: [[Bucket; KINDS]; RING],
    completed: SumCache,
    retired: [AtomicU64; KINDS],
    retiring: AtomicU32,
    retire_epoch: AtomicU32,
}

/// How often [`Counters::totals`] looks for a moment with no writer
/// between its swap and its add before it sums anyway (a few µs: a live
/// writer is there for a few instructions, unless the OS stops it there).
const TOTALS_TRIES: u32 = 4096;

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
            Counters {
                seconds: ring(),
                completed: SumCache::new(),
                retired: zeroed(),
                retiring: AtomicU32::new(0),
                retire_epoch: AtomicU32::new(0),
            }
        }
    }

    /// The 1 s bucket of `now_ms`.
    #[inline]
    pub(crate) const fn bucket_of(now_ms: u64) -> u64 {
        now_ms / BUCKET_MS
    }

    /// Second `b` and its four buckets: worked out once per decision, for
    /// the visit's write and the sums' read alike.
    #[inline]
    pub(crate) fn place(&self, b: u64) -> Place<'_> {
        let (slot, lap) = locate(b, RING);
        Place {
            b,
            slot,
            lap,
            buckets: &self.seconds[slot],
        }
    }

    /// Adds `n` to `counter` in second `at`, the present: a slot holding a
    /// newer lap (a clock step back, an outlier) is restarted. The new value.
    #[inline]
    pub(crate) fn add(&self, counter: Counter, at: Place<'_>, n: u32) -> u64 {
        self.write(counter, at, true, n).unwrap_or(0)
    }

    /// Counts an event of bucket `at` recorded in bucket `now` (an exception
    /// counted at its request's start second): in `at` while the ring holds
    /// it and no newer lap took its slot, else in `now`, so it is never lost.
    pub(crate) fn add_late(&self, counter: Counter, at: u64, now: u64) {
        let held = at <= now && now - at < RING as u64;
        if !(held && self.write(counter, self.place(at), false, 1).is_some()) {
            self.add(counter, self.place(now), 1);
        }
    }

    #[inline]
    fn write(&self, counter: Counter, at: Place<'_>, restart_newer: bool, n: u32) -> Option<u64> {
        let mut announced = false;
        let written = at.buckets[counter as usize].update_guarded(
            at.lap,
            restart_newer,
            |c| c.saturating_add(n),
            || self.announce(&mut announced),
        );
        let invalidated = announced && self.retire(counter, written.map_or(0, |(_, w)| w), at.lap);
        let (value, _) = written?;
        if !invalidated {
            self.completed.wrote(at.b);
        }
        Some(u64::from(value))
    }

    /// Tells readers of the totals that a count is about to leave the
    /// ring (once per write).
    #[cold]
    #[inline(never)]
    fn announce(&self, announced: &mut bool) {
        if !*announced {
            self.retiring.fetch_add(1, Ordering::SeqCst);
            *announced = true;
        }
    }

    /// Ends an announced write of `lap` that replaced `replaced` (0: none):
    /// keeps the count it took out of the ring, if any, then lets readers
    /// sum again. Whether the cache was invalidated.
    #[cold]
    #[inline(never)]
    fn retire(&self, counter: Counter, replaced: u64, lap: u32) -> bool {
        if (replaced >> 32) as u32 != lap && replaced & COUNT_MASK != 0 {
            self.retired[counter as usize].fetch_add(replaced & COUNT_MASK, Ordering::SeqCst);
        }
        self.retire_epoch.fetch_add(1, Ordering::SeqCst);
        self.retiring.fetch_sub(1, Ordering::SeqCst);
        if discarded_unusual(replaced, lap) {
            // A step or an outlier may have thrown away a second the cache
            // holds: it is rebuilt by the next decision.
            self.completed.invalidate();
            return true;
        }
        false
    }

    /// Every event counted since the point was new, per counter: the
    /// retired counts and every slot's, whatever its lap, summed while no
    /// write is between taking a count out of the ring and keeping it.
    pub(crate) fn totals(&self) -> Sums {
        // A writer died announced (or writers never pause): sum as it is.
        self.settled_totals(TOTALS_TRIES)
            .unwrap_or_else(|| self.sum_everything())
    }

    /// [`Counters::totals`] if a moment with no announced writer came
    /// within `tries`.
    pub(crate) fn settled_totals(&self, tries: u32) -> Option<Sums> {
        for _ in 0..tries {
            let epoch = self.retire_epoch.load(Ordering::SeqCst);
            if self.retiring.load(Ordering::SeqCst) == 0 {
                let sums = self.sum_everything();
                if self.retiring.load(Ordering::SeqCst) == 0
                    && self.retire_epoch.load(Ordering::SeqCst) == epoch
                {
                    return Some(sums);
                }
            }
            spin();
        }
        None
    }

    fn sum_everything(&self) -> Sums {
        let mut totals = [0; KINDS];
        for (k, total) in totals.iter_mut().enumerate() {
            *total = self.retired[k].load(Ordering::SeqCst)
                + self.seconds.iter().map(|s| s[k].raw_count()).sum::<u64>();
        }
        totals
    }

    /// The sliding sums (10 buckets ending at `b`): the nine completed ones
    /// from the cache when it holds them, and bucket `b` itself.
    pub(crate) fn sums(&self, b: u64) -> Sums {
        self.sums_at(self.place(b))
    }

    /// [`Counters::sums`] of a second already placed: inlined into the
    /// decision, with the rebuild of the cache out of line.
    #[inline(always)]
    pub(crate) fn sums_at(&self, at: Place<'_>) -> Sums {
        let completed = match self.completed.get(at.b) {
            Some(sums) => sums,
            None => self.rebuild(at.b),
        };
        let now = at.buckets;
        [0, 1, 2, 3].map(|k| completed[k] + now[k].count_in(at.lap))
    }

    #[cold]
    #[inline(never)]
    fn rebuild(&self, b: u64) -> Sums {
        self.completed.rebuild(b, || {
            b.checked_sub(1)
                .map_or([0; KINDS], |last| self.walk(last, COMPLETED))
        })
    }

    /// The counts of second `b` alone (0 when the ring no longer holds it).
    pub(crate) fn second(&self, b: u64) -> Sums {
        let (slot, lap) = locate(b, RING);
        let s = &self.seconds[slot];
        [0, 1, 2, 3].map(|k| s[k].count_in(lap))
    }

    /// The sums of the aligned 10 s cycle before the one holding bucket `b`.
    pub(crate) fn last_whole_cycle(&self, b: u64) -> Sums {
        match b / WINDOW {
            0 => [0; KINDS],
            cycle => self.walk(cycle * WINDOW - 1, WINDOW),
        }
    }

    #[cfg(test)]
    fn completed_epoch(&self) -> u64 {
        self.completed.epoch()
    }

    /// The sums of the `len` buckets ending at `last`, read from the ring.
    fn walk(&self, last: u64, len: u64) -> Sums {
        let (newer, older, lap) = runs(last, len, RING);
        let mut sums = [0; KINDS];
        for (run, lap) in [(newer, lap), (older, lap.wrapping_sub(1))] {
            for second in &self.seconds[run] {
                for (sum, bucket) in sums.iter_mut().zip(second) {
                    *sum += bucket.count_in(lap);
                }
            }
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 1_700_000_000; // a second, as `bucket_of` gives it

    fn visits(c: &Counters, b: u64) -> u64 {
        c.sums(b)[Counter::Visit as usize]
    }

    #[test]
    fn cached_sums_equal_a_walk_of_the_whole_window() {
        let c = Counters::new();
        for (i, b) in (B - 12..=B).enumerate() {
            c.add(Counter::Visit, c.place(b), i as u32 + 1);
            c.add(Counter::Timeout, c.place(b), 1);
        }
        for b in [B, B + 3, B + 9, B + 10, B + 40] {
            assert_eq!(c.sums(b), c.walk(b, WINDOW), "second {b}, first read");
            assert_eq!(c.sums(b), c.walk(b, WINDOW), "second {b}, from the cache");
        }
    }

    #[test]
    fn a_late_write_into_a_cached_second_is_counted_next_time() {
        let c = Counters::new();
        c.add(Counter::Visit, c.place(B - 3), 2);
        assert_eq!(visits(&c, B), 2);
        c.add(Counter::Visit, c.place(B - 3), 1);
        c.add(Counter::Visit, c.place(B - 9), 1);
        assert_eq!(visits(&c, B), 4);
        c.add(Counter::Visit, c.place(B - 10), 1); // outside the window
        assert_eq!(visits(&c, B), 4);
    }

    #[test]
    fn only_writes_into_the_cached_seconds_invalidate_it() {
        let c = Counters::new();
        c.sums(B);
        let epoch = || c.completed_epoch();
        let before = epoch();
        c.add(Counter::Visit, c.place(B), 1); // the current second is read live
        c.add(Counter::Exception, c.place(B - 10), 1);
        c.add(Counter::Exception, c.place(B + 1), 1);
        assert_eq!(epoch(), before);
        c.add(Counter::Exception, c.place(B - 1), 1);
        assert_eq!(epoch(), before + 1);
        assert_eq!(c.sums(B)[Counter::Exception as usize], 1);
    }

    #[test]
    fn a_write_far_ahead_into_a_cached_second_rebuilds_the_cache() {
        let c = Counters::new();
        for b in B - 9..=B {
            c.add(Counter::Visit, c.place(b), 1);
        }
        assert_eq!(visits(&c, B), 10);
        // 1000 laps ahead, in the slot of B - 5: that second is gone.
        c.add(Counter::Visit, c.place(B - 5 + 30_000), 1);
        assert_eq!(c.sums(B), c.walk(B, WINDOW));
        assert_eq!(visits(&c, B), 9);
    }

    #[test]
    fn a_late_write_counts_in_its_second_or_at_the_present() {
        let c = Counters::new();
        c.add(Counter::Visit, c.place(B + 25), 1); // the slot of B - 5, a lap later
        c.add_late(Counter::Exception, B - 5, B + 25);
        assert_eq!(c.sums(B + 25)[Counter::Exception as usize], 1);
        c.add_late(Counter::Exception, B + 20, B + 25);
        assert_eq!(c.sums(B + 25)[Counter::Exception as usize], 2);
        c.add_late(Counter::Exception, B + 26, B + 25); // after the present
        assert_eq!(c.walk(B + 25, 1)[Counter::Exception as usize], 2);
    }

    #[test]
    fn totals_keep_every_count_through_laps_and_clock_steps() {
        let c = Counters::new();
        let mut expected = 0;
        // Three laps of the ring, a step back of two laps, a step forward.
        let seconds = (B..B + 95).chain(B + 35..B + 40).chain(B + 500..B + 503);
        for (i, b) in seconds.enumerate() {
            let n = (i % 7) as u32 + 1;
            c.add(Counter::Visit, c.place(b), n);
            expected += u64::from(n);
            assert_eq!(c.totals()[Counter::Visit as usize], expected, "second {b}");
        }
        c.add_late(Counter::Exception, B + 490, B + 502);
        c.add_late(Counter::Exception, B + 100, B + 502); // no longer held: at the present
        assert_eq!(c.totals()[Counter::Exception as usize], 2);
        assert_eq!(c.totals()[Counter::Timeout as usize], 0);
    }

    #[test]
    fn totals_never_go_back_while_every_write_takes_a_second_out_of_the_ring() {
        let c = Counters::new();
        let writes = 100_000u64;
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    // A new second each write: each restarts a slot a lap old.
                    for i in 0..writes {
                        c.add(Counter::Visit, c.place(B + i), 1);
                    }
                });
            }
            s.spawn(|| {
                let (mut last, mut reads) = (0, 0u64);
                while !done.load(Ordering::Relaxed) || reads == 0 {
                    let now = c.totals()[Counter::Visit as usize];
                    assert!(now >= last, "read {now} after {last}");
                    last = now;
                    reads += 1;
                }
            });
            while c.totals()[Counter::Visit as usize] < 2 * writes {
                std::thread::yield_now();
            }
            done.store(true, Ordering::Relaxed);
        });
        assert_eq!(c.totals()[Counter::Visit as usize], 2 * writes);
    }

    #[test]
    fn a_writer_dead_between_its_swap_and_its_add_never_blocks_a_reader() {
        let c = Counters::new();
        c.add(Counter::Visit, c.place(B), 3);
        // As a process killed after announcing itself leaves the guard.
        c.retiring.fetch_add(1, Ordering::SeqCst);
        assert_eq!(c.settled_totals(TOTALS_TRIES), None);
        assert_eq!(
            c.totals()[Counter::Visit as usize],
            3,
            "summed after a bounded wait"
        );
        // Later writers go on, and their counts are kept.
        c.add(Counter::Visit, c.place(B + 30), 2);
        assert_eq!(c.totals()[Counter::Visit as usize], 5);
    }

    #[test]
    fn the_window_starts_at_time_zero() {
        let c = Counters::new();
        c.add(Counter::Visit, c.place(0), 1);
        c.add(Counter::Visit, c.place(1), 1);
        assert_eq!(visits(&c, 0), 1);
        assert_eq!(visits(&c, 1), 2);
        assert_eq!(visits(&c, 10), 1);
    }
}
