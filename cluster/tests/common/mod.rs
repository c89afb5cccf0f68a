//! Helpers for the cluster tests: the workspace's `testkit/` (a real
//! `redis-server`, temporary directories, children that are this test
//! binary run again with a role, see `child_main` in each test file).

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use sds_testkit::*;

#[allow(dead_code)]
pub mod redis_cluster;

/// `n` children of `role` on the Redis at `url`, each to start its work at
/// `start_at` (wall clock, ms) with [`wait_for_start`].
#[allow(dead_code)]
pub fn spawn_at(role: &str, n: u64, url: &str, start_at: u64) -> Vec<Kid> {
    let env = [("URL", url.to_string()), ("START_AT", start_at.to_string())];
    (0..n).map(|_| Kid::spawn(role, &env)).collect()
}

/// In a child of [`spawn_at`]: sleeps until its start time.
#[allow(dead_code)]
pub fn wait_for_start() {
    let start_at: u64 = var("START_AT").parse().unwrap();
    while sds_clock::now_ms() < start_at {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[allow(dead_code)]
pub mod instance;

#[allow(dead_code)]
pub mod latency;

#[allow(dead_code)]
pub mod points;
