//! Helpers for the cluster tests: the workspace's `testkit/` (a real
//! `redis-server`, temporary directories, children that are this test
//! binary run again with a role, see `child_main` in each test file).

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use sds_testkit::*;

#[allow(dead_code)]
pub mod redis_cluster;

#[allow(dead_code)]
pub mod instance;

#[allow(dead_code)]
pub mod latency;

#[allow(dead_code)]
pub mod points;
