//! Adaptive concurrency in a deterministic simulation (core/src/adaptive/README.md).
//!
//! A server of K workers (a FIFO queue in front): each request takes a
//! service time uniform in [16, 24] ms, so its latency is flat up to K in
//! flight (the knee) and grows as in-flight/K beyond it; capacity is
//! K / 20 ms. Open-loop arrivals at 1.5 × the first capacity (gaps uniform
//! in [0, 2/rate]). At mid-run the server loses half its workers (knee and
//! capacity halve). A limiter in front admits a request while fewer than its
//! limit are in flight and refuses it at once otherwise; a refused request
//! is no sample (as in concurrency-limits), a finished one is a sample of
//! its latency and of the in-flight count when it started.
//!
//! Everything is integer microseconds drawn from splitmix64 (seed below),
//! so tools/adaptive-sim (Java, concurrency-limits 0.5.4) replays the very
//! same arrivals and service times.
//!
//! Run: `cargo run --release -p sds-core --example adaptive_sim [-- OPTIONS]`.
//! Variants of the model (the Java twin takes the same):
//! - `--spread-us N`: service time uniform in 20 ms ± N/2 µs (default 8000);
//! - `--queue N`: the server queues at most N requests and answers any
//!   other at once (1 ms later) with an overload error: a dropped sample
//!   (default: no bound, the server never fails);
//! - `--knee N`: the first phase's workers (default 50; the second has N/2,
//!   arrivals stay at 1.5 × the first capacity);
//! - `--seed N`: the splitmix64 seed (default 0x5d52026; decimal here).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use sds_core::adaptive::{AdaptiveLimit, AdaptiveParams, Algorithm};
use sds_core::{Entry, Flags, Outcome, Point, Strategy};

/// The shared model (the Java twin has the same numbers).
const SEED: u64 = 0x5d5_2026;
const KNEE: u32 = 50;
/// The largest `--knee`: 1.5 × its capacity must stay a whole number of
/// µs between arrivals on average (K = 1000 is 75 000 arrivals per second).
const MAX_KNEE: u64 = 1000;
const MEAN_SERVICE_US: u64 = 20_000;
/// The default spread: service uniform in [16, 24] ms.
const SPREAD_US: u64 = 8_000;
/// An overload error reaches the client this long after the request left.
const DROP_AFTER_US: u64 = 1_000;
const OVERLOAD_PCT: u64 = 150;
const PHASE_US: u64 = 30_000_000;
const SAMPLE_EVERY_US: u64 = 10_000;
/// Bounds checked per row.
const BAND_PCT: f64 = 10.0;
const SETTLE_SHARE: f64 = 0.95;
const SETTLE_BOUND_MS: u64 = 5_000;
const GOODPUT_MIN_PCT: f64 = 90.0;
/// p99 of admitted requests at most twice the mean no-load latency: a
/// request queues at most about one service time.
const P99_BOUND_US: u64 = 2 * MEAN_SERVICE_US;

/// The model's variants (module doc).
#[derive(Clone, Copy)]
struct Model {
    spread_us: u64,
    queue: Option<usize>,
    knee: u32,
    seed: u64,
}

impl Model {
    fn from_args() -> Model {
        let mut model = Model {
            spread_us: SPREAD_US,
            queue: None,
            knee: KNEE,
            seed: SEED,
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut i = 0;
        while i < args.len() {
            let value = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
            match (args[i].as_str(), value) {
                ("--spread-us", Some(v)) if v <= 2 * MEAN_SERVICE_US => model.spread_us = v,
                ("--queue", Some(v)) => model.queue = Some(v as usize),
                ("--knee", Some(v)) if (2..=MAX_KNEE).contains(&v) => model.knee = v as u32,
                ("--seed", Some(v)) => model.seed = v,
                _ => {
                    eprintln!(
                        "usage: adaptive_sim [--spread-us N (<= 40000)] [--queue N] [--knee N (2..=1000)] [--seed N]"
                    );
                    std::process::exit(2);
                }
            }
            i += 2;
        }
        model
    }
}

#[path = "common/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64;

enum Limiter {
    /// Ours; `true`: a refusal is fed as a dropped sample too (not what
    /// concurrency-limits does: a row to show why).
    Ours(Box<AdaptiveLimit>, AdaptiveParams, bool),
    Fixed(u32),
    /// A whole `Point` with a strategy, as users run it: `enter` admits or
    /// refuses (CONCURRENT), `exit` feeds the adaptive limit (ms clocks).
    Point(Box<Point>),
}

impl Limiter {
    fn limit(&self) -> u32 {
        match self {
            Limiter::Ours(l, p, _) => l.limit(p),
            Limiter::Fixed(n) => *n,
            Limiter::Point(p) => match p.stats(0).adaptive_limit {
                0 => p.strategy().map_or(0, |s| s.concurrent_threshold as u32),
                limit => limit as u32,
            },
        }
    }

    /// Admits a request at `now_us`: `None` when refused; for a point, its entry.
    fn admit(&self, now_us: u64, in_flight: u32) -> Option<Option<Entry>> {
        match self {
            Limiter::Point(p) => {
                let e = p.enter(now_us / 1000, Flags::NONE);
                (!e.downgraded()).then_some(Some(e))
            }
            _ => (in_flight < self.limit()).then_some(None),
        }
    }

    /// A request admitted with `entry` ended at `now_us`.
    fn ended(
        &self,
        entry: &Option<Entry>,
        now_us: u64,
        rtt_us: u64,
        in_flight: u32,
        dropped: bool,
    ) {
        match (self, entry) {
            (Limiter::Point(p), Some(e)) => {
                let outcome = if dropped { Outcome::Error } else { Outcome::Ok };
                p.exit(e, now_us / 1000, outcome);
            }
            _ => self.sample(now_us, rtt_us, in_flight, dropped),
        }
    }

    fn sample(&self, now_us: u64, rtt_us: u64, in_flight: u32, dropped: bool) {
        if let Limiter::Ours(l, p, _) = self {
            l.on_sample(p, now_us / 1000, rtt_us, in_flight, dropped);
        }
    }

    fn refused(&self, now_us: u64, in_flight: u32) {
        if let Limiter::Ours(l, p, true) = self {
            l.on_sample(p, now_us / 1000, 0, in_flight, true);
        }
    }
}

#[derive(Default)]
struct Phase {
    arrivals: u64,
    rejected: u64,
    dropped: u64,
    completed: u64,
    latencies: Vec<u64>,
    limits: Vec<u32>,
}

struct Request {
    entry: Option<Entry>,
    arrival_us: u64,
    service_us: u64,
    in_flight_at_start: u32,
    dropped: bool,
}

fn run(model: Model, limiter: &Limiter) -> [Phase; 2] {
    let mut rng = SplitMix64(model.seed);
    let capacity0 = model.knee as u64 * 1_000_000 / MEAN_SERVICE_US; // per second
    let rate = capacity0 * OVERLOAD_PCT / 100;
    let max_gap = 2 * 1_000_000 / rate; // mean gap = 1 / rate
    let end = 2 * PHASE_US;

    let mut phases = [Phase::default(), Phase::default()];
    let mut workers = model.knee;
    let mut busy = 0u32;
    let mut in_flight = 0u32;
    let mut queue: VecDeque<Request> = VecDeque::new();
    // Completions: (time, sequence) -> request.
    let mut done: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut running: std::collections::HashMap<u64, Request> = std::collections::HashMap::new();
    let mut seq = 0u64;
    let mut next_arrival = rng.next() % (max_gap + 1);
    let mut next_tick = 0u64;

    loop {
        let next_done = done.peek().map(|r| r.0 .0).unwrap_or(u64::MAX);
        let t = next_arrival.min(next_done);
        if t >= end {
            break;
        }
        while next_tick <= t {
            let ph = (next_tick / PHASE_US) as usize;
            phases[ph].limits.push(limiter.limit());
            next_tick += SAMPLE_EVERY_US;
        }
        if t >= PHASE_US && workers == model.knee {
            workers = model.knee / 2;
        }
        let ph = (t / PHASE_US) as usize;
        if next_done <= next_arrival {
            // Completions first at equal times.
            let Reverse((_, id)) = done.pop().unwrap();
            let req = running.remove(&id).unwrap();
            in_flight -= 1;
            let rtt = t - req.arrival_us;
            if req.dropped {
                phases[ph].dropped += 1;
                limiter.ended(&req.entry, t, rtt, req.in_flight_at_start, true);
                continue;
            }
            busy -= 1;
            phases[ph].completed += 1;
            phases[ph].latencies.push(rtt);
            limiter.ended(&req.entry, t, rtt, req.in_flight_at_start, false);
            if busy < workers {
                if let Some(next) = queue.pop_front() {
                    busy += 1;
                    seq += 1;
                    done.push(Reverse((t + next.service_us, seq)));
                    running.insert(seq, next);
                }
            }
        } else {
            let service_us =
                MEAN_SERVICE_US - model.spread_us / 2 + rng.next() % (model.spread_us + 1);
            next_arrival = t + rng.next() % (max_gap + 1);
            phases[ph].arrivals += 1;
            let Some(entry) = limiter.admit(t, in_flight) else {
                phases[ph].rejected += 1;
                limiter.refused(t, in_flight);
                continue;
            };
            in_flight += 1;
            let mut req = Request {
                entry,
                arrival_us: t,
                service_us,
                in_flight_at_start: in_flight,
                dropped: false,
            };
            if busy < workers {
                busy += 1;
                seq += 1;
                done.push(Reverse((t + service_us, seq)));
                running.insert(seq, req);
            } else if model.queue.is_none_or(|n| queue.len() < n) {
                queue.push_back(req);
            } else {
                req.dropped = true;
                seq += 1;
                done.push(Reverse((t + DROP_AFTER_US, seq)));
                running.insert(seq, req);
            }
        }
    }
    phases
}

fn percentile(sorted: &[u64], pct: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() as u64 * pct).div_ceil(100).max(1);
    sorted[rank as usize - 1]
}

/// The first tick from which, to the phase's end, the limit is inside
/// `[lo, hi]` at least 95 % of the ticks (a min-RTT measurement may dip out),
/// itself inside.
fn settle_tick(limits: &[u32], lo: f64, hi: f64) -> Option<usize> {
    let inside: Vec<bool> = limits
        .iter()
        .map(|&l| (l as f64) >= lo && (l as f64) <= hi)
        .collect();
    let n = inside.len();
    let mut suffix_in = vec![0usize; n + 1];
    for i in (0..n).rev() {
        suffix_in[i] = suffix_in[i + 1] + inside[i] as usize;
    }
    (0..n).find(|&i| inside[i] && suffix_in[i] as f64 >= SETTLE_SHARE * (n - i) as f64)
}

/// The row of one phase, and whether it meets the bounds.
fn report(model: Model, name: &str, phase: usize, p: &mut Phase) -> bool {
    let knee = if phase == 0 {
        model.knee
    } else {
        model.knee / 2
    };
    let capacity = knee as f64 * PHASE_US as f64 / MEAN_SERVICE_US as f64;
    let lo = knee as f64 * (1.0 - BAND_PCT / 100.0);
    let hi = knee as f64 * (1.0 + BAND_PCT / 100.0);
    let settled = settle_tick(&p.limits, lo, hi);
    let (settle_ms, from) = match settled {
        Some(i) => (Some(i as u64 * SAMPLE_EVERY_US / 1000), i),
        None => (None, p.limits.len() / 2),
    };
    // The algorithm's own steady state: the mean of the phase's last 10 s,
    // and when the limit settled within ±10 % of it.
    let last = &p.limits[p.limits.len() - (10_000_000 / SAMPLE_EVERY_US) as usize..];
    let own = last.iter().map(|&l| l as f64).sum::<f64>() / last.len() as f64;
    let own_settle = settle_tick(
        &p.limits,
        own * (1.0 - BAND_PCT / 100.0),
        own * (1.0 + BAND_PCT / 100.0),
    )
    .map_or("never".to_string(), |i| {
        (i as u64 * SAMPLE_EVERY_US / 1000).to_string()
    });
    let tail = &p.limits[from..];
    let mean = tail.iter().map(|&l| l as f64).sum::<f64>() / tail.len().max(1) as f64;
    let goodput = 100.0 * p.completed as f64 / capacity;
    p.latencies.sort_unstable();
    let p50 = percentile(&p.latencies, 50);
    let p99 = percentile(&p.latencies, 99);
    let rejected = 100.0 * p.rejected as f64 / p.arrivals.max(1) as f64;
    let dropped = 100.0 * p.dropped as f64 / p.arrivals.max(1) as f64;
    let ok_settle = settle_ms.is_some_and(|ms| ms <= SETTLE_BOUND_MS);
    let ok_mean = mean >= lo && mean <= hi;
    let ok_goodput = goodput >= GOODPUT_MIN_PCT;
    let ok_p99 = p99 <= P99_BOUND_US;
    let pass = ok_settle && ok_mean && ok_goodput && ok_p99;
    let mut why = String::new();
    for (ok, what) in [
        (ok_settle, "settle"),
        (ok_mean, "limit"),
        (ok_goodput, "goodput"),
        (ok_p99, "p99"),
    ] {
        if !ok {
            why.push_str(if why.is_empty() { " " } else { "," });
            why.push_str(what);
        }
    }
    println!(
        "{:<20} {:>5} {:>4} {:>9} {:>7.1} {:>8} {:>7.1} {:>8.1} {:>7.1} {:>7.1} {:>6.1} {:>6.1}  {}{}",
        name,
        phase + 1,
        knee,
        settle_ms.map_or("never".to_string(), |ms| ms.to_string()),
        mean,
        own_settle,
        own,
        goodput,
        p50 as f64 / 1000.0,
        p99 as f64 / 1000.0,
        rejected,
        dropped,
        if pass { "PASS" } else { "FAIL" },
        why
    );
    pass
}

fn main() {
    let model = Model::from_args();
    println!(
        "adaptive concurrency simulation: knee {} then {} at {} s, service U[{},{}] µs, server queue {}, arrivals {} % of the first capacity, seed {:#x}",
        model.knee,
        model.knee / 2,
        PHASE_US / 1_000_000,
        MEAN_SERVICE_US - model.spread_us / 2,
        MEAN_SERVICE_US - model.spread_us / 2 + model.spread_us,
        model.queue.map_or("unbounded".to_string(), |n| format!("<= {n}, then an overload error")),
        OVERLOAD_PCT,
        model.seed
    );
    println!(
        "limit: its mean after settling (or over the phase's second half); eq, eq_ms: the mean of the phase's last 10 s \
         and when the limit settled within ±{BAND_PCT} % of that (the algorithm's own steady state); \
         rej%: refused by the limit; drop%: overload errors from the server (--queue)"
    );
    println!(
        "settled: from then to the phase's end the limit (every 10 ms) is within ±{BAND_PCT} % of the knee {} % of the time; \
         PASS: settled within {} s, mean limit after settling within ±{BAND_PCT} %, goodput >= {GOODPUT_MIN_PCT} % of capacity, p99 <= {} ms",
        SETTLE_SHARE * 100.0,
        SETTLE_BOUND_MS / 1000,
        P99_BOUND_US / 1000
    );
    println!(
        "{:<20} {:>5} {:>4} {:>9} {:>7} {:>8} {:>7} {:>8} {:>7} {:>7} {:>6} {:>6}  verdict",
        "limiter",
        "phase",
        "knee",
        "settle_ms",
        "limit",
        "eq_ms",
        "eq",
        "goodput%",
        "p50_ms",
        "p99_ms",
        "rej%",
        "drop%"
    );
    let mut rows: Vec<(String, Limiter)> = Vec::new();
    for algorithm in Algorithm::ALL {
        let params = AdaptiveParams::defaults(algorithm);
        rows.push((
            format!("sds {}", algorithm.as_str()),
            Limiter::Ours(Box::new(AdaptiveLimit::new()), params, false),
        ));
    }
    for algorithm in Algorithm::ALL {
        let mut s = Strategy::DEFAULT;
        s.adaptive_concurrency = algorithm.code();
        let point = Point::new();
        point.set_strategy(Some(&s)).unwrap();
        rows.push((
            format!("point {}", algorithm.as_str()),
            Limiter::Point(Box::new(point)),
        ));
    }
    rows.push((
        "sds AIMD refuse=drop".to_string(),
        Limiter::Ours(
            Box::new(AdaptiveLimit::new()),
            AdaptiveParams::defaults(Algorithm::Aimd),
            true,
        ),
    ));
    rows.push((
        format!("sds fixed {} (4K)", 4 * model.knee),
        Limiter::Fixed(4 * model.knee),
    ));
    rows.push((
        format!("sds fixed {} (K/4)", model.knee / 4),
        Limiter::Fixed(model.knee / 4),
    ));
    for (name, limiter) in &rows {
        let mut phases = run(model, limiter);
        for (i, p) in phases.iter_mut().enumerate() {
            report(model, name, i, p);
        }
    }
}
