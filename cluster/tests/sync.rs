//! Two instances (private tables in this process, each with its own
//! `Cluster`) on one real redis-server, time injected and syncs run by
//! hand: the others' counts arrive, decisions use them, an outage loses
//! nothing the ring still holds, a server that never answers is reported.

mod common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::latency::p99;
use common::points::{admit, on_point, table_with, timed_visits, wait_first_sync};
use common::Redis;
use sds_cluster::{Cluster, Config, Status};
use sds_core::SecondCounts;
use sds_shm::AnyTable;

struct Instance {
    table: Arc<AnyTable>,
    cluster: Cluster,
}

fn clock() -> (Arc<AtomicU64>, sds_cluster::Clock) {
    let now = Arc::new(AtomicU64::new(0));
    let read = now.clone();
    (now, Arc::new(move || read.load(Ordering::SeqCst)))
}

/// An instance whose thread syncs once at start, then only by hand.
fn instance(url: &str, strategy: &str, clock: &sds_cluster::Clock) -> Instance {
    let table = table_with(&["pay"], strategy);
    let mut config = Config::new(url);
    config.points = vec!["pay".into()];
    config.sync_ms = 3_600_000;
    config.timeout_ms = 300;
    let cluster = Cluster::start_with(table.clone(), config, clock.clone()).unwrap();
    wait_first_sync(&cluster);
    Instance { table, cluster }
}

impl Instance {
    /// Admitted of `tries` requests at `now_ms`.
    fn admit(&self, tries: u32, now_ms: u64) -> u32 {
        admit(&self.table, "pay", tries, now_ms)
    }

    fn remote(&self, now_ms: u64) -> SecondCounts {
        on_point(&self.table, "pay", |point| point.remote_sums(now_ms))
    }

    fn status(&self) -> Status {
        self.cluster.status()
    }
}

/// A whole second near the real present (keys expire by the wall clock).
fn present() -> u64 {
    sds_clock::now_ms() / 1000 * 1000
}

#[test]
fn the_others_counts_arrive_and_decide() {
    let redis = Redis::start();
    let (now, clock) = clock();
    let t = present();
    now.store(t, Ordering::SeqCst);
    let a = instance(&redis.url(), r#"{"visitThreshold": 10}"#, &clock);
    let b = instance(&redis.url(), r#"{"visitThreshold": 10}"#, &clock);
    assert!(a.status().syncing && b.status().syncing);

    assert_eq!(a.admit(6, t + 100), 6);
    a.cluster.sync_now().unwrap();
    b.cluster.sync_now().unwrap();
    assert_eq!(b.remote(t + 100).visit, 6);
    assert_eq!(b.admit(10, t + 200), 4, "10 cluster-wide");
    b.cluster.sync_now().unwrap();
    a.cluster.sync_now().unwrap();
    assert_eq!(
        a.remote(t + 300),
        SecondCounts {
            visit: 10,
            downgrade: 6,
            ..SecondCounts::default()
        }
    );
    assert_eq!(a.admit(3, t + 300), 0);
    let key = format!("{{sds:pay}}:{}", t / 1000);
    assert_eq!(redis.hget(&key, "v"), 16, "a's last 3 are not pushed yet");
    assert_eq!(redis.hget(&key, "d"), 6);
    let ttl: i64 = redis.cli(&["PTTL", &key]).unwrap().parse().unwrap();
    assert!(
        (29_000..=31_000).contains(&ttl),
        "expires after the ring: {ttl} ms"
    );

    // Ten seconds on, the window has moved past all of it.
    now.store(t + 10_000, Ordering::SeqCst);
    a.cluster.sync_now().unwrap();
    assert_eq!(a.remote(t + 10_000), SecondCounts::default());
    assert_eq!(a.admit(10, t + 10_000), 10);

    let s = a.status();
    assert!(
        s.connected && s.syncs >= 4 && s.last_error.is_none(),
        "{s:?}"
    );
    assert_eq!(s.round_trips, s.syncs, "one round trip per sync");
    assert_eq!(s.last_sync_ms, t + 10_000);
    assert_eq!(s.points, 1);

    // stop() gives the state as of the join (what status() gives after close).
    let last = a.cluster.stop();
    assert!(last.connected, "{last:?}");
    assert_eq!(
        last.syncs, s.syncs,
        "no sync since: the thread syncs only at start"
    );
    assert_eq!((last.last_sync_ms, last.points), (t + 10_000, 1));

    // Stopped: the status stays the last one, its lag no longer grows, the
    // calls to Redis are refused, a second stop gives the same.
    now.store(t + 20_000, Ordering::SeqCst);
    assert!(!a.cluster.is_running());
    assert_eq!(a.status(), last);
    let closed = |r: Result<_, sds_cluster::Error>| matches!(r, Err(sds_cluster::Error::Closed));
    assert!(closed(a.cluster.sync_now()));
    assert!(closed(a.cluster.enter_exact("pay", t + 20_000).map(drop)));
    assert_eq!(a.cluster.stop(), last);
}

#[test]
fn counts_made_during_an_outage_are_pushed_after_it() {
    let mut redis = Redis::start();
    let (now, clock) = clock();
    let t = present();
    now.store(t, Ordering::SeqCst);
    let a = instance(&redis.url(), r#"{"visitThreshold": 1000}"#, &clock);
    let b = instance(&redis.url(), r#"{"visitThreshold": 1000}"#, &clock);
    a.admit(6, t);
    a.cluster.sync_now().unwrap();

    redis.stop(); // its data is gone too: no persistence
    now.store(t + 1_500, Ordering::SeqCst);
    a.admit(5, t + 1_500);
    let err = a.cluster.sync_now().unwrap_err().to_string();
    let s = a.status();
    assert!(!s.connected, "{s:?}");
    assert_eq!(s.last_error.as_deref(), Some(&err["redis: ".len()..]));
    assert_eq!(s.lag_ms, 1_500);
    println!("while down: {err}");

    redis.run();
    now.store(t + 3_000, Ordering::SeqCst);
    // A connection to the old server fails at its next round trip (one
    // period lost, never retried at once: Redis may have applied the
    // increments of a round trip whose answer was lost).
    for instance in [&a, &b] {
        if let Err(e) = instance.cluster.sync_now() {
            println!("first sync after the restart: {e}");
        }
    }
    // Redis came back empty: this instance's own 6 are pushed again too.
    a.cluster.sync_now().unwrap();
    a.cluster.sync_now().unwrap();
    b.cluster.sync_now().unwrap();
    assert_eq!(b.remote(t + 3_000).visit, 11);
    assert_eq!(redis.hget(&format!("{{sds:pay}}:{}", t / 1000), "v"), 6);
    assert_eq!(redis.hget(&format!("{{sds:pay}}:{}", t / 1000 + 1), "v"), 5);
    assert!(a.status().connected);
}

#[test]
fn a_server_that_never_answers_is_reported_and_enter_does_not_wait() {
    // Accepts connections (the kernel's backlog) and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let table = table_with(&["pay"], r#"{"visitThreshold": 1000000000}"#);
    let p99 = |table: &AnyTable| -> u64 { p99(&timed_visits(table, "pay", 20_000)) };
    let before = p99(&table);
    let mut config = Config::new(url);
    config.points = vec!["pay".into()];
    config.sync_ms = 20;
    config.timeout_ms = 200;
    let cluster = Cluster::start(table.clone(), config).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let during = p99(&table);
    common::wait_until(Duration::from_secs(5), "a reported failure", || {
        cluster.status().failures > 0
    });
    let s = cluster.status();
    println!("silent server: p99 enter+exit {before} ns before, {during} ns while syncing; {s:?}");
    assert!(!s.connected && s.last_sync_ms == 0, "{s:?}");
    assert!(s.last_error.is_some());
    let started = Instant::now();
    cluster.stop();
    let stopped = started.elapsed();
    println!("stop took {stopped:?}");
    assert!(
        stopped < Duration::from_millis(900),
        "stop within a round trip's timeouts: {stopped:?}"
    );
}
