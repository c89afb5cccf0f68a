//! A private table of points with their strategies, and what the tests do
//! on one point of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sds_cluster::Cluster;
use sds_core::{Flags, Outcome, Point, Strategy};
use sds_shm::AnyTable;

/// A private table (64 points) with `strategy` (JSON) on each of `names`.
pub fn table_with(names: &[impl AsRef<str>], strategy: &str) -> Arc<AnyTable> {
    let table = Arc::new(AnyTable::private(64).unwrap());
    let s = Strategy::from_json(strategy).unwrap();
    table
        .with_points(|p| {
            for name in names {
                p.set_strategy(name.as_ref().as_bytes(), &s).unwrap();
            }
        })
        .unwrap();
    table
}

/// `work` on the point `name`, which `table` holds.
pub fn on_point<R>(table: &AnyTable, name: &str, work: impl FnOnce(&Point) -> R) -> R {
    table
        .with_points(|p| {
            work(
                p.point(p.lookup(name.as_bytes()).unwrap().unwrap())
                    .unwrap(),
            )
        })
        .unwrap()
}

/// How many of `tries` enter + exit on `name` at `now_ms` are admitted.
pub fn admit(table: &AnyTable, name: &str, tries: u32, now_ms: u64) -> u32 {
    on_point(table, name, |point| {
        (0..tries)
            .map(|_| {
                let e = point.enter(now_ms, Flags::NONE);
                point.exit(&e, now_ms, Outcome::Ok);
                u32::from(!e.downgraded())
            })
            .sum()
    })
}

/// `n` enter + exit on `name` now, each timed (ns).
pub fn timed_visits(table: &AnyTable, name: &str, n: u32) -> Vec<u64> {
    on_point(table, name, |point| {
        (0..n)
            .map(|_| {
                let started = Instant::now();
                let now = sds_clock::now_ms();
                let e = point.enter(now, Flags::NONE);
                point.exit(&e, now, Outcome::Ok);
                started.elapsed().as_nanos() as u64
            })
            .collect()
    })
}

/// Waits (10 s at most) until the thread of `cluster` has tried its first
/// sync, which may run late on a loaded machine: the tests' own `sync_now`
/// calls then decide what is pushed when.
pub fn wait_first_sync(cluster: &Cluster) {
    sds_testkit::wait_until(Duration::from_secs(10), "the first sync", || {
        cluster.status().syncs + cluster.status().failures > 0
    });
}
