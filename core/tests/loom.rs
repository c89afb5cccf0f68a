//! Model-checked concurrency (run with `RUSTFLAGS="--cfg loom"`, see the
//! Makefile's `loom` target): loom runs every interleaving of the real
//! atomics of the window, the permit and the strategy swap, the take-overs
//! from a dead owner (`loom/takeover.rs`), the permit ledger of dead
//! views (`loom/ledger.rs`), and the pacing slots and warm-up syncs
//! (`loom/shaping.rs`).
#![cfg(loom)]

use loom::sync::atomic::AtomicUsize;
use loom::sync::atomic::Ordering::SeqCst;
use loom::sync::Arc;
use loom::thread;
use sds_core::window::SdsCounterWindow;
use sds_core::{Flags, Outcome, Point, SlidingWindow, Strategy};

#[path = "loom/takeover.rs"]
mod takeover;

#[path = "loom/ledger.rs"]
mod ledger;

#[path = "loom/shaping.rs"]
mod shaping;

mod common;
use common::{is_uniform, uniform};

const T: u64 = 1_000_000;
const NEXT_LAP: u64 = T + 30_000; // the same slot, one lap of the ring later

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    // Atomic operations one execution may take: a decision under the newer
    // rows reads the strategy twice, and the warm-up model makes ten of
    // them (the default, 1 000, is a cap, not what is explored).
    builder.max_branches = 5_000;
    builder.check(f);
}

/// A fresh SDS counter window holding `old` at `T` (the lap before
/// `NEXT_LAP` in the same slot; nothing if 0), and a thread running `f` on
/// it.
fn window_with_thread<R: Send + 'static>(
    old: u64,
    f: impl FnOnce(&SdsCounterWindow) -> R + Send + 'static,
) -> (Arc<SdsCounterWindow>, thread::JoinHandle<R>) {
    let w: Arc<SdsCounterWindow> = Arc::new(SlidingWindow::sds_counter());
    if old > 0 {
        w.add(T, old);
    }
    let other = w.clone();
    (w, thread::spawn(move || f(&other)))
}

#[test]
fn a_point_total_never_reads_short_while_a_second_leaves_the_ring() {
    // A total reads every slot of the ring: more branches than loom's
    // default bound, and fewer preemptions to keep the model small.
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.max_branches = 20_000;
    builder.check(|| {
        let p = Arc::new(Point::new());
        for _ in 0..5 {
            let e = p.enter(T, Flags::NONE);
            p.exit(&e, T, Outcome::Ok);
        }
        let other = p.clone();
        // Restarts the slot of T, whose 5 visits move to the retired total.
        let writer = thread::spawn(move || {
            let _ = other.enter(NEXT_LAP, Flags::NONE);
        });
        // A read that found no writer between the ring and the retired
        // total (the one a live writer leaves only for a few instructions).
        if let Some(seen) = p.settled_totals(2) {
            assert!(
                seen.visits == 5 || seen.visits == 6,
                "read {} of 5, then 6",
                seen.visits
            );
        }
        writer.join().unwrap();
        assert_eq!(p.totals().visits, 6);
    });
}

#[test]
fn two_writers_across_a_rollover_lose_and_double_nothing() {
    model(|| {
        let w: Arc<SdsCounterWindow> = Arc::new(SlidingWindow::sds_counter());
        w.add(T, 5); // the old lap, to be reset by the first new writer
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let w = w.clone();
                thread::spawn(move || w.increment(NEXT_LAP).bucket)
            })
            .collect();
        let mut seen: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        seen.sort();
        assert_eq!(seen, [1, 2], "each writer saw its own add");
        assert_eq!(w.bucket(NEXT_LAP), 2);
        assert_eq!(w.sum(NEXT_LAP), 2);
    });
}

#[test]
fn a_reader_never_sees_a_stale_bucket_as_current() {
    model(|| {
        let (w, writer) = window_with_thread(5, |w| w.increment(NEXT_LAP));
        let read = w.bucket(NEXT_LAP);
        assert!(
            read <= 1,
            "read {read}: the old lap leaked into the new one"
        );
        writer.join().unwrap();
        assert_eq!(w.bucket(NEXT_LAP), 1);
        assert_eq!(w.bucket(T), 0);
    });
}

#[test]
fn a_late_event_never_lands_in_a_newer_lap_nor_restarts_it() {
    model(|| {
        let (w, late) = window_with_thread(0, |w| w.add_at(T, NEXT_LAP, 1));
        w.increment(NEXT_LAP);
        late.join().unwrap();
        assert_eq!(
            w.bucket(NEXT_LAP),
            2,
            "the late event counts at the present, whatever the order"
        );
        assert_eq!(w.bucket(T), 0);
    });
}

#[test]
fn writers_of_two_laps_leave_one_lap_with_its_own_count() {
    model(|| {
        let (w, stepped_back) = window_with_thread(0, |w| w.increment(T));
        w.increment(NEXT_LAP);
        stepped_back.join().unwrap();
        let (old, new) = (w.bucket(T), w.bucket(NEXT_LAP));
        assert_eq!(old + new, 1, "one lap holds the slot, with its count only");
    });
}

/// A late write (an exception counted at its request's start second) racing
/// a decision that rebuilds the point's cache of completed seconds: whatever
/// the interleaving, the next decision counts the exception.
#[test]
fn a_late_exception_is_never_hidden_by_the_sum_cache() {
    model(|| {
        let p = Arc::new(Point::new());
        let mut s = Strategy::DEFAULT;
        s.exception_threshold = 1;
        p.set_strategy(Some(&s)).unwrap();
        let started = p.enter(T - 1000, Flags::NONE);
        let late = {
            let p = p.clone();
            thread::spawn(move || p.exit(&started, T, Outcome::Error))
        };
        let racing = p.enter(T, Flags::NONE);
        late.join().unwrap();
        p.exit(&racing, T, Outcome::Ok);
        let after = p.enter(T, Flags::NONE);
        assert_eq!(
            after.reason(),
            Some(sds_core::Reason::Exception),
            "the exception of the second before is in the window"
        );
        p.exit(&after, T, Outcome::Ok);
    });
}

#[test]
fn permits_never_exceed_the_threshold_and_all_come_back() {
    model(|| {
        let p = Arc::new(Point::new());
        let holders = Arc::new(AtomicUsize::new(0));
        let mut s = Strategy::DEFAULT;
        s.concurrent_threshold = 1;
        p.set_strategy(Some(&s)).unwrap();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (p, holders) = (p.clone(), holders.clone());
                thread::spawn(move || {
                    let e = p.enter(T, Flags::NONE);
                    if e.holds_permit() {
                        assert_eq!(holders.fetch_add(1, SeqCst), 0, "two permits at once");
                        holders.fetch_sub(1, SeqCst);
                    } else {
                        assert!(e.downgraded(), "no permit must mean CONCURRENT");
                    }
                    p.exit(&e, T, Outcome::Ok);
                    e.holds_permit()
                })
            })
            .collect();
        let held = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|&h| h)
            .count();
        assert!(held >= 1, "the first to enter always gets the permit");
        assert_eq!(p.in_flight(), 0, "every permit came back");
    });
}

#[test]
fn a_strategy_swap_is_never_seen_half_done() {
    model(|| {
        let p = Arc::new(Point::new());
        p.set_strategy(Some(&uniform(1))).unwrap();
        let writer = {
            let p = p.clone();
            thread::spawn(move || {
                p.set_strategy(Some(&uniform(2))).unwrap();
                p.set_strategy(Some(&uniform(3))).unwrap();
            })
        };
        let seen = p.strategy().unwrap();
        assert!(is_uniform(&seen), "half-swapped strategy: {seen:?}");
        writer.join().unwrap();
        assert_eq!(p.strategy(), Some(uniform(3)));
    });
}
