//! Runs `N` enter + exit pairs by id on one point with five rules, a local
//! point or a cluster point (`pair_cost local|cluster N`), for callgrind:
//! the instructions of one pair are (Ir(2N) - Ir(N)) / N.
mod common;

use std::hint::black_box;

use sds_core::{Flags, Outcome, PointTable, Slot};

use common::{as_synced, five_rules};

const T: u64 = 1_700_000_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cluster = args.get(1).is_some_and(|a| a == "cluster");
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let table = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let id = table
        .set_strategy(b"orderService.process", &five_rules())
        .unwrap();
    if cluster {
        as_synced(table.point(id).unwrap(), T / 1000);
    }
    for i in 0..n {
        // 100 pairs per ms: the window's second moves as it would.
        let now = T + i / 100;
        let e = table.enter_point(black_box(id), now, Flags::NONE).unwrap();
        table.exit(&e, now, Outcome::Ok).unwrap();
    }
}
