//! Runs `N` enter + exit pairs by id on one point with five rules, a local
//! point or a cluster point (`pair_cost local|cluster N`), for callgrind:
//! the instructions of one pair are (Ir(2N) - Ir(N)) / N.
use std::hint::black_box;

use sds_core::{Flags, Outcome, PointTable, Slot, Strategy};

const T: u64 = 1_700_000_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cluster = args.get(1).is_some_and(|a| a == "cluster");
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let table = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let mut s = Strategy::DEFAULT;
    s.visit_threshold = i64::MAX;
    s.token_bucket_generated_tokens_in_second = i64::MAX / 20;
    s.concurrent_threshold = 1_000;
    s.timeout_threshold = 1_000;
    s.timeout_count_threshold = i64::MAX;
    s.exception_threshold = i64::MAX;
    let id = table.set_strategy(b"orderService.process", &s).unwrap();
    if cluster {
        let point = table.point(id).unwrap();
        point.set_cluster(true);
        for second in T / 1000 - 9..=T / 1000 + 1 {
            point.store_remote(
                T / 1000,
                second,
                &sds_core::SecondCounts {
                    visit: 5,
                    ..Default::default()
                },
            );
        }
        point.publish_remote(T / 1000);
    }
    for i in 0..n {
        // 100 pairs per ms: the window's second moves as it would.
        let now = T + i / 100;
        let e = table.enter_point(black_box(id), now, Flags::NONE).unwrap();
        table.exit(&e, now, Outcome::Ok).unwrap();
    }
}
