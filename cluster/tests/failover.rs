//! A Redis Cluster failover: 3 masters with one replica each, created by
//! the test (`redis-cli --cluster create --cluster-replicas 1`,
//! `cluster-node-timeout 1000`). Two instances (private tables in this
//! process, each with its own `Cluster`, `sync_ms` 50) sync one point per
//! master under traffic. A master is killed (-9) and its replica promoted
//! by the cluster itself; the test neither restarts the master nor touches
//! the syncers. `enter` keeps its latency (p99 printed), the status names
//! the lost point until the promotion, then every point syncs again, and
//! per point and second Redis holds each instance's visits exactly once.
//!
//! What a failover may lose: Redis replicates asynchronously, so writes the
//! master acknowledged but had not sent to its replica are lost by Redis;
//! the syncer sees its own fields below what it pushed and pushes the
//! difference again (README, "How a sync works"). The test makes the kill
//! deterministic: traffic paused, both instances synced, the replica's
//! offset equal to the master's, then the kill; so nothing is in flight and
//! an exact count is expected. The seed URLs are the three masters; the
//! killed one first (the seed the crate tries first) or last.

mod common;

use std::time::{Duration, Instant};

use common::instance::{assert_every_count_stored, met_under_traffic};
use common::latency::assert_p99_kept;
use common::redis_cluster::{
    master_ports, one_point_per_master, replica_of, role, start_cluster_with_replicas,
    wait_replicated,
};
use common::{wait_until, Redis};

/// Node timeout (1 s) + the replica's election delay (0.5 to 1 s) +
/// the vote, with room for a loaded machine.
const FAILOVER_BOUND: Duration = Duration::from_secs(15);

#[test]
fn a_promoted_replica_takes_over_when_the_first_seed_dies() {
    failover(true);
}

#[test]
fn a_promoted_replica_takes_over_when_another_seed_dies() {
    failover(false);
}

fn failover(killed_is_first_seed: bool) {
    let mut nodes = start_cluster_with_replicas(3);
    let masters = master_ports(&nodes);
    let killed = if killed_is_first_seed {
        masters[0]
    } else {
        masters[2]
    };
    let urls: Vec<String> = masters
        .iter()
        .map(|port| format!("redis://127.0.0.1:{port}"))
        .collect();
    let replica = replica_of(&nodes, killed);
    let by_port = one_point_per_master(&nodes);
    let names: Vec<String> = by_port.values().cloned().collect();
    let lost = by_port[&killed].clone();
    let at = |port: u16| nodes.iter().position(|n| n.port == port).unwrap();
    let (k, r) = (at(killed), at(replica));
    println!(
        "seeds {urls:?}; points per master {by_port:?}; master {killed} ({lost}) will be \
         killed, its replica {replica} promoted"
    );

    // Two instances that have met, traffic on both and all points, timed.
    let (traffic, first_second) = met_under_traffic(&urls, &names);
    let (a, b) = traffic.instances();

    std::thread::sleep(Duration::from_millis(1_000));
    let before = traffic.take();
    for i in [a, b] {
        let s = i.cluster.status();
        assert!(s.connected && s.points_failing == 0, "{s:?}");
    }

    // Nothing in flight at the kill: traffic paused, every count pushed
    // (each instance syncs once more), the replica holds all of it.
    traffic.pause(true);
    for i in [a, b] {
        i.cluster.sync_now().unwrap();
        let s = i.cluster.status();
        assert_eq!(s.points_failing, 0, "{s:?}");
    }
    wait_replicated(&nodes[k], &nodes[r]);
    let killed_at = Instant::now();
    nodes[k].stop();
    traffic.pause(false);

    // Until the promotion, the lost master's point fails; the others sync.
    wait_until(
        Duration::from_secs(3),
        "the lost point in the status",
        || a.cluster.status().points_failing == 1 && b.cluster.status().points_failing == 1,
    );
    let failing = a.cluster.status();
    let reported_in = killed_at.elapsed();
    assert_eq!(
        role(&nodes[r]).as_deref(),
        Some("slave"),
        "the status must show the lost point before the promotion"
    );
    println!("before the promotion ({reported_in:?} after the kill): {failing:?}");
    assert!(failing.connected, "{failing:?}");
    let message = failing.last_error.as_deref().unwrap();
    assert!(message.contains(&format!("{lost}: ")), "{message}");
    for name in names.iter().filter(|&n| *n != lost) {
        assert!(!message.contains(&format!("{name}: ")), "{message}");
    }

    // The cluster promotes the replica; the syncers find it on their own.
    while role(&nodes[r]).as_deref() != Some("master") {
        assert!(killed_at.elapsed() < FAILOVER_BOUND, "no promotion");
        std::thread::sleep(Duration::from_millis(20));
    }
    let promoted_in = killed_at.elapsed();
    wait_until(
        FAILOVER_BOUND.saturating_sub(promoted_in),
        "every point syncing again on the promoted replica",
        || {
            [a, b].iter().all(|i| {
                let s = i.cluster.status();
                s.connected && s.points_failing == 0 && s.last_error.is_none()
            })
        },
    );
    let recovered_in = killed_at.elapsed();
    let during = traffic.take();
    let recovered = a.cluster.status();
    println!(
        "replica promoted {promoted_in:?} after the kill, every point syncing again \
         {recovered_in:?} after it ({:?} after the promotion): {recovered:?}",
        recovered_in - promoted_in
    );

    std::thread::sleep(Duration::from_millis(1_000));
    let after = traffic.take();
    // The lost point carries the other instance's visits of the last full
    // second again (synced by the threads, not by the test).
    let last = sds_clock::now_ms() / 1000 - 1;
    for name in &names {
        let (_, others) = a.visits(name, last);
        assert!(others > 100, "{name}: {others}");
    }
    traffic.stop();
    assert_p99_kept(
        [
            ("all masters up", &before),
            ("from the kill to the recovery", &during),
            ("after", &after),
        ],
        "a failover must not slow enter",
    );

    // Per point and second: Redis holds both instances' visits once (the
    // total), each instance's own field equals its local count, and each
    // instance's remote counts of the window are the other's.
    assert_every_count_stored((a, b), &names, first_second, |name, s, own| {
        let (total, mut per_syncer) = visits_in_redis(&nodes, &format!("{{sds:{name}}}:{s}"));
        let mut own: Vec<u64> = own.into_iter().filter(|&n| n > 0).collect();
        own.sort_unstable();
        per_syncer.sort_unstable();
        assert_eq!(per_syncer, own, "{name} second {s}");
        total
    });

    // Exact mode reaches the promoted replica too (after its own backoff,
    // if an exact call had failed).
    for name in &names {
        let d = b.cluster.enter_exact(name, sds_clock::now_ms()).unwrap();
        assert!(d.admitted && d.exact, "{name}: {d:?}");
    }
}

/// The `v` total of `key` and each syncer's own `v:<id>` field, read with
/// redirections from the first node that answers.
fn visits_in_redis(nodes: &[Redis], key: &str) -> (u64, Vec<u64>) {
    let all = nodes
        .iter()
        .find_map(|n| n.cli(&["-c", "HGETALL", key]))
        .unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let (mut total, mut per_syncer) = (0, Vec::new());
    for pair in lines.chunks(2) {
        if let [field, value] = pair {
            let value: u64 = value.parse().unwrap();
            if *field == "v" {
                total = value;
            } else if field.starts_with("v:") {
                per_syncer.push(value);
            }
        }
    }
    (total, per_syncer)
}
