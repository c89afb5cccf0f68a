//! Cluster points: decisions read local + the remote counts a syncer stored;
//! other points never read them; remote counts leave the window with their
//! seconds when nobody publishes any more.

use sds_core::{Flags, Outcome, Point, Reason, SecondCounts, Strategy};

const T: u64 = 1_700_000_000_000;
const S: u64 = T / 1000;

fn point(json: &str) -> Point {
    let p = Point::new();
    p.set_strategy(Some(&Strategy::from_json(json).unwrap()))
        .unwrap();
    p
}

fn visits(n: u64) -> SecondCounts {
    SecondCounts {
        visit: n,
        ..SecondCounts::default()
    }
}

/// Admitted of `tries` requests at `now_ms`.
fn admitted(p: &Point, tries: u32, now_ms: u64) -> u32 {
    let mut n = 0;
    for _ in 0..tries {
        let e = p.enter(now_ms, Flags::NONE);
        n += u32::from(!e.downgraded());
        p.exit(&e, now_ms, Outcome::Ok);
    }
    n
}

#[test]
fn a_cluster_point_counts_the_others_visits_in_its_window() {
    let p = point(r#"{"visitThreshold": 10}"#);
    p.store_remote(S, S - 3, &visits(4));
    p.store_remote(S, S, &visits(2));
    p.publish_remote(S);
    assert_eq!(admitted(&p, 20, T), 10, "not a cluster point yet");

    let p = point(r#"{"visitThreshold": 10}"#);
    p.set_cluster(true);
    assert!(p.is_cluster());
    p.store_remote(S, S - 3, &visits(4));
    p.store_remote(S, S, &visits(2));
    p.publish_remote(S);
    assert_eq!(p.remote_sums(T), visits(6));
    assert_eq!(admitted(&p, 20, T), 4);
    let e = p.enter(T, Flags::NONE);
    assert_eq!(e.reason(), Some(Reason::Visit));
    // Stats stay this instance's own.
    assert_eq!(p.stats(T).visit, 21);
}

#[test]
fn the_token_bucket_counts_the_others_takes_of_this_second() {
    let p = point(r#"{"tokenBucketGeneratedTokensInSecond": 5}"#);
    p.set_cluster(true);
    p.store_remote(S, S, &visits(3));
    p.store_remote(S, S - 1, &visits(100)); // another second: not this one's takes
    p.publish_remote(S);
    assert_eq!(admitted(&p, 10, T), 2);
    let e = p.enter(T, Flags::NONE);
    assert_eq!(e.reason(), Some(Reason::TokenBucket));
}

#[test]
fn exceptions_and_timeouts_of_others_count_and_downgrades_offset_visits() {
    let p = point(r#"{"exceptionThreshold": 3}"#);
    p.set_cluster(true);
    p.store_remote(
        S,
        S - 1,
        &SecondCounts {
            visit: 10,
            exception: 3,
            ..SecondCounts::default()
        },
    );
    p.publish_remote(S);
    assert_eq!(p.enter(T, Flags::NONE).reason(), Some(Reason::Exception));

    let p = point(r#"{"timeoutThreshold": 100, "timeoutCountThreshold": 2}"#);
    p.set_cluster(true);
    let e = p.enter(T - 5_000, Flags::NONE);
    p.exit(&e, T - 4_000, Outcome::Ok); // one local timeout
    p.store_remote(
        S,
        S - 2,
        &SecondCounts {
            timeout: 1,
            ..SecondCounts::default()
        },
    );
    p.publish_remote(S);
    assert_eq!(p.enter(T, Flags::NONE).reason(), Some(Reason::Timeout));

    // visit - downgrade > threshold: the others' downgrades are not visits
    // that count against it.
    let p = point(r#"{"visitThreshold": 10}"#);
    p.set_cluster(true);
    p.store_remote(
        S,
        S - 1,
        &SecondCounts {
            visit: 30,
            downgrade: 25,
            ..SecondCounts::default()
        },
    );
    p.publish_remote(S);
    assert_eq!(admitted(&p, 10, T), 5);
}

#[test]
fn remote_counts_age_out_when_nobody_publishes() {
    let p = point(r#"{"visitThreshold": 10}"#);
    p.set_cluster(true);
    p.store_remote(S, S, &visits(10));
    p.publish_remote(S);
    assert_eq!(admitted(&p, 1, T), 0);
    assert_eq!(admitted(&p, 1, T + 5_000), 0, "still in the window");
    // The window of S + 10 no longer holds S: the local visits alone count.
    assert_eq!(admitted(&p, 20, T + 10_000), 10);
    assert_eq!(p.remote_sums(T + 10_000), SecondCounts::default());
}

#[test]
fn seconds_far_from_now_are_not_stored() {
    let p = Point::new();
    p.store_remote(S, S - 10, &visits(1));
    p.store_remote(S, S + 3, &visits(1));
    p.store_remote(S, S + 2, &visits(2));
    p.store_remote(S, S - 9, &visits(4));
    assert_eq!(p.remote_counts(S - 10), SecondCounts::default());
    assert_eq!(p.remote_counts(S + 3), SecondCounts::default());
    assert_eq!(p.remote_counts(S + 2), visits(2));
    assert_eq!(p.remote_counts(S - 9), visits(4));
    assert_eq!(p.local_counts(S), SecondCounts::default());
    p.enter(T, Flags::NONE);
    assert_eq!(p.local_counts(S), visits(1));
}
