//! Real threads on the real atomics: exact counts, bounded permits.

use std::sync::Barrier;
use std::thread;

use sds_core::window::SdsCounterWindow;
use sds_core::{Flags, Outcome, Point, PointTable, SlidingWindow, Slot, Strategy};

mod common;
use common::{is_uniform, uniform, Holders};

const T: u64 = 1_000_000;
const THREADS: usize = 4;

#[test]
fn threads_times_increments_sum_exactly() {
    const PER_THREAD: u64 = 50_000;
    let w: SdsCounterWindow = SlidingWindow::sds_counter();
    w.add(T - 30_000, 99); // an older lap in every slot the threads will reset
    thread::scope(|s| {
        for t in 0..THREADS as u64 {
            let w = &w;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    // Spread over 10 buckets, rolling into a new lap of the ring.
                    w.increment(T + (i + t) % 10 * 1000);
                }
            });
        }
    });
    assert_eq!(w.sum(T + 9_999), THREADS as u64 * PER_THREAD);
    let per_bucket: u64 = THREADS as u64 * PER_THREAD / 10;
    for b in 0..10 {
        assert_eq!(w.bucket(T + b * 1000), per_bucket);
    }
}

#[test]
fn never_more_than_k_permits_and_all_come_back() {
    const K: usize = 3;
    const ROUNDS: usize = 20_000;
    let p = Point::new();
    let mut s = Strategy::DEFAULT;
    s.concurrent_threshold = K as i64;
    p.set_strategy(Some(&s)).unwrap();
    let holders = Holders::default();
    let barrier = Barrier::new(THREADS);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                barrier.wait();
                for _ in 0..ROUNDS {
                    let e = p.enter(T, Flags::NONE);
                    if e.holds_permit() {
                        holders.hold(|| {});
                    } else {
                        assert_eq!(e.reason(), Some(sds_core::Reason::Concurrent));
                    }
                    p.exit(&e, T, Outcome::Ok);
                }
            });
        }
    });
    assert!(holders.most() <= K, "{} permits at once", holders.most());
    assert!(holders.admitted() > 0);
    assert_eq!(p.in_flight(), 0, "every permit came back");
    let stats = p.stats(T);
    assert_eq!(stats.visit, (THREADS * ROUNDS) as u64);
    assert_eq!(
        stats.downgrade,
        (THREADS * ROUNDS - holders.admitted()) as u64,
        "every refused request is one downgrade"
    );
}

/// Every name entered once by each of `THREADS` threads, thread `t` taking
/// them in the order `order(i, t)` gives; then one point per name, each
/// with `THREADS` visits.
fn each_thread_enters_every_name(slots: usize, names: &[String], order: fn(usize, usize) -> usize) {
    let table = PointTable::new((0..slots).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    thread::scope(|s| {
        for t in 0..THREADS {
            let table = &table;
            s.spawn(move || {
                for i in 0..names.len() {
                    let name = &names[order(i, t) % names.len()];
                    let e = table.enter(name.as_bytes(), T, Flags::NONE).unwrap();
                    table.exit(&e, T, Outcome::Ok).unwrap();
                }
            });
        }
    });
    assert_eq!(table.len(), names.len());
    for name in names {
        assert_eq!(
            table.stats(name.as_bytes(), T).unwrap().visit,
            THREADS as u64,
            "{name}"
        );
    }
}

#[test]
fn concurrent_inserts_of_the_same_names_make_one_point_each() {
    let names: Vec<String> = (0..40).map(|i| format!("service.method{i}")).collect();
    each_thread_enters_every_name(64, &names, |i, _| i);
}

#[test]
fn concurrent_inserts_past_the_home_bucket_make_one_point_each() {
    // 3 000 names in 4 096 slots: many land beyond their home bucket, where
    // racing inserts of one name must still meet at one slot. Each thread
    // its own order, so they race on different names.
    let names: Vec<String> = (0..3000).map(|i| format!("svc.m{i}")).collect();
    each_thread_enters_every_name(4096, &names, |i, t| i * 7 + t * 613);
}

#[test]
fn strategy_swaps_under_load_are_never_torn() {
    let p = Point::new();
    p.set_strategy(Some(&uniform(0))).unwrap();
    thread::scope(|s| {
        s.spawn(|| {
            for v in 1..20_000 {
                p.set_strategy(Some(&uniform(v))).unwrap();
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..50_000 {
                    let got = p.strategy().unwrap();
                    assert!(is_uniform(&got), "torn strategy {got:?}");
                }
            });
        }
    });
}
