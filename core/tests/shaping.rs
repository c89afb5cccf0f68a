//! Warm-up, pacing and the slow-call rate through `Point`, with explicit
//! times: Sentinel's formulas to the ms (the peers' own sequences are in
//! `conformance/scenarios/shaping-*.json`).

use std::collections::HashSet;
use std::sync::Arc;

use sds_core::{Entry, Field, Flags, Outcome, Point, Reason, Rule, Strategy};

mod common;
use common::{assert_refused, point, with_fields};

const T: u64 = 1_700_000_000_000;

fn paced(rate: i64, max_queue_ms: i64) -> Point {
    point(|s| {
        s.token_bucket_generated_tokens_in_second = rate;
        s.max_queueing_time_ms = max_queue_ms;
    })
}

/// The wait of each of `n` entries at `now`, `None` for a downgraded one.
fn waits(p: &Point, now: u64, n: usize) -> Vec<Option<u64>> {
    (0..n)
        .map(|_| {
            let e = p.enter(now, Flags::NONE);
            p.exit(&e, now, Outcome::Ok);
            (!e.downgraded()).then(|| e.wait_ms())
        })
        .collect()
}

#[test]
fn pacing_spaces_a_burst_at_the_rate_and_refuses_past_the_queue() {
    let p = paced(10, 500);
    let got = waits(&p, T, 8);
    let want: Vec<Option<u64>> = [0, 100, 200, 300, 400, 500]
        .iter()
        .map(|&w| Some(w))
        .chain([None, None])
        .collect();
    assert_eq!(got, want);
    let refused = p.enter(T, Flags::NONE);
    assert_eq!(refused.reason(), Some(Reason::TokenBucket));
    assert_eq!(refused.wait_ms(), 0, "a fallback never waits");
    // 250 ms later the slots go on from 600 ms: 350 and 450 ms away.
    assert_eq!(waits(&p, T + 250, 3), [Some(350), Some(450), None]);
    // Once the queue has drained, the next request runs at once.
    assert_eq!(waits(&p, T + 2_000, 2), [Some(0), Some(100)]);
}

#[test]
fn pacing_keeps_nanoseconds_and_rounds_each_wait_up() {
    // 1/3 s is 333 333 333 ns: three slots make exactly one second.
    let p = paced(3, 2_000);
    assert_eq!(
        waits(&p, T, 5),
        [Some(0), Some(334), Some(667), Some(1_000), Some(1_334)]
    );
    // A rate above 1 000/s still spaces requests (0.5 ms apart).
    let fast = paced(2_000, 1);
    assert_eq!(waits(&fast, T, 4), [Some(0), Some(1), Some(1), None]);
}

#[test]
fn a_new_rate_or_queue_forgets_the_slots_given() {
    let p = paced(3, 2_000);
    assert_eq!(waits(&p, T, 3), [Some(0), Some(334), Some(667)]);
    // Other fields leave the slots: the queue goes on at 1 000 ms.
    let mut s = p.strategy().unwrap();
    s.visit_threshold = 1_000;
    p.set_strategy(Some(&s)).unwrap();
    assert_eq!(waits(&p, T, 1), [Some(1_000)]);
    // A new rate starts a new schedule, as Sentinel's new controller does.
    s.token_bucket_generated_tokens_in_second = 2_000;
    s.max_queueing_time_ms = 1;
    p.set_strategy(Some(&s)).unwrap();
    assert_eq!(waits(&p, T, 3), [Some(0), Some(1), Some(1)]);
}

#[test]
fn pacing_with_no_queue_is_a_strict_rate() {
    let p = paced(10, 0);
    assert_eq!(waits(&p, T, 2), [Some(0), None]);
    assert_eq!(waits(&p, T + 99, 1), [None]);
    assert_eq!(waits(&p, T + 100, 2), [Some(0), None]);
    let closed = paced(0, 1_000);
    assert_eq!(waits(&closed, T, 1), [None], "rate 0 closes the point");
}

/// A point paced at 2 a second with a 100 ms timeout, and two requests
/// entered at `T`: the second waits 500 ms.
fn two_paced_at_2_a_second() -> (Point, Entry, Entry) {
    let p = point(|s| {
        s.token_bucket_generated_tokens_in_second = 2;
        s.max_queueing_time_ms = 1_000;
        s.timeout_threshold = 100;
    });
    let first = p.enter(T, Flags::NONE);
    let second = p.enter(T, Flags::NONE);
    (p, first, second)
}

#[test]
fn a_paced_request_is_timed_from_when_it_may_run() {
    let (p, first, second) = two_paced_at_2_a_second();
    assert_eq!((second.wait_ms(), second.run_at_ms()), (500, T + 500));
    p.exit(&first, T + 50, Outcome::Ok);
    // 550 ms after enter, 50 ms after it could start: not a timeout.
    p.exit(&second, T + 550, Outcome::Ok);
    assert_eq!(p.stats(T + 600).timeout, 0);
    let third = p.enter(T + 600, Flags::NONE);
    p.exit(&third, T + 600 + third.wait_ms() + 101, Outcome::Ok);
    assert_eq!(p.stats(T + 2_000).timeout, 1);
}

#[test]
fn a_wait_still_counts_once_the_pacing_is_gone() {
    let (p, first, second) = two_paced_at_2_a_second();
    assert_eq!(second.wait_ms(), 500);
    // Replaced by a strategy without the newer rows while both are in flight:
    // its exits run the usual code, and the queued one is still timed from
    // when it could run.
    let mut plain = Strategy::DEFAULT;
    plain.timeout_threshold = 100;
    p.set_strategy(Some(&plain)).unwrap();
    p.exit(&first, T + 50, Outcome::Ok);
    p.exit(&second, T + 550, Outcome::Ok);
    assert_eq!(p.stats(T + 600).timeout, 0);
    let third = p.enter(T + 600, Flags::NONE);
    assert_eq!(third.wait_ms(), 0, "no pacing any more");
    p.exit(&third, T + 701, Outcome::Ok);
    assert_eq!(p.stats(T + 800).timeout, 1);
    assert_eq!(p.in_flight(), 0);
}

#[test]
fn threads_racing_for_slots_never_share_one() {
    let p = Arc::new(paced(100, 1_000));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let p = Arc::clone(&p);
            std::thread::spawn(move || waits(&p, T, 100))
        })
        .collect();
    let all: Vec<Option<u64>> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let admitted: Vec<u64> = all.iter().flatten().copied().collect();
    // Slots every 10 ms from 0 to 1 000 ms: 101 requests, each its own slot.
    assert_eq!(admitted.len(), 101);
    assert_eq!(admitted.iter().collect::<HashSet<_>>().len(), 101);
    assert_eq!(admitted.iter().max(), Some(&1_000));
}

/// Admitted requests in each of `seconds` seconds at `per_second` requests.
fn admitted_per_second(p: &Point, from: u64, seconds: u64, per_second: u64) -> Vec<u64> {
    (0..seconds)
        .map(|k| {
            let now = from + k * 1_000;
            (0..per_second)
                .filter(|i| {
                    let at = now + i * (1_000 / per_second);
                    let e = p.enter(at, Flags::NONE);
                    p.exit(&e, at, Outcome::Ok);
                    !e.downgraded()
                })
                .count() as u64
        })
        .collect()
}

fn warming(rate: i64, period: i64, cold: i64) -> impl Fn(&mut Strategy) {
    move |s| {
        s.token_bucket_generated_tokens_in_second = rate;
        s.warm_up_period_sec = period;
        s.cold_factor = cold;
    }
}

#[test]
fn warm_up_climbs_from_a_third_to_the_rate() {
    // rate 10, 10 s, cold factor 3: warning 50 tokens, max 100, slope 0.004;
    // cold, 1 / (50 * 0.004 + 0.1) = 3.33 requests a second.
    let p = point(warming(10, 10, 3));
    let per_second = admitted_per_second(&p, T, 40, 20);
    assert_eq!(per_second[0], 3, "{per_second:?}");
    assert!(
        per_second.windows(2).all(|w| w[0] <= w[1]),
        "{per_second:?}"
    );
    let full = per_second.iter().position(|&n| n == 10).unwrap();
    assert!(
        (8..=25).contains(&full),
        "full rate at second {full}: {per_second:?}"
    );
    assert!(per_second[full..].iter().all(|&n| n == 10));
}

#[test]
fn a_point_cools_down_when_idle_and_on_a_new_rate() {
    let p = point(warming(10, 10, 3));
    admitted_per_second(&p, T, 40, 20);
    // Idle for a minute: tokens refill while below the warning line, then
    // above it while traffic stays under the cold rate; cold again.
    let later = T + 100_000;
    assert_eq!(admitted_per_second(&p, later, 1, 20), [3]);
    // A point warm (40 s at full rate) whose strategy `change` edits: what
    // it admits of `calls` in the next second.
    let after = |change: fn(&mut Strategy), calls| {
        let warm = point(warming(10, 10, 3));
        admitted_per_second(&warm, T, 40, 20);
        let mut s = warm.strategy().unwrap();
        change(&mut s);
        warm.set_strategy(Some(&s)).unwrap();
        admitted_per_second(&warm, T + 40_000, 1, calls)
    };
    // A new rate is a new curve, cold: warning 100, max 200, slope 0.001;
    // the sync takes the last second's 10 admitted from the full 200, so
    // 1 / (90 * 0.001 + 0.05) = 7.1 a second.
    let new_rate = after(|s| s.token_bucket_generated_tokens_in_second = 20, 40);
    assert_eq!(new_rate, [7]);
    // Other fields leave the curve as it was: still at the full rate.
    assert_eq!(after(|s| s.visit_threshold = 1_000_000, 20), [10]);
}

#[test]
fn warm_pacing_spaces_requests_at_the_warming_rate() {
    let p = point(|s| {
        warming(10, 10, 3)(s);
        s.max_queueing_time_ms = 1_000;
    });
    // Cold: 3.33/s, so round(1000 / 3.33) = 300 ms apart.
    assert_eq!(
        waits(&p, T, 5),
        [Some(0), Some(300), Some(600), Some(900), None]
    );
}

#[test]
fn slow_call_rate_opens_a_delay_with_probes() {
    let p = point(|s| {
        s.timeout_threshold = 100;
        s.slow_call_rate_threshold = 50;
        s.slow_call_rate_start = 3;
        s.delay_time = 10_000;
        s.retry_interval = 1_000;
    });
    let slow = |at: u64| {
        let e = p.enter(at, Flags::NONE);
        assert!(!e.downgraded());
        p.exit(&e, at + 150, Outcome::Ok);
    };
    let fast = |at: u64| {
        let e: Entry = p.enter(at, Flags::NONE);
        assert!(!e.downgraded());
        p.exit(&e, at + 10, Outcome::Ok);
    };
    fast(T);
    slow(T + 200);
    slow(T + 400);
    // Visits 4 > start 3, slow 2 of 3 admitted before this one + this one.
    let e = p.enter(T + 600, Flags::NONE);
    assert_eq!(e.reason(), Some(Reason::SlowCallRate));
    let e = p.enter(T + 700, Flags::NONE);
    assert_eq!(e.reason(), Some(Reason::Delay));
    let probe = p.enter(T + 1_700, Flags::NONE);
    assert!(probe.is_probe() && !probe.downgraded());
    assert_eq!(probe.wait_ms(), 0);
}

#[test]
fn the_new_fields_are_validated_once() {
    use {Field::*, Rule::*};
    let rate = |r| (TokenBucketGeneratedTokensInSecond, r);
    let slow = |pct| (SlowCallRateThreshold, pct);
    let queue = |ms| (MaxQueueingTimeMs, ms);
    // One row a case.
    #[rustfmt::skip]
    assert_refused(&[
        (&[slow(10)], SlowCallRateThreshold, SlowCallWithoutTimeout),
        (&[(TimeoutThreshold, 5), slow(101)], SlowCallRateThreshold, PercentOutOfRange),
        (&[(ColdFactor, 1)], ColdFactor, ColdFactorTooSmall),
        (&[(WarmUpPeriodSec, 10)], WarmUpPeriodSec, ShapingWithoutRate),
        (&[rate(0), (WarmUpPeriodSec, 10)], WarmUpPeriodSec, ShapingWithoutRate),
        (&[rate(10), (WarmUpPeriodSec, 0)], WarmUpPeriodSec, ZeroWarmUp),
        (&[queue(100)], MaxQueueingTimeMs, ShapingWithoutRate),
        (&[rate(10), queue(65_536)], MaxQueueingTimeMs, QueueTooLong),
        (&[rate(10), (TokenBucketSize, 20), queue(100)], TokenBucketSize, BurstWithShaping),
    ]);
    let ok = with_fields(&[rate(10), (WarmUpPeriodSec, 5), (ColdFactor, 5)]);
    assert_eq!(ok.validate(), Ok(()));
    let message = with_fields(&[(ColdFactor, 0)])
        .validate()
        .unwrap_err()
        .to_string();
    assert_eq!(message, "invalid strategy: coldFactor must be > 1");
}
