//! Criterion benchmarks of the window: increment, sum, both, a rollover on
//! every call, and two threads on one window.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use sds_core::window::SdsCounterWindow;
use sds_core::SlidingWindow;

const T: u64 = 1_700_000_000_000;

fn window(c: &mut Criterion) {
    let w: SdsCounterWindow = SlidingWindow::sds_counter();
    let mut g = c.benchmark_group("window");
    g.bench_function("increment", |b| b.iter(|| w.increment(black_box(T))));
    g.bench_function("sum", |b| b.iter(|| w.sum(black_box(T))));
    g.bench_function("increment+sum", |b| {
        b.iter(|| {
            w.increment(black_box(T));
            w.sum(black_box(T))
        })
    });
    let mut now = T;
    g.bench_function("increment across a rollover", |b| {
        b.iter(|| {
            now += 1000; // every call lands in a new bucket and resets a stale slot
            w.increment(black_box(now))
        })
    });
    g.bench_function("2 threads, one window (per increment)", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for _ in 0..iters {
                            w.increment(black_box(T));
                        }
                    });
                }
            });
            start.elapsed() / 2
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = window
}
criterion_main!(benches);
