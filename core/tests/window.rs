//! Every window operation with explicit times, and each named instance.

use sds_core::window::{
    HystrixWindow, SdsCounterWindow, SdsMaxConcurrencyWindow, SentinelMinuteWindow,
    SentinelSecondWindow,
};
use sds_core::{Bucket, ErrorCode, SlidingWindow, Tally, WindowRule};

const T0: u64 = 1_700_000_000_000; // a wall-clock time, aligned to 10 s

fn sds() -> SdsCounterWindow {
    SlidingWindow::sds_counter()
}

fn tally(bucket: u64, total: u64) -> Tally {
    Tally { bucket, total }
}

#[test]
fn named_instances_have_the_reference_parameters() {
    let shapes = [
        (sds().bucket_ms(), sds().buckets(), sds().ring()),
        {
            let w: SdsMaxConcurrencyWindow = SlidingWindow::sds_max_concurrency();
            (w.bucket_ms(), w.buckets(), w.ring())
        },
        {
            let w: SentinelSecondWindow = SlidingWindow::sentinel_second();
            (w.bucket_ms(), w.buckets(), w.ring())
        },
        {
            let w: SentinelMinuteWindow = SlidingWindow::sentinel_minute();
            (w.bucket_ms(), w.buckets(), w.ring())
        },
        {
            let w: HystrixWindow = SlidingWindow::hystrix();
            (w.bucket_ms(), w.buckets(), w.ring())
        },
    ];
    assert_eq!(
        shapes,
        [
            (1000, 10, 30),
            (10_000, 1, 3),
            (500, 2, 4),
            (1000, 60, 120),
            (1000, 10, 20)
        ]
    );
}

#[test]
fn increment_returns_bucket_and_sliding_sum() {
    let w = sds();
    assert_eq!(w.increment(T0), tally(1, 1));
    assert_eq!(w.increment(T0 + 999), tally(2, 2));
    assert_eq!(w.increment(T0 + 1000), tally(1, 3));
    assert_eq!(w.add(T0 + 1500, 5), tally(6, 8));
    assert_eq!(w.bucket(T0), 2);
    assert_eq!(w.bucket(T0 + 1999), 6);
    assert_eq!(w.bucket(T0 + 2000), 0);
}

#[test]
fn sum_covers_exactly_the_ten_buckets_ending_now() {
    let w = sds();
    for s in 0..10 {
        w.add(T0 + s * 1000, s + 1); // 1..=10
    }
    assert_eq!(w.sum(T0 + 9_999), 55);
    // At 10 s the first bucket (value 1) leaves the window.
    assert_eq!(w.sum(T0 + 10_000), 54);
    assert_eq!(w.sum(T0 + 18_999), 10);
    assert_eq!(w.sum(T0 + 19_000), 0);
    // Reading the past within the ring is still exact.
    assert_eq!(w.sum(T0 + 4_000), 15);
}

#[test]
fn last_whole_cycle_is_the_aligned_cycle_before_now() {
    let w = sds();
    w.add(T0 - 1, 100); // last bucket of the cycle before T0's
    w.add(T0, 1);
    w.add(T0 + 9_999, 2);
    w.add(T0 + 10_000, 4);
    assert_eq!(w.last_whole_cycle(T0 + 5_000), 100);
    assert_eq!(w.last_whole_cycle(T0 + 10_000), 3);
    assert_eq!(w.last_whole_cycle(T0 + 19_999), 3);
    assert_eq!(w.last_whole_cycle(T0 + 20_000), 4);
    assert_eq!(w.last_whole_cycle(T0 + 40_000), 0);
    assert_eq!(w.last_whole_cycle(5_000), 0, "no cycle before the first");
}

#[test]
fn clear_next_cycle_zeroes_only_the_next_cycle() {
    let w = sds();
    w.add(T0 + 10_000, 7); // next cycle, written early (as a fast clock would)
    w.add(T0 + 3_000, 1); // current cycle
    w.clear_next_cycle(T0 + 5_000);
    assert_eq!(w.bucket(T0 + 10_000), 0);
    assert_eq!(w.bucket(T0 + 3_000), 1);
}

#[test]
fn clear_next_cycle_keeps_a_late_write_into_an_old_lap() {
    let w = sds();
    // The next cycle's slots hold the cycle 20 s ago: clearing must not
    // shadow a late write there (it already reads as zero from now on).
    w.clear_next_cycle(T0 + 25_000);
    w.add(T0 + 10_500, 1);
    assert_eq!(w.bucket(T0 + 10_500), 1);
}

#[test]
fn set_and_fetch_max() {
    let w = sds();
    w.set(T0, 9);
    assert_eq!(w.bucket(T0), 9);
    w.set(T0, 3);
    assert_eq!(w.bucket(T0), 3);
    assert_eq!(w.fetch_max(T0, 2), 3);
    assert_eq!(w.fetch_max(T0, 8), 8);
    assert_eq!(
        w.fetch_max(T0 + 1000, 4),
        4,
        "a stale bucket starts from zero"
    );
    w.set(T0 + 2000, u64::MAX);
    assert_eq!(w.bucket(T0 + 2000), u32::MAX as u64, "saturates");
}

#[test]
fn counts_saturate_at_u32_max() {
    let w = sds();
    w.add(T0, u32::MAX as u64 - 1);
    assert_eq!(w.increment(T0).bucket, u32::MAX as u64);
    assert_eq!(w.increment(T0).bucket, u32::MAX as u64);
    w.add(T0 + 1000, u32::MAX as u64);
    assert_eq!(w.sum(T0 + 1000), 2 * u32::MAX as u64);
}

#[test]
fn past_buckets_are_written_while_the_ring_holds_them() {
    let w = sds();
    w.increment(T0 + 20_000);
    assert!(w.holds(T0 + 5_000, T0 + 20_000));
    w.add(T0 + 5_000, 1); // 15 s ago: its slot is free, so it lands
    assert_eq!(w.bucket(T0 + 5_000), 1);
    assert_eq!(w.sum(T0 + 14_999), 1);
    assert_eq!(w.sum(T0 + 20_000), 1, "not inside the window of now");
    // 30 s ago: the slot holds now's bucket. Recorded as a late event it
    // counts at the present; the newer bucket is not restarted.
    assert!(!w.holds(T0 - 10_000, T0 + 20_000));
    assert_eq!(w.add_at(T0 - 10_000, T0 + 20_000, 1), 2);
    assert_eq!(w.bucket(T0 + 20_000), 2, "counted at the present");
    assert_eq!(w.add_at(T0 + 14_000, T0 + 20_000, 1), 1, "its own bucket");
    assert_eq!(w.sum(T0 + 14_000), 2);
    assert_eq!(
        w.add_at(T0 + 25_000, T0 + 20_000, 1),
        3,
        "an event after the present (the clock went back): at the present"
    );
}

/// A late write's tally is the window of the bucket it landed in, as SDS's
/// `incrementAndGet(start)` returns for an exception: a newer bucket of the
/// present outside that window is not in it (the sweep's minimal case).
#[test]
fn a_late_writes_tally_is_the_window_of_the_bucket_written() {
    let w = sds();
    assert_eq!(w.add_at_tally(T0 + 8_727, T0 + 8_727, 1).total, 1);
    assert_eq!(
        w.add_at_tally(T0 + 4_301, T0 + 8_732, 1),
        tally(1, 1),
        "the window ending at second 4 does not hold second 8"
    );
    assert_eq!(w.sum(T0 + 8_732), 2, "both are in the window of now");
    assert_eq!(w.add_at_tally(T0 + 13_000, T0 + 13_500, 1), tally(1, 3));
    // Beyond the ring: counted at the present, the present's window.
    assert_eq!(w.add_at_tally(T0 - 20_000, T0 + 13_500, 1), tally(2, 4));
    // Its slot taken by a newer lap (an event 30 s after it): at the present.
    let w = sds();
    w.add_at(T0 + 31_000, T0 + 31_000, 1);
    assert_eq!(
        w.add_at_tally(T0 + 1_000, T0 + 20_000, 1),
        tally(1, 1),
        "the present's second 20, whose window holds no other event"
    );
    assert_eq!(w.bucket(T0 + 31_000), 1, "the newer second is intact");
}

#[test]
fn a_step_back_of_any_size_counts_again_from_the_next_write() {
    for back in [31_000u64, 45_000, 3_600_000, 30 * 365 * 86_400_000] {
        let w = sds();
        let before = T0 + 30 * 365 * 86_400_000;
        for s in 0..10 {
            w.add(before + s * 1000, 7);
        }
        let after = before + 9_000 - back;
        assert_eq!(
            w.increment(after),
            tally(1, 1),
            "back {back}: the first write counts"
        );
        assert_eq!(w.increment(after + 1000).total, 2, "back {back}");
        assert_eq!(w.sum(after + 1000), 2, "back {back}: reads agree");
    }
}

#[test]
fn one_outlier_time_costs_at_most_one_bucket() {
    for outlier in [
        T0 + 7_000 + 60_000,
        T0 + 7_000 + 30 * 365 * 86_400_000,
        7_000,
    ] {
        let w = sds();
        for s in 0..10 {
            w.add(T0 + s * 1000, 1);
        }
        w.increment(outlier);
        assert!(
            w.sum(T0 + 9_000) >= 9,
            "outlier {outlier}: one bucket lost at most"
        );
        // The outlier's slot counts again at the present.
        assert_eq!(w.increment(T0 + 37_000).bucket, 1, "outlier {outlier}");
        assert_eq!(w.increment(T0 + 37_000).bucket, 2, "outlier {outlier}");
    }
}

#[test]
fn idle_gaps_of_any_length_read_exactly() {
    for gap in [
        30_000u64,
        31_000,
        300_000,
        86_400_000,
        3_155_760_000_000, /* 100 years */
    ] {
        let w = sds();
        w.add(T0, 5);
        w.add(T0 + 9_000, 5);
        let later = T0 + gap;
        assert_eq!(w.sum(later), 0, "gap {gap}");
        assert_eq!(w.last_whole_cycle(later), 0, "gap {gap}");
        assert_eq!(w.increment(later), tally(1, 1), "gap {gap}");
    }
}

#[test]
fn a_fresh_window_works_at_any_absolute_time() {
    for t in [0u64, 1, T0, 1 << 45, u64::MAX / 2, u64::MAX - 1] {
        let w = sds();
        assert_eq!(w.increment(t), tally(1, 1), "t = {t}");
        assert_eq!(w.sum(t), 1);
    }
}

#[test]
fn a_clock_that_went_back_restarts_the_slot_it_writes() {
    let w = sds();
    w.add(T0 + 40_000, 3);
    // 30 s back lands on the same slot: the clock is taken to have stepped
    // back, so the write restarts the slot at its own lap.
    assert_eq!(w.add(T0 + 10_000, 1).bucket, 1);
    assert_eq!(w.bucket(T0 + 40_000), 0, "the newer lap is gone");
    assert_eq!(w.sum(T0 + 10_000), 1);
    // Going back less than a ring writes its own bucket, the rest is kept.
    w.add(T0 + 40_000, 3);
    w.increment(T0 + 35_000);
    assert_eq!(w.sum(T0 + 40_000), 4);
}

#[test]
fn buckets_before_time_zero_do_not_exist() {
    let w = sds();
    w.add(0, 2);
    w.add(1_500, 3);
    assert_eq!(w.sum(1_500), 5);
    assert_eq!(w.sum(0), 2);
}

#[test]
fn custom_storage_and_parameters() {
    let storage: Box<[Bucket]> = (0..8).map(|_| Bucket::new()).collect();
    let w = SlidingWindow::with_storage(250, 4, storage).unwrap();
    assert_eq!((w.bucket_ms(), w.buckets(), w.ring()), (250, 4, 8));
    for i in 0..8 {
        w.increment(i * 250);
    }
    assert_eq!(w.sum(1_999), 4);
    assert_eq!(w.last_whole_cycle(1_000), 4);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    let err = |bucket_ms, buckets, ring: usize| {
        let storage: Vec<Bucket> = (0..ring).map(|_| Bucket::new()).collect();
        SlidingWindow::with_storage(bucket_ms, buckets, storage).unwrap_err()
    };
    for ((bucket_ms, buckets, ring), rule) in [
        ((0, 1, 2), WindowRule::ZeroBucketWidth),
        ((1, 0, 2), WindowRule::ZeroBuckets),
        ((1, 2, 3), WindowRule::RingTooShort),
        ((1, 1, 70_000), WindowRule::RingTooLong),
    ] {
        assert_eq!(
            err(bucket_ms, buckets, ring),
            sds_core::Error::InvalidWindow(rule),
            "{rule:?}"
        );
    }
    assert_eq!(err(0, 1, 2).code(), ErrorCode::InvalidWindow);
    assert!(SlidingWindow::<[Bucket; 4]>::new(10, 3).is_err());
    assert!(SlidingWindow::<[Bucket; 6]>::new(10, 3).is_ok());
}

#[test]
fn sentinel_and_hystrix_instances_slide() {
    let s: SentinelSecondWindow = SlidingWindow::sentinel_second();
    s.increment(T0);
    s.increment(T0 + 499);
    s.increment(T0 + 500);
    assert_eq!(s.sum(T0 + 999), 3, "1 s made of two 500 ms buckets");
    assert_eq!(s.sum(T0 + 1_000), 1);
    assert_eq!(s.last_whole_cycle(T0 + 1_000), 3);
    let m: SentinelMinuteWindow = SlidingWindow::sentinel_minute();
    for sec in 0..60 {
        m.increment(T0 + 20_000 + sec * 1000);
    }
    assert_eq!(m.sum(T0 + 79_000), 60);
    assert_eq!(m.sum(T0 + 80_000), 59);
    let h: HystrixWindow = SlidingWindow::hystrix();
    h.add(T0, 4);
    h.add(T0 + 9_000, 1);
    assert_eq!(h.sum(T0 + 9_999), 5);
    assert_eq!(h.sum(T0 + 10_000), 1);
    let c: SdsMaxConcurrencyWindow = SlidingWindow::sds_max_concurrency();
    c.fetch_max(T0 + 1_000, 3);
    c.fetch_max(T0 + 9_000, 2);
    assert_eq!(c.bucket(T0), 3, "one 10 s bucket per cycle");
    assert_eq!(c.last_whole_cycle(T0 + 10_000), 3);
}

#[test]
fn windows_can_be_statics() {
    static WINDOW: SdsCounterWindow = SlidingWindow::sds_counter();
    WINDOW.increment(T0);
    assert_eq!(WINDOW.sum(T0), 1);
}
