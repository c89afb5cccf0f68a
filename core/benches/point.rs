//! Criterion benchmark of the decision: an `enter` + `exit` pair with five
//! rules on, next to governor's direct rate limiter `check()` (one rule).

use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use governor::{Quota, RateLimiter};
use sds_core::{Flags, Outcome, Point, PointTable, Slot, Strategy};

const T: u64 = 1_700_000_000_000;

fn five_rules() -> Strategy {
    let mut s = Strategy::DEFAULT;
    s.visit_threshold = i64::MAX;
    s.token_bucket_generated_tokens_in_second = i64::MAX / 20;
    s.concurrent_threshold = 1_000;
    s.timeout_threshold = 1_000;
    s.timeout_count_threshold = i64::MAX;
    s.exception_threshold = i64::MAX;
    s
}

fn decision(c: &mut Criterion) {
    let mut g = c.benchmark_group("decision");
    let point = Point::new();
    point.set_strategy(Some(&five_rules())).unwrap();
    g.bench_function("sds enter+exit (5 rules)", |b| {
        b.iter(|| {
            let e = point.enter(black_box(T), Flags::NONE);
            point.exit(&e, black_box(T), Outcome::Ok);
            e
        })
    });
    let table = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    table
        .set_strategy(b"orderService.process", &five_rules())
        .unwrap();
    g.bench_function("sds table enter+exit by name (5 rules)", |b| {
        b.iter(|| {
            let e = table
                .enter(black_box(b"orderService.process"), T, Flags::NONE)
                .unwrap();
            table.exit(&e, T, Outcome::Ok).unwrap();
            e
        })
    });
    let limiter = RateLimiter::direct(Quota::per_second(NonZeroU32::MAX));
    g.bench_function("governor direct check (1 rule)", |b| {
        b.iter(|| limiter.check().is_ok())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = decision
}
criterion_main!(benches);
