//! Property tests of a point: random enters, exits, errors, strategy swaps
//! and clock moves, checked against a plain record of what happened.

use std::collections::HashMap;

use proptest::prelude::*;
use proptest::strategy::Strategy as Generator;
use sds_core::{Entry, Field, Flags, Outcome, Point, Strategy};

#[derive(Clone, Debug)]
enum Op {
    Enter { pressure: bool },
    Exit { pick: usize, error: bool },
    SetStrategy(Strategy),
    RemoveStrategy,
    Advance(u64),
}

fn strategy() -> impl Generator<Value = Strategy> {
    (
        prop_oneof![Just(-1i64), 0i64..6],
        prop_oneof![Just(-1i64), 0i64..4],
        prop_oneof![Just(-1i64), 0i64..4],
        prop_oneof![Just(-1i64), 0i64..4],
        prop_oneof![Just(-1i64), 0i64..101],
        prop_oneof![Just(-1i64), Just(10_000i64), Just(20_000i64)],
        prop_oneof![Just(100i64), Just(0i64), 1i64..100],
        0i64..2,
    )
        .prop_map(
            |(visit, concurrent, exception, token, rate, delay, downgrade, pressure)| {
                let retry = if delay > 0 { 5_000 } else { -1 };
                let mut s = Strategy::DEFAULT;
                for (field, value) in [
                    (Field::VisitThreshold, visit),
                    (Field::ConcurrentThreshold, concurrent),
                    (Field::ExceptionThreshold, exception),
                    (Field::TokenBucketGeneratedTokensInSecond, token),
                    (Field::ExceptionRateThreshold, rate),
                    (Field::DelayTime, delay),
                    (Field::RetryInterval, retry),
                    (Field::DowngradeRate, downgrade),
                    (Field::PressureTestDowngrade, pressure),
                    (Field::TimeoutThreshold, 700),
                ] {
                    s.set(field, value);
                }
                s
            },
        )
}

fn op() -> impl Generator<Value = Op> {
    prop_oneof![
        6 => any::<bool>().prop_map(|pressure| Op::Enter { pressure }),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(pick, error)| Op::Exit { pick, error }),
        1 => strategy().prop_map(Op::SetStrategy),
        1 => Just(Op::RemoveStrategy),
        3 => prop_oneof![0u64..300, 900u64..2_500, 9_000u64..40_000].prop_map(Op::Advance),
    ]
}

/// Events per 1 s bucket, to compute the sliding sums the point must report.
#[derive(Default)]
struct Record {
    visits: HashMap<u64, u64>,
    downgrades: HashMap<u64, u64>,
    exceptions: HashMap<u64, u64>,
    timeouts: HashMap<u64, u64>,
}

fn sliding(events: &HashMap<u64, u64>, now: u64) -> u64 {
    let b = now / 1000;
    (b.saturating_sub(9)..=b)
        .map(|k| events.get(&k).copied().unwrap_or(0))
        .sum()
}

fn bucket_of_record(start: u64, now: u64) -> u64 {
    // Start second while the ring of 30 holds it, else the exit's second.
    if now / 1000 - start / 1000 < 30 {
        start / 1000
    } else {
        now / 1000
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_point_counts_exactly_and_keeps_its_permits(ops in prop::collection::vec(op(), 1..250)) {
        let point = Point::new();
        let mut record = Record::default();
        let mut open: Vec<Entry> = Vec::new();
        let mut timeout_threshold: Option<u64> = None;
        let mut now: u64 = 5_000_000;
        for op in ops {
            match op {
                Op::Enter { pressure } => {
                    let flags = if pressure { Flags::PRESSURE_TEST } else { Flags::NONE };
                    let e = point.enter(now, flags);
                    prop_assert_eq!(e.downgraded(), e.reason().is_some());
                    prop_assert_eq!(e.start_ms(), now);
                    *record.visits.entry(now / 1000).or_default() += 1;
                    if e.downgraded() {
                        *record.downgrades.entry(now / 1000).or_default() += 1;
                    }
                    open.push(e);
                }
                Op::Exit { pick, error } if !open.is_empty() => {
                    let e = open.swap_remove(pick % open.len());
                    point.exit(&e, now, if error { Outcome::Error } else { Outcome::Ok });
                    let at = bucket_of_record(e.start_ms(), now);
                    if error {
                        *record.exceptions.entry(at).or_default() += 1;
                    }
                    if timeout_threshold.is_some_and(|t| now - e.start_ms() > t) {
                        *record.timeouts.entry(at).or_default() += 1;
                    }
                }
                Op::Exit { .. } => {}
                Op::SetStrategy(s) => {
                    point.set_strategy(Some(&s)).unwrap();
                    timeout_threshold = Some(s.timeout_threshold as u64);
                }
                Op::RemoveStrategy => {
                    point.set_strategy(None).unwrap();
                    timeout_threshold = None;
                }
                Op::Advance(d) => now += d,
            }
            let held = open.iter().filter(|e| e.holds_permit()).count() as u64;
            let stats = point.stats(now);
            prop_assert_eq!(stats.concurrent, held, "permits held = open entries with a permit");
            prop_assert_eq!(stats.visit, sliding(&record.visits, now));
            prop_assert_eq!(stats.downgrade, sliding(&record.downgrades, now));
            prop_assert_eq!(stats.exception, sliding(&record.exceptions, now));
            prop_assert_eq!(stats.timeout, sliding(&record.timeouts, now));
        }
        for e in open.drain(..) {
            point.exit(&e, now, Outcome::Ok);
        }
        prop_assert_eq!(point.in_flight(), 0);
    }

    #[test]
    fn permits_never_exceed_an_unchanged_threshold(k in 0i64..5, ops in prop::collection::vec(op(), 1..200)) {
        let point = Point::new();
        let mut s = Strategy::DEFAULT;
        s.concurrent_threshold = k;
        point.set_strategy(Some(&s)).unwrap();
        let mut open: Vec<Entry> = Vec::new();
        let mut now = 5_000_000;
        for op in ops {
            match op {
                Op::Enter { .. } => {
                    let e = point.enter(now, Flags::NONE);
                    let was = point.in_flight() as i64 - e.holds_permit() as i64;
                    prop_assert_eq!(e.holds_permit(), was < k, "a permit iff one was free");
                    prop_assert_eq!(e.downgraded(), !e.holds_permit());
                    open.push(e);
                }
                Op::Exit { pick, error } if !open.is_empty() => {
                    let e = open.swap_remove(pick % open.len());
                    point.exit(&e, now, if error { Outcome::Error } else { Outcome::Ok });
                }
                Op::Advance(d) => now += d,
                _ => {}
            }
            prop_assert!(point.in_flight() as i64 <= k);
        }
    }
}
