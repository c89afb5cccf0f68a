//! A shared table's syncer killed with SIGKILL: another process of the host
//! takes the syncer role over on its own next period, syncing goes on, and
//! what the dead syncer had pushed is not pushed twice.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{report, var, wait_until, Kid, Redis, TempDir, ROLE};
use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome};
use sds_shm::{AnyTable, Options};

const CAPACITY: usize = 16;
const LONG: Duration = Duration::from_secs(20);

fn start(path: &str, url: &str) -> (Arc<AnyTable>, Cluster) {
    let table = Arc::new(AnyTable::shared(path, CAPACITY, &Options::new()).unwrap());
    let mut config = Config::new(url);
    config.points = vec!["pay".into()];
    config.sync_ms = 20;
    let cluster = Cluster::start(table.clone(), config).unwrap();
    (table, cluster)
}

/// `n` visits to "pay" at `now_ms`.
fn visit(table: &AnyTable, n: u32, now_ms: u64) {
    table
        .with_points(|p| {
            let point = p.point(p.lookup(b"pay").unwrap().unwrap()).unwrap();
            for _ in 0..n {
                let e = point.enter(now_ms, Flags::NONE);
                point.exit(&e, now_ms, Outcome::Ok);
            }
        })
        .unwrap();
}

/// The children's side: the first syncer of the file; nothing in the
/// parent run.
#[test]
fn child_main() {
    if std::env::var(ROLE).as_deref() != Ok("syncer") {
        return;
    }
    let (table, cluster) = start(&var("TABLE"), &var("URL"));
    assert!(cluster.status().syncing, "the first process takes the role");
    let now = sds_clock::now_ms();
    visit(&table, 5, now);
    let syncs = cluster.status().syncs;
    wait_until(LONG, "two syncs after the visits", || {
        cluster.status().syncs >= syncs + 2
    });
    report("second", now / 1000);
    std::thread::sleep(LONG);
}

#[test]
fn a_killed_syncer_is_replaced_and_nothing_is_pushed_twice() {
    let redis = Redis::start();
    let dir = TempDir::new("cluster-takeover");
    let path = dir.join("table");
    let mut syncer = Kid::spawn(
        "syncer",
        &[("TABLE", path.display().to_string()), ("URL", redis.url())],
    );
    let child_second: u64 = syncer.value("second").parse().unwrap();
    let key = |s: u64| format!("{{sds:pay}}:{s}");
    assert_eq!(redis.hget(&key(child_second), "v"), 5);

    let (table, cluster) = start(path.to_str().unwrap(), &redis.url());
    std::thread::sleep(Duration::from_millis(100));
    assert!(!cluster.status().syncing, "the living child holds the role");

    syncer.kill();
    // Deciding never waited on the dead syncer; the role comes back to us.
    wait_until(LONG, "the role taken over", || cluster.status().syncing);
    let now = sds_clock::now_ms();
    visit(&table, 3, now);
    let total = || {
        let mut seconds = vec![child_second, now / 1000];
        seconds.dedup();
        seconds
            .iter()
            .map(|&s| redis.hget(&key(s), "v"))
            .sum::<u64>()
    };
    wait_until(LONG, "our 3 visits pushed", || total() >= 8);
    let syncs = cluster.status().syncs;
    wait_until(LONG, "more syncs", || cluster.status().syncs >= syncs + 3);
    assert_eq!(
        total(),
        8,
        "the dead syncer's 5 and our 3, each pushed once"
    );
    assert!(cluster.status().connected);
}
