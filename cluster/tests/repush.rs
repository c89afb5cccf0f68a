//! What is pushed again, and what never is, on a real redis-server with
//! time injected and syncs by hand: a key of one point corrupted (a
//! string, a list, fields that hold no count, a field at the edge of
//! overflow) fails that point's commands only, and no applied increment is
//! pushed again; after Redis loses its data (FLUSHALL) every second of the
//! 30 s ring is pushed again.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::points::{admit, table_with, wait_first_sync};
use common::Redis;
use sds_cluster::{Cluster, Config};
use sds_shm::AnyTable;

/// A whole second near the real present (keys expire by the wall clock).
fn present() -> u64 {
    sds_clock::now_ms() / 1000 * 1000
}

fn start(
    url: &str,
    points: &[&str],
    prefix: &str,
    now: &Arc<AtomicU64>,
) -> (Arc<AnyTable>, Cluster) {
    let table = table_with(points, r#"{"visitThreshold": 1000000}"#);
    let mut config = Config::new(url);
    config.points = points.iter().map(|p| p.to_string()).collect();
    config.sync_ms = 3_600_000;
    config.key_prefix = prefix.into();
    let read = now.clone();
    let clock: sds_cluster::Clock = Arc::new(move || read.load(Ordering::SeqCst));
    let cluster = Cluster::start_with(table.clone(), config, clock).unwrap();
    wait_first_sync(&cluster);
    (table, cluster)
}

/// The syncer's own field of `kind` in `key` (the one `kind:<id>` field).
fn own_field(redis: &Redis, key: &str, kind: &str) -> Option<String> {
    let all = redis.cli(&["HGETALL", key])?;
    let lines: Vec<&str> = all.lines().collect();
    lines
        .chunks(2)
        .find(|f| f[0].starts_with(&format!("{kind}:")))
        .map(|f| f[1].to_string())
}

#[test]
fn a_corrupted_key_fails_its_point_only_and_nothing_applied_is_pushed_again() {
    let redis = Redis::start();
    let t = present();
    let s = t / 1000;
    let now = Arc::new(AtomicU64::new(t));
    // How each corruption is made on the key of `bad`'s second s, and
    // whether its own field still takes the increment.
    let cases: [(&str, &[&[&str]], bool); 6] = [
        ("string", &[&["SET", "K", "x"]], false),
        ("list", &[&["RPUSH", "K", "x"]], false),
        ("abc", &[&["HSET", "K", "v", "abc"]], true),
        ("minus50", &[&["HSET", "K", "v", "-50"]], true),
        ("decimal", &[&["HSET", "K", "v", "1.5"]], true),
        (
            "overflow",
            &[&["HSET", "K", "v", "9223372036854775807"]],
            true,
        ),
    ];
    for (prefix, corrupt, own_takes_it) in cases {
        let (table, cluster) = start(&redis.url(), &["good", "bad"], prefix, &now);
        let key = |point: &str| format!("{{{prefix}:{point}}}:{s}");
        for cmd in corrupt {
            let cmd: Vec<String> = cmd
                .iter()
                .map(|a| if *a == "K" { key("bad") } else { a.to_string() })
                .collect();
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            redis.cli(&args).unwrap();
        }
        assert_eq!(admit(&table, "good", 53, t + 100), 53);
        assert_eq!(admit(&table, "bad", 5, t + 100), 5);
        // The point that can sync does: not an error of the call.
        cluster.sync_now().unwrap();
        let status = cluster.status();
        assert!(status.connected, "{prefix}: {status:?}");
        assert_eq!(status.points_failing, 1, "{prefix}: {status:?}");
        let error = status.last_error.clone().unwrap();
        assert!(error.starts_with("sync: bad: "), "{prefix}: {error}");
        assert!(error.contains(&key("bad")), "{prefix}: {error}");
        println!("{prefix}: {error}");
        cluster.sync_now().unwrap();
        cluster.sync_now().unwrap();
        assert_eq!(
            redis.hget(&key("good"), "v"),
            53,
            "{prefix}: good pushed once"
        );
        assert_eq!(
            own_field(&redis, &key("good"), "v").as_deref(),
            Some("53"),
            "{prefix}"
        );
        if own_takes_it {
            // Its own field took the 5 once; the total field was left alone.
            assert_eq!(
                own_field(&redis, &key("bad"), "v").as_deref(),
                Some("5"),
                "{prefix}"
            );
        }
        // Repaired (deleted): Redis holds bad's 5 once, whether they were
        // never applied or lost with the key.
        redis.cli(&["DEL", &key("bad")]).unwrap();
        cluster.sync_now().unwrap();
        cluster.sync_now().unwrap();
        assert_eq!(redis.hget(&key("bad"), "v"), 5, "{prefix}");
        assert_eq!(
            own_field(&redis, &key("bad"), "v").as_deref(),
            Some("5"),
            "{prefix}"
        );
        let status = cluster.status();
        assert!(
            status.last_error.is_none() && status.points_failing == 0,
            "{prefix}: {status:?}"
        );
        assert_eq!(redis.hget(&key("good"), "v"), 53, "{prefix}");
        cluster.stop();
    }
}

#[test]
fn after_a_flushall_every_second_of_the_ring_is_pushed_again() {
    let redis = Redis::start();
    let t = present();
    let now = Arc::new(AtomicU64::new(t));
    let (table, cluster) = start(&redis.url(), &["pay"], "sds", &now);
    // 20 s of traffic, a sync every second.
    for i in 0..20u64 {
        now.store(t + i * 1000, Ordering::SeqCst);
        admit(&table, "pay", 10 + i as u32, t + i * 1000 + 500);
        cluster.sync_now().unwrap();
    }
    let key = |i: u64| format!("{{sds:pay}}:{}", t / 1000 + i);
    let in_redis = || {
        (0..20)
            .map(|i| redis.hget(&key(i), "v"))
            .collect::<Vec<_>>()
    };
    let counted: Vec<u64> = (0..20).map(|i| 10 + i).collect();
    assert_eq!(in_redis(), counted);
    redis.cli(&["FLUSHALL"]).unwrap();
    now.store(t + 20_000, Ordering::SeqCst);
    cluster.sync_now().unwrap(); // finds the loss
    cluster.sync_now().unwrap(); // pushes it again
    let again = in_redis();
    println!(
        "after FLUSHALL: {} of {} visits pushed again",
        again.iter().sum::<u64>(),
        counted.iter().sum::<u64>()
    );
    assert_eq!(again, counted, "every second of the ring");
    cluster.sync_now().unwrap();
    assert_eq!(in_redis(), counted, "and once");
}
