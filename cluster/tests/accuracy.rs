//! Accuracy across processes: 4 instances (this test binary run again),
//! each with its own table and syncer on one real redis-server, send at a
//! known rate R to two cluster points, one with `visitThreshold = T`, one
//! with a token bucket of `RATE` per second. The admitted total per 10 s
//! window (and per second for the bucket), summed over the instances, must
//! stay within the documented bound: (N - 1) x R x (sync_ms + RTT) over the
//! limit.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{report, spawn_at, var, wait_for_start, Redis, ROLE};
use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome, Strategy};
use sds_shm::AnyTable;

const INSTANCES: u64 = 4;
const RATE: u64 = 200; // requests per second per instance, to each point
const VISIT_LIMIT: u64 = 1_000; // per 10 s window, cluster-wide
const TOKENS: u64 = 100; // per second, cluster-wide
const SYNC_MS: u64 = 100;
const RUN_S: u64 = 12;

#[test]
fn child_main() {
    if std::env::var(ROLE).as_deref() != Ok("sender") {
        return;
    }
    let table = Arc::new(AnyTable::private(64).unwrap());
    let visit = Strategy::from_json(&format!(r#"{{"visitThreshold": {VISIT_LIMIT}}}"#)).unwrap();
    let token = Strategy::from_json(&format!(
        r#"{{"tokenBucketGeneratedTokensInSecond": {TOKENS}}}"#
    ))
    .unwrap();
    let (v, t) = table
        .with_points(|p| {
            (
                p.set_strategy(b"visit", &visit).unwrap(),
                p.set_strategy(b"token", &token).unwrap(),
            )
        })
        .unwrap();
    let mut config = Config::new(var("URL"));
    config.points = vec!["visit".into(), "token".into()];
    config.sync_ms = SYNC_MS;
    let cluster = Cluster::start(table.clone(), config).unwrap();
    wait_for_start();
    let began = Instant::now();
    let interval = Duration::from_micros(1_000_000 / RATE);
    // second -> (admitted on "visit", admitted on "token")
    let mut admitted: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    table
        .with_points(|p| {
            let (pv, pt) = (p.point(v).unwrap(), p.point(t).unwrap());
            for i in 0..RATE * RUN_S {
                let due = began + interval * i as u32;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let now = sds_clock::now_ms();
                let a = admitted.entry(now / 1000).or_default();
                for (point, count) in [(pv, &mut a.0), (pt, &mut a.1)] {
                    let e = point.enter(now, Flags::NONE);
                    *count += u64::from(!e.downgraded());
                    point.exit(&e, now, Outcome::Ok);
                }
            }
        })
        .unwrap();
    let status = cluster.status();
    cluster.stop();
    let line: Vec<String> = admitted
        .iter()
        .map(|(s, (a, b))| format!("{s}:{a}:{b}"))
        .collect();
    report("admitted", line.join(","));
    report("rtt_us", status.rtt_us);
    report("syncs", status.syncs);
}

#[test]
fn four_instances_hold_a_cluster_limit_within_the_bound() {
    let redis = Redis::start();
    let start_at = (sds_clock::now_ms() / 1000 + 2) * 1000;
    let kids = spawn_at("sender", INSTANCES, &redis.url(), start_at);
    let mut per_second: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut worst_rtt_us = 0;
    for kid in &kids {
        for item in kid.value("admitted").split(',') {
            let f: Vec<u64> = item.split(':').map(|x| x.parse().unwrap()).collect();
            let e = per_second.entry(f[0]).or_default();
            e.0 += f[1];
            e.1 += f[2];
        }
        worst_rtt_us = worst_rtt_us.max(kid.value("rtt_us").parse::<u64>().unwrap());
        let syncs: u64 = kid.value("syncs").parse().unwrap();
        assert!(
            syncs >= RUN_S * 1000 / SYNC_MS / 2,
            "the syncer ran: {syncs} syncs"
        );
    }
    // The bound for a period of sync_ms plus the slowest round trip seen
    // (the machine is shared: a sync may also run late; see README).
    let lag_ms = SYNC_MS as f64 + worst_rtt_us as f64 / 1000.0;
    let bound = ((INSTANCES - 1) * RATE) as f64 * lag_ms / 1000.0;
    let first = start_at / 1000;
    let windows: Vec<u64> = (first + 9..first + RUN_S)
        .map(|end| {
            (end - 9..=end)
                .map(|s| per_second.get(&s).map_or(0, |a| a.0))
                .sum()
        })
        .collect();
    let seconds: Vec<u64> = (first..first + RUN_S)
        .map(|s| per_second.get(&s).map_or(0, |a| a.1))
        .collect();
    println!(
        "visitThreshold T = {VISIT_LIMIT}, {INSTANCES} instances x {RATE}/s, sync {SYNC_MS} ms, \
         worst RTT {worst_rtt_us} us: bound T + {bound:.0}; admitted per full window: {windows:?}"
    );
    println!(
        "token bucket {TOKENS}/s: bound {TOKENS} + {bound:.0} per second; admitted per second: {seconds:?}"
    );
    // Twice the bound: scheduling on a loaded 2-core machine delays syncs
    // beyond sync_ms now and then.
    let slack = 2.0 * bound;
    for (i, w) in windows.iter().enumerate() {
        assert!(
            *w as f64 <= VISIT_LIMIT as f64 + slack && *w >= VISIT_LIMIT,
            "window {i}: {w} admitted, T = {VISIT_LIMIT}, bound {bound:.0}"
        );
    }
    for (i, n) in seconds.iter().enumerate() {
        assert!(
            *n as f64 <= TOKENS as f64 + slack,
            "second {i}: {n} admitted, {TOKENS}/s, bound {bound:.0}"
        );
    }
    let full: Vec<&u64> = seconds[1..].iter().filter(|&&n| n >= TOKENS).collect();
    assert!(
        full.len() >= seconds.len() - 3,
        "the bucket was used up: {seconds:?}"
    );
    // With local counts only, each instance would admit T: 4 T in all.
    assert!(windows.iter().all(|&w| w < 2 * VISIT_LIMIT));
}
