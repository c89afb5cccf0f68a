//! `adaptiveConcurrency` through `Point`: the adaptive limit replaces
//! `concurrentThreshold`, exits feed it, stats show it (explicit times).

use sds_core::{Entry, Field, Flags, Outcome, Point, Reason, Rule};

mod common;
use common::{assert_refused, point, with_fields};

const T: u64 = 1_700_000_000_000;

fn aimd() -> Point {
    point(|s| s.adaptive_concurrency = 1)
}

/// Enters `n` requests at `at`: the admitted ones.
fn fill(p: &Point, at: u64, n: usize) -> Vec<Entry> {
    (0..n)
        .map(|_| p.enter(at, Flags::NONE))
        .filter(|e| !e.downgraded())
        .collect()
}

#[test]
fn the_initial_limit_caps_requests_in_flight() {
    let p = aimd();
    let admitted = fill(&p, T, 25);
    assert_eq!(admitted.len(), 20, "AIMD starts at 20");
    assert_eq!(p.enter(T, Flags::NONE).reason(), Some(Reason::Concurrent));
    let stats = p.stats(T);
    assert_eq!((stats.adaptive_limit, stats.concurrent), (20, 20));
}

#[test]
fn aimd_grows_while_busy_and_backs_off_on_failures() {
    let p = aimd();
    // 20 in flight end one by one: +1 per sample while the requests in
    // flight (the ending one included) are at least half the limit: the
    // k-th exit sees 20 - k, so k = 0..=6 grow it (40 - 2k >= 20 + k).
    for (i, e) in fill(&p, T, 20).into_iter().enumerate() {
        p.exit(&e, T + 10 + i as u64, Outcome::Ok);
    }
    assert_eq!(p.stats(T + 100).adaptive_limit, 27);
    // A failed request is AIMD's drop: x0.9, rounded down.
    let e = p.enter(T + 200, Flags::NONE);
    p.exit(&e, T + 210, Outcome::Error);
    assert_eq!(p.stats(T + 300).adaptive_limit, 24);
    // Samples from a lightly loaded point (1 in flight of 24) change nothing.
    let e = p.enter(T + 400, Flags::NONE);
    p.exit(&e, T + 410, Outcome::Ok);
    assert_eq!(p.stats(T + 500).adaptive_limit, 24);
}

#[test]
fn a_timeout_is_a_drop_and_refusals_are_no_samples() {
    let p = point(|s| {
        s.adaptive_concurrency = 1;
        s.adaptive_min_limit = 2;
        s.adaptive_initial_limit = 4;
        s.timeout_threshold = 100;
    });
    let busy = fill(&p, T, 10);
    assert_eq!(busy.len(), 4);
    // Refused entries hold no permit: exiting them feeds nothing.
    assert_eq!(p.stats(T).adaptive_limit, 4);
    // Slower than timeoutThreshold: a drop, 4 * 0.9 = 3.
    p.exit(&busy[0], T + 150, Outcome::Ok);
    assert_eq!(p.stats(T + 150).adaptive_limit, 3);
}

#[test]
fn a_paced_request_that_never_ran_is_no_sample() {
    let p = point(|s| {
        s.adaptive_concurrency = 2; // Vegas: a 0 ms sample would become its no-load RTT
        s.token_bucket_generated_tokens_in_second = 10;
        s.max_queueing_time_ms = 1_000;
    });
    let first = p.enter(T, Flags::NONE);
    p.exit(&first, T + 30, Outcome::Ok);
    assert_eq!(p.stats(T + 30).adaptive_min_rtt_us, 30_000);
    let queued = p.enter(T + 30, Flags::NONE);
    assert_eq!(queued.wait_ms(), 70);
    // Its wait is cut short at T + 50 (a cancelled task, an interrupt).
    p.exit(&queued, T + 50, Outcome::Ok);
    let stats = p.stats(T + 50);
    assert_eq!(stats.adaptive_min_rtt_us, 30_000, "no 0 ms sample");
    assert_eq!(stats.concurrent, 0, "its permit came back");
}

#[test]
fn stats_show_the_algorithms_inputs() {
    let p = point(|s| s.adaptive_concurrency = 2); // Vegas
    for k in 0..5 {
        let at = T + k * 100;
        let e = p.enter(at, Flags::NONE);
        p.exit(&e, at + 20, Outcome::Ok);
    }
    let stats = p.stats(T + 1_000);
    assert_eq!(stats.adaptive_min_rtt_us, 20_000, "Vegas's no-load RTT");
    assert_eq!(stats.adaptive_rtt_us, 20_000);
    assert!((1..=1_000).contains(&stats.adaptive_limit));
    let plain = Point::new();
    assert_eq!(plain.stats(T).adaptive_limit, 0, "0 without the row");
    assert!(plain.adaptive_stats().is_none());
}

#[test]
fn a_new_algorithm_starts_fresh_and_other_changes_keep_the_limit() {
    let p = aimd();
    for e in fill(&p, T, 20) {
        p.exit(&e, T + 10, Outcome::Ok);
    }
    assert_eq!(p.stats(T + 20).adaptive_limit, 27);
    let mut s = p.strategy().unwrap();
    s.visit_threshold = 1_000;
    p.set_strategy(Some(&s)).unwrap();
    assert_eq!(
        p.stats(T + 30).adaptive_limit,
        27,
        "same algorithm and bounds"
    );
    s.adaptive_concurrency = 3; // Gradient2 starts at its initial 20
    p.set_strategy(Some(&s)).unwrap();
    assert_eq!(p.stats(T + 40).adaptive_limit, 20);
    p.set_strategy(None).unwrap();
    assert_eq!(p.stats(T + 50).adaptive_limit, 0);
}

#[test]
fn the_row_is_validated_once() {
    use {Field::*, Rule::*};
    let algo = |code| (AdaptiveConcurrency, code);
    // One row a case.
    #[rustfmt::skip]
    assert_refused(&[
        (&[algo(6)], AdaptiveConcurrency, UnknownAlgorithm),
        (&[algo(0)], AdaptiveConcurrency, UnknownAlgorithm),
        (&[algo(1), (ConcurrentThreshold, 10)], ConcurrentThreshold, ThresholdWithAdaptive),
        (&[(AdaptiveMaxLimit, 10)], AdaptiveMaxLimit, NeedsAdaptive),
        (&[algo(1), (AdaptiveMinLimit, 0)], AdaptiveMinLimit, LimitBelowOne),
        (&[algo(1), (AdaptiveMaxLimit, 1_000_001)], AdaptiveMaxLimit, LimitTooLarge),
        // AIMD's minimum is 20.
        (&[algo(1), (AdaptiveMaxLimit, 10)], AdaptiveMaxLimit, MaxBelowMin),
        (&[algo(3), (AdaptiveInitialLimit, 500)], AdaptiveInitialLimit, InitialOutsideLimits),
    ]);
    // Bounds that move the default initial limit out take it along.
    let s = with_fields(&[algo(1), (AdaptiveMinLimit, 50), (AdaptiveMaxLimit, 80)]);
    assert_eq!(s.validate(), Ok(()));
    assert_eq!(s.adaptive_params().unwrap().initial_limit, 50);
    let message = with_fields(&[algo(9)]).validate().unwrap_err().to_string();
    assert_eq!(
        message,
        "invalid strategy: adaptiveConcurrency must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), 4 \
         (GRADIENT) or 5 (KNEE), or negative: off"
    );
}
