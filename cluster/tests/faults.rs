//! Redis stopped for 5 s in the middle of a run and started again (empty: no
//! persistence): `enter` latency stays where it was (p99 before, during and
//! after, printed), the status shows the outage, and after recovery Redis
//! holds every count of the run (all inside the ring): the deltas made
//! during the outage, and this instance's earlier counts that Redis lost.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{wait_until, Redis};
use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome, Strategy};
use sds_shm::AnyTable;

fn p99(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() * 99 / 100]
}

#[test]
fn an_outage_delays_no_enter_and_loses_no_count() {
    let mut redis = Redis::start();
    let table = Arc::new(AnyTable::private(64).unwrap());
    let s = Strategy::from_json(r#"{"visitThreshold": 1000000000}"#).unwrap();
    table
        .with_points(|p| p.set_strategy(b"pay", &s).unwrap())
        .unwrap();
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
            table
                .with_points(|p| {
                    let point = p.point(p.lookup(b"pay").unwrap().unwrap()).unwrap();
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
                .unwrap()
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

    println!(
        "p99 enter+exit: {} ns connected ({} calls), {} ns while Redis is down ({} calls), \
         {} ns after ({} calls)",
        p99(before.clone()),
        before.len(),
        p99(during.clone()),
        during.len(),
        p99(after.clone()),
        after.len()
    );
    println!("during the outage: {outage:?}");
    assert!(!outage.connected && outage.failures > 0 && outage.last_error.is_some());
    assert!(outage.lag_ms >= 4_500, "{outage:?}");
    assert!(
        p99(during.clone()) < 5 * p99(before.clone()) + 50_000,
        "Redis down must not slow enter"
    );

    // Every count of the run is in Redis: the seconds before the outage
    // (lost with the server, pushed again), during it, and after.
    let last_second = sds_clock::now_ms() / 1000;
    let (local, pushed): (u64, u64) = table
        .with_points(|p| {
            let point = p.point(p.lookup(b"pay").unwrap().unwrap()).unwrap();
            (first_second..=last_second)
                .map(|s| {
                    let key = format!("{{sds:pay}}:{s}");
                    (point.local_counts(s).visit, redis.hget(&key, "v"))
                })
                .fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
        })
        .unwrap();
    println!("visits counted {local}, in Redis {pushed}");
    assert!(local > 2_000);
    assert_eq!(pushed, local);
    cluster.stop();
}
