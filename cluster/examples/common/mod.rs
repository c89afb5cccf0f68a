//! What both examples set up: a point with five rules, and the counts of
//! other instances as a sync would have published them.

use sds_core::{Point, SecondCounts, Strategy};

/// Five rules that all run and never refuse: the most work one decision
/// does.
pub fn five_rules() -> Strategy {
    Strategy {
        visit_threshold: i64::MAX,
        token_bucket_generated_tokens_in_second: i64::MAX / 20,
        concurrent_threshold: 1_000,
        timeout_threshold: 1_000,
        timeout_count_threshold: i64::MAX,
        exception_threshold: i64::MAX,
        ..Strategy::DEFAULT
    }
}

/// Makes `point` a cluster point whose other instances made 5 visits in
/// each second of the window around `now_s`, published as a sync does.
pub fn as_synced(point: &Point, now_s: u64) {
    point.set_cluster(true);
    let others = SecondCounts {
        visit: 5,
        ..SecondCounts::default()
    };
    for second in now_s - 9..=now_s + 1 {
        point.store_remote(now_s, second, &others);
    }
    point.publish_remote(now_s);
}
