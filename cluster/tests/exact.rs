//! Exact mode: every decision of a point is a Lua script in Redis. 4
//! processes admit exactly `visitThreshold` in a window (and the cost of a
//! decision is printed against a local one); the token bucket admits
//! exactly its rate per second; with Redis unreachable the decision is the
//! local one, counted and pushed after recovery.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{free_port, report, spawn_at, var, wait_for_start, Redis, ROLE};
use sds_cluster::{Cluster, Config, Decision};
use sds_core::{Flags, Outcome, Reason, Strategy};
use sds_shm::AnyTable;

const INSTANCES: u64 = 4;
const TRIES: u64 = 15; // per instance
const LIMIT: u64 = 20; // visitThreshold, cluster-wide

fn instance(url: &str, strategy: &str, sync_ms: u64) -> (Arc<AnyTable>, Cluster) {
    let table = Arc::new(AnyTable::private(64).unwrap());
    let s = Strategy::from_json(strategy).unwrap();
    table
        .with_points(|p| {
            p.set_strategy(b"rare", &s).unwrap();
            p.set_strategy(b"local", &s).unwrap();
        })
        .unwrap();
    let mut config = Config::new(url);
    config.points = vec!["rare".into()];
    config.sync_ms = sync_ms;
    config.timeout_ms = 300;
    let cluster = Cluster::start(table.clone(), config).unwrap();
    (table, cluster)
}

fn median_and_p99(mut v: Vec<u64>) -> (u64, u64) {
    v.sort_unstable();
    (v[v.len() / 2], v[v.len() * 99 / 100])
}

#[test]
fn child_main() {
    if std::env::var(ROLE).as_deref() != Ok("exact") {
        return;
    }
    let strategy = format!(r#"{{"visitThreshold": {LIMIT}}}"#);
    let (table, cluster) = instance(&var("URL"), &strategy, 100);
    wait_for_start();
    let (mut admitted, mut exact_ns, mut local_ns) = (0, Vec::new(), Vec::new());
    for _ in 0..TRIES {
        let started = Instant::now();
        let d = cluster.enter_exact("rare", sds_clock::now_ms()).unwrap();
        exact_ns.push(started.elapsed().as_nanos() as u64);
        assert!(d.exact, "{d:?}");
        admitted += u64::from(d.admitted);
        if !d.admitted {
            assert_eq!(d.reason, Some(Reason::Visit));
        }
        // The same decision taken locally, for its cost.
        table
            .with_points(|p| {
                let point = p.point(p.lookup(b"local").unwrap().unwrap()).unwrap();
                let started = Instant::now();
                let now = sds_clock::now_ms();
                let e = point.enter(now, Flags::NONE);
                point.exit(&e, now, Outcome::Ok);
                local_ns.push(started.elapsed().as_nanos() as u64);
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    cluster.stop();
    let ((e50, e99), (l50, l99)) = (median_and_p99(exact_ns), median_and_p99(local_ns));
    report("admitted", admitted);
    report(
        "cost",
        format!("exact {e50} ns median, {e99} ns p99; local {l50} ns median, {l99} ns p99"),
    );
}

#[test]
fn four_processes_in_exact_mode_admit_exactly_the_threshold() {
    let redis = Redis::start();
    let start_at = sds_clock::now_ms() + 1_500;
    let kids = spawn_at("exact", INSTANCES, &redis.url(), start_at);
    let mut admitted = 0;
    for kid in &kids {
        admitted += kid.value("admitted").parse::<u64>().unwrap();
        println!("per decision (debug build): {}", kid.value("cost"));
    }
    let (mut v, mut d) = (0, 0);
    for s in start_at / 1000 - 1..=sds_clock::now_ms() / 1000 {
        v += redis.hget(&format!("{{sds:rare}}:{s}"), "v");
        d += redis.hget(&format!("{{sds:rare}}:{s}"), "d");
    }
    println!(
        "visitThreshold {LIMIT}: {} tries from {INSTANCES} processes, {admitted} admitted; Redis v={v} d={d}",
        INSTANCES * TRIES
    );
    assert_eq!(admitted, LIMIT);
    assert_eq!((v, d), (INSTANCES * TRIES, INSTANCES * TRIES - LIMIT));
}

/// A whole second near the real present (keys expire by the wall clock).
fn present() -> u64 {
    sds_clock::now_ms() / 1000 * 1000
}

#[test]
fn the_token_bucket_in_exact_mode_admits_its_rate_per_second() {
    let redis = Redis::start();
    let strategy = r#"{"tokenBucketGeneratedTokensInSecond": 3}"#;
    let (_, a) = instance(&redis.url(), strategy, 3_600_000);
    let (_, b) = instance(&redis.url(), strategy, 3_600_000);
    let now = present();
    for second in [now, now + 1_000] {
        let decisions: Vec<Decision> = (0..4)
            .flat_map(|i| {
                [
                    a.enter_exact("rare", second + i),
                    b.enter_exact("rare", second + i),
                ]
            })
            .map(Result::unwrap)
            .collect();
        let admitted = decisions.iter().filter(|d| d.admitted).count();
        assert_eq!(admitted, 3, "{decisions:?}");
        assert!(decisions
            .iter()
            .all(|d| d.exact && (d.admitted || d.reason == Some(Reason::TokenBucket))));
    }
    assert!(a.enter_exact("local", now).is_err(), "not a cluster point");
}

#[test]
fn without_redis_exact_mode_decides_locally_and_its_counts_are_pushed_later() {
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let (table, cluster) = instance(&url, r#"{"visitThreshold": 3}"#, 50);
    let first = sds_clock::now_ms() / 1000;
    let started = Instant::now();
    let decisions: Vec<Decision> = (0..5)
        .map(|_| cluster.enter_exact("rare", sds_clock::now_ms()).unwrap())
        .collect();
    println!(
        "5 local fallbacks in {:?}: {decisions:?}",
        started.elapsed()
    );
    assert!(decisions.iter().all(|d| !d.exact));
    assert_eq!(
        decisions.iter().map(|d| d.admitted).collect::<Vec<_>>(),
        [true, true, true, false, false]
    );
    assert_eq!(decisions[4].reason, Some(Reason::Visit));

    // Redis comes up on that port: the syncer pushes the 5 local visits,
    // and the next exact decision sees them.
    let redis = Redis::start_with(port, &[]);
    std::thread::sleep(Duration::from_millis(300));
    cluster.sync_now().unwrap();
    let last = sds_clock::now_ms() / 1000;
    let (v, d): (u64, u64) = (first..=last)
        .map(|s| {
            let key = format!("{{sds:rare}}:{s}");
            (redis.hget(&key, "v"), redis.hget(&key, "d"))
        })
        .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    assert_eq!((v, d), (5, 2));
    let local: u64 = table
        .with_points(|p| {
            let point = p.point(p.lookup(b"rare").unwrap().unwrap()).unwrap();
            (first..=last).map(|s| point.local_counts(s).visit).sum()
        })
        .unwrap();
    assert_eq!(local, 5);
    // The exact connection retries after its backoff (50 ms, doubling).
    std::thread::sleep(Duration::from_millis(250));
    let next = cluster.enter_exact("rare", sds_clock::now_ms()).unwrap();
    assert_eq!(
        next,
        Decision {
            admitted: false,
            reason: Some(Reason::Visit),
            exact: true
        }
    );
}
