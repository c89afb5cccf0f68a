//! Redis stopped for 5 s in the middle of a run and started again (empty: no
//! persistence): `enter` latency stays where it was (p99 before, during and
//! after, printed), the status shows the outage, and after recovery Redis
//! holds every count of the run (all inside the ring): the deltas made
//! during the outage, and this instance's earlier counts that Redis lost.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::latency::assert_p99_kept;
use common::points::{on_point, table_with};
use common::{wait_until, Redis};
use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome};

#[test]
fn an_outage_delays_no_enter_and_loses_no_count() {
    let mut redis = Redis::start();
    let table = table_with(&["pay"], r#"{"visitThreshold": 1000000000}"#);
    let mut config = Config::new(redis.url());
    config.points = vec!["pay".into()];
    config.sync_ms = 50;
    config.timeout_ms = 200;
    config.max_backoff_ms = 400;
    let cluster = Cluster::start(table.clone(), config).unwrap();

    // Traffic: ~2000 enter + exit a second, each timed, in phases.
    let phase = Arc::new(Mutex::new(Vec::<u64>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let first_second = sds_clock::now_ms() / 1000;
    let traffic = {
        let (table, phase, stop) = (table.clone(), phase.clone(), stop.clone());
        std::thread::spawn(move || {
            on_point(&table, "pay", |point| {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let now = sds_clock::now_ms();
                    let e = point.enter(now, Flags::NONE);
                    point.exit(&e, now, Outcome::Ok);
                    let ns = started.elapsed().as_nanos() as u64;
                    phase.lock().unwrap().push(ns);
                    std::thread::sleep(Duration::from_micros(500));
                }
            })
        })
    };
    let take = || std::mem::take(&mut *phase.lock().unwrap());

    std::thread::sleep(Duration::from_millis(1_000));
    assert!(cluster.status().connected, "{:?}", cluster.status());
    let before = take();
    redis.stop();
    wait_until(Duration::from_secs(3), "the outage in the status", || {
        !cluster.status().connected
    });
    // The issue's outage: 5 s with Redis stopped.
    std::thread::sleep(Duration::from_millis(5_000));
    let outage = cluster.status();
    let during = take();
    redis.run();
    let syncs = cluster.status().syncs;
    wait_until(Duration::from_secs(5), "a sync after the restart", || {
        let s = cluster.status();
        s.connected && s.syncs > syncs + 2
    });
    std::thread::sleep(Duration::from_millis(500));
    let after = take();
    stop.store(true, Ordering::Relaxed);
    traffic.join().unwrap();
    cluster.sync_now().unwrap();
    cluster.sync_now().unwrap();

    println!("during the outage: {outage:?}");
    assert!(!outage.connected && outage.failures > 0 && outage.last_error.is_some());
    assert!(outage.lag_ms >= 4_500, "{outage:?}");
    assert_p99_kept(
        [
            ("connected", &before),
            ("while Redis is down", &during),
            ("after", &after),
        ],
        "Redis down must not slow enter",
    );

    // Every count of the run is in Redis: the seconds before the outage
    // (lost with the server, pushed again), during it, and after.
    let last_second = sds_clock::now_ms() / 1000;
    let (local, pushed): (u64, u64) = on_point(&table, "pay", |point| {
        (first_second..=last_second)
            .map(|s| {
                let key = format!("{{sds:pay}}:{s}");
                (point.local_counts(s).visit, redis.hget(&key, "v"))
            })
            .fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
    });
    println!("visits counted {local}, in Redis {pushed}");
    assert!(local > 2_000);
    assert_eq!(pushed, local);
    cluster.stop();
}
