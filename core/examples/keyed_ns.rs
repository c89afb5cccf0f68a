//! `cargo run --release -p sds-core --example keyed_ns [BLOCKS]`: rough ns
//! per key table decision, next to a point's enter + exit by id (the
//! five rules of `benches/point.rs`), in alternated blocks of 200 000 calls
//! (the best block of each is printed, so a loaded machine's noise hits all
//! alike). Single thread.
//!
//! - `point pair by id`: the reference of issue 24's goal (1.5x);
//! - `keyed, one hot key`: a rate rule, one key decided again and again;
//! - `sliding, one hot key`: the same with a sliding-window counter (a
//!   call a ms: every call admitted);
//! - `in flight, take+give`: a decision and a release of one key;
//! - `store, increment`: express-rate-limit's `increment` on one key (a
//!   fixed window from the first hit, every hit counted: a call a ms, so
//!   the count sits at its cap of 4 095 most of each minute and those
//!   calls write nothing, as an abusive client's do);
//! - `keyed, 2^20 uniform`: 2^20 resident keys (16 MiB of cells), drawn at
//!   random;
//! - `keyed, new keys`: every call a new key in a full table (an eviction
//!   each).

use std::hint::black_box;
use std::time::Instant;

use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable};
use sds_core::{Flags, Outcome, PointTable, Slot, Value};

#[path = "common/mod.rs"]
mod common;

const T: u64 = 1_700_000_000_000;
const BLOCK: u64 = 200_000;
const RESIDENT: u64 = 1 << 20;

fn key_table(kind: KeyRuleKind, keys: u64) -> KeyTable<Vec<KeyBucket>> {
    let rule = KeyRule::from_entries(
        kind,
        [
            ("limit", Value::from(kind.max_limit().min(1_000_000) as i64)),
            ("periodMs", Value::from(1000i64)),
        ],
    )
    .unwrap();
    let buckets = (keys as usize / 4) * 5 / 4;
    KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

/// A key's bytes, as a service would have them (an id in text).
fn key(i: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = i;
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

/// A named loop body and its best block so far (ns per call).
type Run<'a> = (&'static str, &'a mut dyn FnMut(u64), f64);

fn time(f: &mut dyn FnMut(u64)) -> f64 {
    let start = Instant::now();
    for i in 0..BLOCK {
        f(i);
    }
    start.elapsed().as_nanos() as f64 / BLOCK as f64
}

fn main() {
    let blocks: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);

    let points = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let id = points
        .set_strategy(b"orderService.process", &common::five_rules())
        .unwrap();
    let mut pair = |_| {
        let entry = points.enter_point(black_box(id), T, Flags::NONE).unwrap();
        points.exit(&entry, T + 1, Outcome::Ok).unwrap();
    };

    let hot = key_table(KeyRuleKind::Rate, 1024);
    let mut one_key = |i: u64| {
        black_box(hot.decide(black_box(b"user-42"), T + i / 1000, 1).unwrap());
    };

    let sliding = key_table(KeyRuleKind::SlidingWindow, 1024);
    let mut sliding_key = |i: u64| {
        black_box(sliding.decide(black_box(b"user-42"), T + i, 1).unwrap());
    };

    let conns = KeyTable::new(
        (0..256).map(|_| KeyBucket::new()).collect::<Vec<_>>(),
        KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(100i64))]).unwrap(),
    )
    .unwrap();
    let mut in_flight = |_| {
        black_box(conns.decide(black_box(b"user-42"), T, 1).unwrap());
        black_box(conns.release(b"user-42", 1).unwrap());
    };

    let store = KeyTable::new(
        (0..256).map(|_| KeyBucket::new()).collect::<Vec<_>>(),
        KeyRule::from_entries(
            KeyRuleKind::FixedWindow,
            [
                ("limit", Value::from(100i64)),
                ("periodMs", Value::from(60_000i64)),
                ("windowFromFirstHit", Value::from(1i64)),
            ],
        )
        .unwrap(),
    )
    .unwrap();
    let mut increment = |i: u64| {
        black_box(
            store
                .increment(black_box(b"user-42"), T + i / 1000, 1)
                .unwrap(),
        );
    };

    let uniform = key_table(KeyRuleKind::Rate, RESIDENT);
    let mut buf = [0u8; 20];
    for i in 0..RESIDENT {
        uniform.decide(key(i, &mut buf), T, 1).unwrap();
    }
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut spread = |i: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut buf = [0u8; 20];
        black_box(
            uniform
                .decide(key(rng % RESIDENT, &mut buf), T + i / 1000, 1)
                .unwrap(),
        );
    };

    let flood = key_table(KeyRuleKind::Rate, 1 << 16);
    let mut next = 0u64;
    let mut new_keys = |i: u64| {
        next += 1;
        let mut buf = [0u8; 20];
        black_box(flood.decide(key(next, &mut buf), T + i / 1000, 1).unwrap());
    };

    let mut runs: [Run; 7] = [
        ("point pair by id", &mut pair, f64::MAX),
        ("keyed, one hot key", &mut one_key, f64::MAX),
        ("sliding, one hot key", &mut sliding_key, f64::MAX),
        ("in flight, take+give", &mut in_flight, f64::MAX),
        ("store, increment", &mut increment, f64::MAX),
        ("keyed, 2^20 uniform", &mut spread, f64::MAX),
        ("keyed, new keys", &mut new_keys, f64::MAX),
    ];
    for _ in 0..blocks {
        for (_, f, best) in runs.iter_mut() {
            *best = best.min(time(*f));
        }
    }
    for (name, _, best) in &runs {
        println!("{name:>22}: {best:6.1} ns");
    }
    let s = flood.stats();
    println!("new keys table: {s:?}");
}
