//! What a scrape costs (issue 26's goals), a benchmark program rather than a
//! test: `cargo run --release -p sds-metrics --example scrape [-- quick] [shared]`.
//!
//! 1. A table of 10 000 points, each with traffic (a `visitThreshold` of 5
//!    and 10 requests, so every point has requests and VISIT downgrades),
//!    and a keyed limit with 10^6 resident keys listed for the exporter:
//!    `exposition()` timed over N scrapes by one exporter (median, max), and
//!    its two halves, `collect()` and `render()`, timed apart.
//! 2. enter + exit on one point (5 rules, as the core's benches) timed pair
//!    by pair with `Instant` in one thread, in rounds that alternate a
//!    quiet phase with a phase where another thread scrapes in a loop: the
//!    p99 of each phase and the ratio (goal: within 10 %).
//!
//! `scrapes-only` stops after the first part (to profile it: `perf record
//! -g target/release/examples/scrape scrapes-only`).
//!
//! `shared` puts the points in a table file (a temporary directory) instead
//! of a private table. The machine's load average is printed first: the
//! second part needs two cores, and other work on them shows in its p99.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::{Flags, Outcome, Points, Strategy, Value};
use sds_metrics::{exposition, register_keyed, render, Exporter, Format, Sources};
use sds_shm::{AnyKeys, AnyTable, Options};
use sds_testkit::TempDir;

// The pair benchmarks' five rules, none of which downgrades.
#[path = "../../core/examples/common/mod.rs"]
mod common;
use common::five_rules;

const POINTS: usize = 10_000;
const KEYS: u64 = 1_000_000;
/// Histogram of pair times in ns; the last bucket holds everything slower.
const HIST_NS: usize = 200_000;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median_max(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (ms(v[v.len() / 2]), ms(v[v.len() - 1]))
}

struct Hist {
    counts: Vec<u64>,
    n: u64,
}

impl Hist {
    fn new() -> Hist {
        Hist {
            counts: vec![0; HIST_NS + 1],
            n: 0,
        }
    }

    fn add(&mut self, ns: u64) {
        self.counts[(ns as usize).min(HIST_NS)] += 1;
        self.n += 1;
    }

    fn quantile(&self, q: f64) -> u64 {
        let want = (self.n as f64 * q).ceil() as u64;
        let mut seen = 0;
        for (ns, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return ns as u64;
            }
        }
        HIST_NS as u64
    }
}

/// enter + exit pairs on `point` for `length`, each timed alone.
fn pairs(table: &AnyTable, name: &[u8], length: Duration) -> Hist {
    let mut hist = Hist::new();
    table
        .with_points(|points: &dyn Points| {
            let point = points.point(points.insert(name).unwrap()).unwrap();
            let start = Instant::now();
            let mut now = now_ms();
            let mut i = 0u64;
            loop {
                if i & 1023 == 0 {
                    if start.elapsed() >= length {
                        break;
                    }
                    now = now_ms();
                }
                i += 1;
                let t = Instant::now();
                let entry = point.enter(now, Flags::NONE);
                point.exit(&entry, now, Outcome::Ok);
                hist.add(t.elapsed().as_nanos() as u64);
            }
        })
        .unwrap();
    hist
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "quick");
    let shared = args.iter().any(|a| a == "shared");
    let scrapes = if quick {
        7
    } else if args.iter().any(|a| a == "scrapes-only") {
        101
    } else {
        21
    };
    let (rounds, phase) = if quick {
        (3, Duration::from_millis(500))
    } else {
        (6, Duration::from_secs(2))
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    // The table: 10 000 points with traffic, and the hot point.
    let dir = TempDir::new("metrics-scrape");
    let capacity = 16_384;
    let table = if shared {
        AnyTable::shared(dir.join("scrape"), capacity, &Options::new()).unwrap()
    } else {
        AnyTable::private(capacity).unwrap()
    };
    let t = Instant::now();
    let start_ms = now_ms();
    let strategy = Strategy::from_json(r#"{"visitThreshold":5}"#).unwrap();
    table
        .with_points(|points: &dyn Points| {
            for p in 0..POINTS - 1 {
                let name = format!("service-{p:05}/GET /api/v1/items");
                let id = points.set_strategy(name.as_bytes(), &strategy).unwrap();
                let point = points.point(id).unwrap();
                for i in 0..10 {
                    let entry = point.enter(start_ms + i, Flags::NONE);
                    point.exit(&entry, start_ms + i, Outcome::Ok);
                }
            }
            points.set_strategy(b"hot", &five_rules()).unwrap();
        })
        .unwrap();
    println!(
        "{} points ({} table) filled in {:.0} ms",
        POINTS,
        if shared { "shared" } else { "private" },
        ms(t.elapsed())
    );

    // The keyed limit: 10^6 resident keys in twice the cells.
    let mut builder = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
    builder.set("limit", Value::Integer(10)).unwrap();
    builder.set("periodMs", Value::Integer(60_000)).unwrap();
    let keys = Arc::new(AnyKeys::private(builder.build().unwrap(), 2 * KEYS as usize).unwrap());
    let t = Instant::now();
    for k in 0..KEYS {
        keys.decide(&k.to_le_bytes(), start_ms, 1).unwrap();
    }
    register_keyed(&keys, "scrape-bench".to_string());
    let stats = keys.stats();
    println!(
        "keyed limit: {} resident keys of {} cells ({} lossy evictions), filled in {:.0} ms",
        stats.resident,
        stats.capacity,
        stats.lossy_evictions,
        ms(t.elapsed())
    );

    // 1. The scrape alone.
    let exporter = Exporter::new();
    let sources = Sources {
        table: Some(&table),
        ..Sources::default()
    };
    let first = Instant::now();
    let text = exposition(&exporter, &sources, now_ms(), Format::Prometheus);
    let first = first.elapsed();
    let samples = text.lines().filter(|l| !l.starts_with('#')).count();
    let (mut whole, mut collects, mut renders) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..scrapes {
        let t = Instant::now();
        let text = exposition(&exporter, &sources, now_ms(), Format::Prometheus);
        whole.push(t.elapsed());
        std::hint::black_box(text);
        let t = Instant::now();
        let collected = exporter.collect(&sources, now_ms());
        collects.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(render(&collected, Format::Prometheus));
        renders.push(t.elapsed());
    }
    let (med, max) = median_max(whole);
    let (cmed, cmax) = median_max(collects);
    let (rmed, rmax) = median_max(renders);
    println!(
        "exposition: {samples} samples, {:.1} MB of text; the first scrape (exporter fresh) {:.1} ms",
        text.len() as f64 / 1e6,
        ms(first)
    );
    println!(
        "exposition() over {scrapes} scrapes: median {med:.1} ms, max {max:.1} ms \
         (goal <= 50 ms: {}); collect() {cmed:.1} / {cmax:.1} ms, render() {rmed:.1} / {rmax:.1} ms \
         (median / max)",
        if max <= 50.0 {
            "met"
        } else if med <= 50.0 {
            "median met, max not"
        } else {
            "NOT met"
        }
    );

    if args.iter().any(|a| a == "scrapes-only") {
        return;
    }

    // 2. Decisions while another thread scrapes.
    let stop = AtomicBool::new(false);
    let scraping = AtomicBool::new(false);
    let scraped = AtomicU64::new(0);
    let mut quiet = Hist::new();
    let mut busy = Hist::new();
    let mut per_round = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if scraping.load(Ordering::Relaxed) {
                    std::hint::black_box(exposition(
                        &exporter,
                        &sources,
                        now_ms(),
                        Format::Prometheus,
                    ));
                    scraped.fetch_add(1, Ordering::Relaxed);
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        // A warm-up phase, not counted.
        pairs(&table, b"hot", phase / 2);
        for round in 0..rounds {
            let mut p99 = [0u64; 2];
            // Alternate which phase goes first.
            for phase_no in 0..2 {
                let with = (round + phase_no) % 2 == 1;
                scraping.store(with, Ordering::Relaxed);
                if with {
                    // Let the scraper start.
                    std::thread::sleep(Duration::from_millis(5));
                }
                let h = pairs(&table, b"hot", phase);
                scraping.store(false, Ordering::Relaxed);
                p99[usize::from(with)] = h.quantile(0.99);
                let into = if with { &mut busy } else { &mut quiet };
                for (ns, c) in h.counts.iter().enumerate() {
                    into.counts[ns] += c;
                }
                into.n += h.n;
                std::thread::sleep(Duration::from_millis(60));
            }
            per_round.push(p99);
        }
        stop.store(true, Ordering::Relaxed);
    });
    println!(
        "enter + exit on one point, {rounds} rounds of {:.1} s per phase, {} scrapes meanwhile:",
        phase.as_secs_f64(),
        scraped.load(Ordering::Relaxed)
    );
    for (i, [q, b]) in per_round.iter().enumerate() {
        println!(
            "  round {}: p99 {q} ns quiet, {b} ns scraping ({:.2}x)",
            i + 1,
            *b as f64 / *q as f64
        );
    }
    for (what, h) in [("quiet", &quiet), ("scraping", &busy)] {
        println!(
            "  {what:>8}: {:.1} M pairs a second, p50 {} ns, p99 {} ns, p99.9 {} ns, p99.99 {} ns",
            h.n as f64 / (rounds as f64 * phase.as_secs_f64()) / 1e6,
            h.quantile(0.5),
            h.quantile(0.99),
            h.quantile(0.999),
            h.quantile(0.9999)
        );
    }
    let ratio = busy.quantile(0.99) as f64 / quiet.quantile(0.99) as f64;
    let mut ratios: Vec<f64> = per_round
        .iter()
        .map(|[q, b]| *b as f64 / *q as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "p99 scraping / quiet: {ratio:.2}x over all pairs, median of rounds {:.2}x (goal <= 1.10x: {})",
        ratios[ratios.len() / 2],
        if ratio <= 1.10 { "met" } else { "NOT met" }
    );
    drop(keys);
}
