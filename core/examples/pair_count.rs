//! `tools/callgrind-pair.sh` runs this under callgrind: `pair_count MODE N`
//! does N enter + exit pairs (5 rules, as `benches/point.rs`) of one kind,
//! so that the instructions of one pair are `(count(2N) - count(N)) / N`,
//! whatever the set-up costs.
//!
//! Modes: `point` (a private point, not a cluster point), `cluster` (a
//! cluster point with published remote counts), `id` (a private table by
//! id), `name` (a private table by name), `ledger` (a shared view with a
//! ledger row, by id), `governor` (governor's direct `check()`).
//!
//! Modes with one of issue 27's rows on top of the five rules: `warm`
//! (warm-up), `pace` (pacing), `slow` (slow-call rate), `adaptive` (AIMD),
//! `knee` (adaptive KNEE: after its first 100 samples measure the min RTT,
//! each exit adds to the window's histogram; the clock stands still, so no
//! window closes, as in all but one exit per 100 ms).
//! Each row is set so that every request passes, as the five rules are.
//!
//! `pair_count rows BLOCKS` times the private point without and with each
//! row in alternated blocks (best block of each, ns per pair, and the
//! difference).
//!
//! `pair_count ns BLOCKS` times instead: the private point, the table by
//! name and governor in alternated blocks of 20 000 calls, and prints the
//! best block of each (ns per call), so that a loaded machine's noise hits
//! all three alike.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Instant;

use governor::{Quota, RateLimiter};
use sds_core::{
    AlwaysAlive, Flags, Held, Outcome, Owner, Point, PointTable, SecondCounts, Shared, Slot,
    Strategy, TableState, TableStorage,
};

#[path = "common/mod.rs"]
mod common;
use common::five_rules;

const T: u64 = 1_700_000_000_000;
const NAME: &[u8] = b"orderService.process";
const CAPACITY: usize = 1024;

fn slots() -> Vec<Slot> {
    (0..CAPACITY).map(|_| Slot::new()).collect()
}

/// The five rules and one of issue 27's rows, set so that every request
/// passes (a rate no request reaches, no slow call).
fn with_row(row: &str) -> Option<Strategy> {
    let mut s = five_rules();
    match row {
        "warm" => s.warm_up_period_sec = 10,
        "pace" => {
            s.token_bucket_generated_tokens_in_second = 2_000_000_000;
            s.max_queueing_time_ms = 500;
        }
        "slow" => s.slow_call_rate_threshold = 50,
        "adaptive" => {
            s.concurrent_threshold = -1;
            s.adaptive_concurrency = 1;
        }
        "knee" => {
            s.concurrent_threshold = -1;
            s.adaptive_concurrency = 5;
        }
        "none" => {}
        _ => return None,
    }
    Some(s)
}

const ROWS: [&str; 6] = ["none", "warm", "pace", "slow", "adaptive", "knee"];

fn with_strategy(strategy: &Strategy, n: u64) {
    let point = Point::new();
    point.set_strategy(Some(strategy)).unwrap();
    for _ in 0..n {
        let e = point.enter(black_box(T), Flags::NONE);
        point.exit(&e, black_box(T), Outcome::Ok);
        black_box(e);
    }
}

fn timed_rows(blocks: u64) {
    const CALLS: u32 = 20_000;
    let points: Vec<Point> = ROWS
        .iter()
        .map(|row| {
            let p = Point::new();
            p.set_strategy(with_row(row).as_ref()).unwrap();
            p
        })
        .collect();
    let mut best = [f64::MAX; ROWS.len()];
    for _ in 0..blocks {
        for (b, p) in best.iter_mut().zip(&points) {
            *b = b.min(ns(CALLS, || {
                let e = p.enter(black_box(T), Flags::NONE);
                p.exit(&e, black_box(T), Outcome::Ok);
                black_box(e);
            }));
        }
    }
    for (row, b) in ROWS.iter().zip(best) {
        println!(
            "{row:>8}: {b:.1} ns per enter + exit ({:+.1} ns), best of {blocks} alternated blocks",
            b - best[0]
        );
    }
}

fn points(n: u64, cluster: bool) {
    let point = Point::new();
    point.set_strategy(Some(&five_rules())).unwrap();
    if cluster {
        point.set_cluster(true);
        let second = T / 1000;
        let counts = SecondCounts {
            visit: 3,
            ..SecondCounts::default()
        };
        point.store_remote(second, second - 1, &counts);
        point.publish_remote(second);
    }
    for _ in 0..n {
        let e = point.enter(black_box(T), Flags::NONE);
        point.exit(&e, black_box(T), Outcome::Ok);
        black_box(e);
    }
}

/// Pairs on a table, by id or (`BY_NAME`) by name.
fn by_table<S: TableStorage, const BY_NAME: bool>(table: &PointTable<S>, n: u64) {
    let id = table.set_strategy(NAME, &five_rules()).unwrap();
    for _ in 0..n {
        let e = match BY_NAME {
            true => table.enter(black_box(NAME), black_box(T), Flags::NONE),
            false => table.enter_point(black_box(id), black_box(T), Flags::NONE),
        };
        let e = e.unwrap();
        table.exit(&e, black_box(T), Outcome::Ok).unwrap();
        black_box(e);
    }
}

fn ledger(n: u64) {
    let (state, slots) = (TableState::new(), slots());
    let row: Vec<Held> = (0..CAPACITY).map(|_| Held::new()).collect();
    let storage = Shared::with_ledger(&state, &slots, &row);
    let table = PointTable::with_owner(storage, Owner::new(2).unwrap(), AlwaysAlive).unwrap();
    by_table::<_, false>(&table, n);
}

fn governor(n: u64) {
    let limiter = RateLimiter::direct(Quota::per_second(NonZeroU32::MAX));
    for _ in 0..n {
        black_box(limiter.check().is_ok());
    }
}

/// Nanoseconds per call of `f` over `n` calls.
fn ns(n: u32, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

fn timed(blocks: u64) {
    const CALLS: u32 = 20_000;
    let point = Point::new();
    point.set_strategy(Some(&five_rules())).unwrap();
    let table = PointTable::new(slots()).unwrap();
    table.set_strategy(NAME, &five_rules()).unwrap();
    let limiter = RateLimiter::direct(Quota::per_second(NonZeroU32::MAX));
    let mut best = [f64::MAX; 3];
    for _ in 0..blocks {
        best[0] = best[0].min(ns(CALLS, || {
            let e = point.enter(black_box(T), Flags::NONE);
            point.exit(&e, black_box(T), Outcome::Ok);
            black_box(e);
        }));
        best[1] = best[1].min(ns(CALLS, || {
            let e = table.enter(black_box(NAME), black_box(T), Flags::NONE);
            let e = e.unwrap();
            table.exit(&e, black_box(T), Outcome::Ok).unwrap();
            black_box(e);
        }));
        best[2] = best[2].min(ns(CALLS, || {
            black_box(limiter.check().is_ok());
        }));
    }
    let [point, name, governor] = best;
    println!(
        "best of {blocks} alternated blocks: point enter+exit {point:.1} ns ({:.2}x faster \
         than governor), by name {name:.1} ns ({:.2}x governor), governor check {governor:.1} ns",
        governor / point,
        name / governor
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(Ok(n))) = (args.get(1), args.get(2).map(|n| n.parse::<u64>())) else {
        eprintln!(
            "usage: pair_count point|cluster|id|name|ledger|governor|warm|pace|slow|adaptive|knee|ns|rows N"
        );
        std::process::exit(2);
    };
    match mode.as_str() {
        "point" => points(n, false),
        "rows" => timed_rows(n),
        row if with_row(row).is_some() => with_strategy(&with_row(row).unwrap(), n),
        "cluster" => points(n, true),
        "id" => by_table::<_, false>(&PointTable::new(slots()).unwrap(), n),
        "name" => by_table::<_, true>(&PointTable::new(slots()).unwrap(), n),
        "ledger" => ledger(n),
        "governor" => governor(n),
        "ns" => timed(n),
        _ => {
            eprintln!("unknown mode {mode}");
            std::process::exit(2);
        }
    }
}
