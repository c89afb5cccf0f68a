//! `make bench-cluster`: a cluster point's enter + exit against a local
//! point's (same table, same five rules, alternated blocks), and the Redis
//! traffic of one instance syncing two points every 100 ms on a
//! redis-server this program starts on a free loopback port.
mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome, Points};
use sds_shm::AnyTable;

use common::{as_synced, five_rules};

/// ns per enter + exit by id, `n` pairs with the wall clock.
fn pairs(table: &dyn Points, name: &[u8], n: u32) -> f64 {
    let point = table.point(table.lookup(name).unwrap().unwrap()).unwrap();
    let started = Instant::now();
    for _ in 0..n {
        let now = sds_clock::now_ms();
        let e = point.enter(black_box(now), Flags::NONE);
        point.exit(&e, now, Outcome::Ok);
    }
    started.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let table = Arc::new(AnyTable::private(1024).unwrap());
    let s = five_rules();
    table
        .with_points(|p| {
            p.set_strategy(b"local.point", &s).unwrap();
            let id = p.set_strategy(b"cluster.point", &s).unwrap();
            as_synced(p.point(id).unwrap(), sds_clock::now_ms() / 1000);
        })
        .unwrap();

    // The decision alone: the remote counts stay published by hand (no
    // syncer thread competing for the two cores); best of alternated blocks.
    let (mut local, mut cluster) = (f64::MAX, f64::MAX);
    table
        .with_points(|p| {
            for _ in 0..10 {
                let id = p.lookup(b"cluster.point").unwrap().unwrap();
                p.point(id)
                    .unwrap()
                    .publish_remote(sds_clock::now_ms() / 1000);
                local = local.min(pairs(p, b"local.point", 1_000_000));
                cluster = cluster.min(pairs(p, b"cluster.point", 1_000_000));
            }
        })
        .unwrap();
    println!(
        "enter + exit by id, 5 rules, wall clock: local point {local:.1} ns, cluster point \
         {cluster:.1} ns: {:.2}x (goal: at most 1.5x)",
        cluster / local
    );

    // Redis traffic of one instance: a server of its own on loopback.
    let redis = sds_testkit::Redis::start();
    let mut config = Config::new(redis.url());
    config.points = vec!["cluster.point".into(), "local.point".into()];
    let sync = Cluster::start(table.clone(), config).unwrap();
    let run = Duration::from_secs(3);
    let began = Instant::now();
    let mut calls = 0u64;
    table
        .with_points(|p| {
            while began.elapsed() < run {
                pairs(p, b"cluster.point", 1_000);
                calls += 1_000;
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .unwrap();
    let status = sync.status();
    let secs = began.elapsed().as_secs_f64();
    println!(
        "one instance, 2 cluster points, sync every 100 ms, {:.0} calls/s: {:.1} round trips/s, \
         {:.0} Redis commands/s, last round trip {} us, {} failures",
        calls as f64 / secs,
        status.round_trips as f64 / secs,
        status.commands as f64 / secs,
        status.rtt_us,
        status.failures
    );
    // Exact mode: one decision is one Lua script in Redis (a round trip).
    let mut times: Vec<u64> = (0..2_000)
        .map(|_| {
            let started = Instant::now();
            let d = sync
                .enter_exact("cluster.point", sds_clock::now_ms())
                .unwrap();
            assert!(d.exact);
            started.elapsed().as_nanos() as u64
        })
        .collect();
    times.sort_unstable();
    println!(
        "exact mode, one caller: {:.1} us median, {:.1} us p99 per decision ({:.0}x the local \
         enter + exit above)",
        times[times.len() / 2] as f64 / 1000.0,
        times[times.len() * 99 / 100] as f64 / 1000.0,
        times[times.len() / 2] as f64 / local
    );
    sync.stop();
    drop(redis);
}
