//! An instance of a service for the Redis Cluster tests: a private table
//! in this process with its own `Cluster` (its own syncer thread), points
//! with a threshold never reached, and helpers to count and time visits.

use std::sync::Arc;
use std::time::Instant;

use sds_cluster::{Cluster, Config};
use sds_core::{Flags, Outcome, Strategy};
use sds_shm::AnyTable;

pub struct Instance {
    pub table: Arc<AnyTable>,
    pub cluster: Cluster,
}

impl Instance {
    pub fn new(urls: &[String], names: &[String], sync_ms: u64) -> Instance {
        let table = Arc::new(AnyTable::private(64).unwrap());
        let s = Strategy::from_json(r#"{"visitThreshold": 1000000000}"#).unwrap();
        table
            .with_points(|p| {
                for name in names {
                    p.set_strategy(name.as_bytes(), &s).unwrap();
                }
            })
            .unwrap();
        let mut config = Config::new("");
        config.urls = urls.to_vec();
        config.redis_cluster = true;
        config.points = names.to_vec();
        config.sync_ms = sync_ms;
        config.timeout_ms = 300;
        config.max_backoff_ms = 400;
        let cluster = Cluster::start(table.clone(), config).unwrap();
        Instance { table, cluster }
    }

    /// `n` enter + exit on `name` now, each timed (ns).
    pub fn visit(&self, name: &str, n: u32) -> Vec<u64> {
        self.table
            .with_points(|p| {
                let point = p
                    .point(p.lookup(name.as_bytes()).unwrap().unwrap())
                    .unwrap();
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
            .unwrap()
    }

    /// (own visits, others' visits as of the last sync) of `second`.
    pub fn visits(&self, name: &str, second: u64) -> (u64, u64) {
        self.table
            .with_points(|p| {
                let point = p
                    .point(p.lookup(name.as_bytes()).unwrap().unwrap())
                    .unwrap();
                (
                    point.local_counts(second).visit,
                    point.remote_counts(second).visit,
                )
            })
            .unwrap()
    }
}

pub fn p99(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() * 99 / 100]
}

/// Each instance sees the other's visits (3 by `a`, 5 by `b` per point,
/// since `first_second`) after two syncs of each.
pub fn visit_and_meet(a: &Instance, b: &Instance, names: &[String], first_second: u64) {
    for name in names {
        a.visit(name, 3);
        b.visit(name, 5);
    }
    for _ in 0..2 {
        a.cluster.sync_now().unwrap();
        b.cluster.sync_now().unwrap();
    }
    let now_s = sds_clock::now_ms() / 1000;
    for name in names {
        let seen = |i: &Instance| {
            (first_second..=now_s)
                .map(|s| i.visits(name, s))
                .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
        };
        assert_eq!(seen(a), (3, 5), "{name} on instance a");
        assert_eq!(seen(b), (5, 3), "{name} on instance b");
    }
}
