//! A real 3-master Redis Cluster (no replicas) on loopback, created by the
//! test with `redis-cli --cluster create`; two instances (private tables in
//! this process, each with its own `Cluster`) sync points whose hash tags
//! land on the three masters, several per master. A sync sends one
//! pipeline per master, whatever the number of points. The counts meet;
//! then one master is killed (-9): `enter` keeps its latency (p99 printed),
//! the status names its failing points, the points of the other masters
//! keep syncing; after the master restarts (same port and nodes.conf, so it
//! rejoins, empty) every count of the run is in the cluster again, once.
//!
//! The servers run with `cluster-require-full-coverage no`: with the
//! default (`yes`), a master down stops the whole cluster once the others
//! mark it failed, and every point then decides on local counts as in a
//! single-server outage.

mod common;

use std::time::Duration;

use common::instance::{assert_every_count_stored, met_under_traffic, visit_and_meet, Instance};
use common::latency::assert_p99_kept;
use common::redis_cluster::{points_per_master, start_cluster, wait_for_ok};
use common::{wait_until, Redis};

#[test]
fn a_sync_sends_one_pipeline_per_master() {
    let nodes = start_cluster(None);
    let urls: Vec<String> = nodes.iter().map(Redis::url).collect();
    let by_port = points_per_master(&nodes, 3);
    let names: Vec<String> = by_port.values().flatten().cloned().collect();
    println!("points per master: {by_port:?}");
    assert_eq!(names.len(), 9);

    // A period of an hour: the thread syncs once at start, then only
    // `sync_now` does, so the counters move by exactly what it sends.
    let hour = 3_600_000;
    let (a, b) = (
        Instance::new(&urls, &names, hour),
        Instance::new(&urls, &names, hour),
    );
    wait_until(Duration::from_secs(5), "the first syncs", || {
        a.cluster.status().syncs == 1 && b.cluster.status().syncs == 1
    });
    // A new connection: CLUSTER SLOTS, then one pipeline per master of
    // 11 HMGET per point (nothing counted yet, so no HINCRBY).
    let first = a.cluster.status();
    assert_eq!(
        (first.round_trips, first.commands, first.failures),
        (1 + 3, 1 + 9 * 11, 0),
        "{first:?}"
    );

    let first_second = sds_clock::now_ms() / 1000;
    visit_and_meet(&a, &b, &names, first_second);

    let before = a.cluster.status();
    for _ in 0..5 {
        a.cluster.sync_now().unwrap();
    }
    let after = a.cluster.status();
    println!("before {before:?}\nafter {after:?}");
    assert_eq!(after.syncs - before.syncs, 5);
    assert_eq!(
        after.round_trips - before.round_trips,
        5 * 3,
        "one round trip per master and sync, not one per point"
    );
    assert_eq!(after.commands - before.commands, 5 * 9 * 11);
    assert_eq!((after.failures, after.points_failing), (0, 0));
    assert!(after.connected && after.last_error.is_none(), "{after:?}");

    // Still exact: each point's seconds in the cluster hold both instances'
    // visits once.
    let now_s = sds_clock::now_ms() / 1000;
    for name in &names {
        let stored: u64 = (first_second..=now_s)
            .map(|s| {
                nodes[0]
                    .cli(&["-c", "HGET", &format!("{{sds:{name}}}:{s}"), "v"])
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            })
            .sum();
        assert_eq!(stored, 8, "{name}");
    }
}

#[test]
fn a_redis_cluster_shares_counts_and_survives_a_lost_master() {
    let mut nodes = start_cluster(None);
    let urls: Vec<String> = nodes.iter().map(Redis::url).collect();
    // Two points per master: the lost master's pipeline carries both.
    let by_port = points_per_master(&nodes, 2);
    let killed = nodes[1].port;
    let names: Vec<String> = by_port.values().flatten().cloned().collect();
    let lost = by_port[&killed].clone();
    println!("points per master: {by_port:?}; master {killed} ({lost:?}) will be killed");

    // Two instances that have met, traffic on both and all points, timed,
    // in phases.
    let (traffic, first_second) = met_under_traffic(&urls, &names);
    let (a, b) = traffic.instances();

    std::thread::sleep(Duration::from_millis(1_000));
    assert!(a.cluster.status().connected && b.cluster.status().connected);
    let before = traffic.take();

    nodes[1].stop();
    wait_until(
        Duration::from_secs(3),
        "the lost master in the status",
        || a.cluster.status().points_failing == 2 && b.cluster.status().points_failing == 2,
    );
    let start = a.cluster.status();
    std::thread::sleep(Duration::from_millis(2_500));
    let outage = a.cluster.status();
    let during = traffic.take();
    println!("during the outage: {outage:?}");
    assert!(outage.connected, "the other masters still answer");
    assert_eq!(outage.points_failing, 2);
    let syncs = outage.syncs - start.syncs;
    assert!(syncs > 10, "{outage:?}");
    for name in &lost {
        assert!(
            outage
                .last_error
                .as_deref()
                .unwrap()
                .contains(name.as_str()),
            "{outage:?}"
        );
    }
    // Each sync: a new connection (the last one failed) reads the slot map,
    // then one pipeline per master, the lost one's included (not one per
    // point: 6). A sync in progress may show its round trips only.
    let trips = outage.round_trips - start.round_trips;
    assert!(
        trips <= (1 + 3) * (syncs + 1),
        "{trips} round trips in {syncs} syncs"
    );
    // The points of the live masters carry the other instance's visits of
    // the last full second; the lost master's point has none since the kill.
    let last = sds_clock::now_ms() / 1000 - 1;
    for name in &names {
        let (_, others) = a.visits(name, last);
        if lost.contains(name) {
            assert_eq!(others, 0, "{name}");
        } else {
            assert!(others > 100, "{name}: {others}");
        }
    }

    // Exact mode on the lost master's point: the local decision.
    let d = a
        .cluster
        .enter_exact(&lost[0], sds_clock::now_ms())
        .unwrap();
    assert!(d.admitted && !d.exact, "{d:?}");

    nodes[1].run();
    wait_for_ok(&nodes[1]);
    wait_until(Duration::from_secs(10), "every point syncing again", || {
        let (sa, sb) = (a.cluster.status(), b.cluster.status());
        sa.points_failing == 0 && sb.points_failing == 0 && sa.last_error.is_none()
    });
    std::thread::sleep(Duration::from_millis(500));
    let after = traffic.take();
    traffic.stop();
    assert_p99_kept(
        [
            ("all masters up", &before),
            ("one master down", &during),
            ("after its restart", &after),
        ],
        "a lost master must not slow enter",
    );

    // No count lost: per point and second, the cluster holds both
    // instances' visits (the restarted master's too: pushed again), and
    // each instance's remote counts of the window are the other's.
    assert_every_count_stored((a, b), &names, first_second, |name, s, _| {
        nodes[0]
            .cli(&["-c", "HGET", &format!("{{sds:{name}}}:{s}"), "v"])
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    });
    // Exact mode works on every master (the script's keys share a slot).
    for name in &names {
        let d = b.cluster.enter_exact(name, sds_clock::now_ms()).unwrap();
        assert!(d.admitted && d.exact, "{name}: {d:?}");
    }
}
