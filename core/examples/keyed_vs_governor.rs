//! `cargo run --release -p sds-core --locked --example keyed_vs_governor --
//! [quick]`: issue 24's decision-cost and flood goals, our [`KeyTable`]
//! against governor's keyed limiter on a DashMap, in one run.
//!
//! The rule is the same on both sides: a rate of 100 per second with a
//! burst of 100 (`Quota::per_second(100)`; ours `limit = 100`, `periodMs =
//! 1000`). A key is a `u64`: governor's map key, and its 8 bytes for us.
//! Time is passed explicitly on both sides and advances like a real clock
//! (1 ms every 20 000 calls of a thread, 50 ns a call): ours as `now_ms`,
//! governor's through its `FakeRelativeClock` (one atomic load a call).
//! The hot-key row "reading the clock" is governor's `RateLimiter::keyed`
//! as users build it (its `DefaultClock`) against ours fed
//! `Instant::elapsed`.
//!
//! Costs are ns per decision per thread, the best of alternated blocks of
//! 200 000 calls a thread (ours, governor, ours, ...): a loaded machine's
//! noise hits both alike. With 2 threads, both run the same workload on
//! one shared limiter at once (different points of the same key draw), so
//! equal numbers mean perfect scaling. Keys are drawn beforehand into an
//! array (2^20 draws) read in order: uniform over N resident keys, or Zipf
//! (s = 1) over 10^6. Every table is filled (each key decided once) before
//! it is timed. Memory: ours is cells × 16 B (fixed at creation); governor's
//! is the growth of the resident set (`/proc/self/statm`, 4 KiB pages) while
//! its map fills, so it includes the map's spare capacity and allocator
//! slack, as a process would pay.
//!
//! The flood: 10^8 distinct new keys (10^7 with `quick`) at full speed
//! against a table full of 10^6 keys, with an abusive key that went over
//! its limit before and keeps calling (one call in 1 000), and 1 000
//! legitimate keys coming back at 10 per second each (one call in 1 000).
//! Every 64th call is timed alone with `Instant` (so is the quiet one-key
//! cost it is held against: both include the timer's own cost). Then a
//! flood with the clock stopped (nothing drains, every eviction gives up a
//! live state) checks that a key over its limit before it, silent during
//! it, is still refused after it. Governor takes the same flood until its
//! resident set has grown by 4 GiB.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::thread;
use std::time::{Duration, Instant};

use governor::clock::FakeRelativeClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable, KeyTableStats};
use sds_core::{Flags, Outcome, PointTable, Slot, Value};

#[path = "common/mod.rs"]
mod common;
#[path = "common/draws.rs"]
mod draws;

const T0: u64 = 1_700_000_000_000;
const BLOCK: u64 = 200_000;
const CALLS_PER_MS: u64 = 20_000;
const RATE: u32 = 100;
const ZIPF_KEYS: u64 = 1_000_000;
const FLOOD_RESIDENT: u64 = 1_000_000;
const GOVERNOR_CAP: u64 = 4 << 30;
const ABUSER: u64 = u64::MAX - 1;
const SILENT_ABUSER: u64 = u64::MAX - 2;
const LEGIT: u64 = 1_000;

type Table = KeyTable<Vec<KeyBucket>>;
type Governor = RateLimiter<u64, DashMapStateStore<u64>, FakeRelativeClock, NoOpMiddleware<Nanos>>;

/// A limiter under test: one decision for `key` at the calling thread's
/// `tick`-th call (from which the time follows).
trait Limiter: Sync {
    fn decide(&self, thread: usize, key: u64, tick: u64) -> bool;
}

/// A table for `keys` resident keys, with 25 % more cells (as the docs
/// advise).
fn table(keys: u64) -> Table {
    let rule = KeyRule::from_entries(
        KeyRuleKind::Rate,
        [
            ("limit", Value::from(RATE as i64)),
            ("periodMs", Value::from(1000i64)),
        ],
    )
    .unwrap();
    let buckets = (keys * 5 / 4).div_ceil(4) as usize;
    KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

fn now_ms(tick: u64) -> u64 {
    T0 + tick / CALLS_PER_MS
}

impl Limiter for Table {
    fn decide(&self, _: usize, key: u64, tick: u64) -> bool {
        KeyTable::decide(self, &key.to_le_bytes(), now_ms(tick), 1)
            .unwrap()
            .admitted
    }
}

fn quota() -> Quota {
    Quota::per_second(NonZeroU32::new(RATE).unwrap())
}

struct Gov {
    limiter: Governor,
    clock: FakeRelativeClock,
}

impl Gov {
    fn new() -> Gov {
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::dashmap_with_clock(quota(), &clock);
        Gov { limiter, clock }
    }
}

impl Limiter for Gov {
    fn decide(&self, thread: usize, key: u64, tick: u64) -> bool {
        // One clock for all threads: the first one moves it.
        if thread == 0 && tick % CALLS_PER_MS == 0 {
            self.clock.advance(Duration::from_millis(1));
        }
        self.limiter.check_key(&key).is_ok()
    }
}

/// Ours fed the time a real clock gives, next to governor's own clock.
struct OursClocked(Table, Instant);
struct GovClocked(DefaultKeyedRateLimiter<u64>);

impl Limiter for OursClocked {
    fn decide(&self, _: usize, key: u64, _: u64) -> bool {
        let now = T0 + self.1.elapsed().as_millis() as u64;
        self.0.decide(&key.to_le_bytes(), now, 1).unwrap().admitted
    }
}

impl Limiter for GovClocked {
    fn decide(&self, _: usize, key: u64, _: u64) -> bool {
        self.0.check_key(&key).is_ok()
    }
}

/// Resident memory of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// One block: `threads` threads each make BLOCK decisions on keys read in
/// order from `keys` (each from its own point); ns per call per thread.
fn block(l: &dyn Limiter, keys: &[u64], ticks: &mut [u64]) -> f64 {
    let run = |thread: usize, tick: &mut u64| {
        let mask = keys.len() - 1;
        let from = thread * keys.len() / 2;
        for _ in 0..BLOCK {
            let key = keys[(from + *tick as usize) & mask];
            black_box(l.decide(thread, black_box(key), *tick));
            *tick += 1;
        }
    };
    let start = Instant::now();
    if ticks.len() == 1 {
        run(0, &mut ticks[0]);
    } else {
        thread::scope(|s| {
            for (thread, tick) in ticks.iter_mut().enumerate() {
                s.spawn(move || run(thread, tick));
            }
        });
    }
    start.elapsed().as_nanos() as f64 / BLOCK as f64
}

/// Best ns per call of each side over `rounds` alternated blocks.
fn compare(
    ours: &dyn Limiter,
    gov: &dyn Limiter,
    keys: &[u64],
    threads: usize,
    rounds: usize,
) -> (f64, f64) {
    let (mut a, mut b) = (f64::MAX, f64::MAX);
    let mut ticks_a = vec![1; threads];
    let mut ticks_b = vec![1; threads];
    for _ in 0..rounds {
        a = a.min(block(ours, keys, &mut ticks_a));
        b = b.min(block(gov, keys, &mut ticks_b));
    }
    (a, b)
}

fn row(name: &str, threads: usize, (ours, gov): (f64, f64), mem: &str) {
    let ratio = gov / ours;
    println!("{name:<28} {threads:>2} {ours:>9.1} {gov:>9.1} {ratio:>7.2}x  {mem}");
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Both limiters holding `keys` (each decided once); governor's memory is
/// the resident set's growth while it fills.
fn filled(keys: u64) -> (Table, Gov, u64) {
    let ours = table(keys);
    for k in 0..keys {
        Limiter::decide(&ours, 0, k, 0);
    }
    let before = rss();
    let gov = Gov::new();
    for k in 0..keys {
        gov.limiter.check_key(&k).ok();
    }
    let grown = rss().saturating_sub(before);
    (ours, gov, grown)
}

fn ours_mem(t: &Table) -> u64 {
    t.capacity() as u64 * 16
}

/// The point pair by id, the reference of the one-key goal (1.5x).
fn point_pair(rounds: usize) -> f64 {
    let points = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let id = points
        .set_strategy(b"orderService.process", &common::five_rules())
        .unwrap();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..BLOCK {
            let entry = points.enter_point(black_box(id), T0, Flags::NONE).unwrap();
            points.exit(&entry, T0 + 1, Outcome::Ok).unwrap();
        }
        best = best.min(start.elapsed().as_nanos() as f64 / BLOCK as f64);
    }
    best
}

/// p50, p99, p99.9 and max of sampled ns.
fn percentiles(samples: &mut [u32]) -> [u32; 4] {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    [at(0.5), at(0.99), at(0.999), samples[samples.len() - 1]]
}

fn timed(f: impl FnOnce() -> bool) -> (bool, u32) {
    let start = Instant::now();
    let verdict = f();
    (verdict, start.elapsed().as_nanos() as u32)
}

/// The quiet cost: every 64th call timed alone, on a table filled with
/// FLOOD_RESIDENT keys, of keys read in order from `keys`.
fn quiet_samples(calls: u64, keys: &[u64]) -> Vec<u32> {
    let t = table(FLOOD_RESIDENT);
    for k in 0..FLOOD_RESIDENT {
        Limiter::decide(&t, 0, k, 0);
    }
    let mut samples = Vec::new();
    for i in 0..calls {
        let key = keys[i as usize & (keys.len() - 1)];
        if i % 64 == 7 {
            samples.push(timed(|| Limiter::decide(&t, 0, key, i)).1);
        } else {
            black_box(Limiter::decide(&t, 0, key, i));
        }
    }
    samples
}

/// What a flood did to our table.
struct Flood {
    samples: Vec<u32>,
    abuser_admitted: u64,
    abuser_allowed: u64,
    abuser_after: u64,
    legit_refused: u64,
    legit_calls: u64,
    before: KeyTableStats,
    /// After the first 10 ms, while the keys filled at 0 still owe.
    early: KeyTableStats,
    after: KeyTableStats,
    rss_growth: u64,
    ns_per_call: f64,
}

/// `flood` new keys at full speed against a full table, the clock running.
fn flood_ours(flood: u64) -> Flood {
    let t = table(FLOOD_RESIDENT);
    for k in 0..FLOOD_RESIDENT + LEGIT {
        Limiter::decide(&t, 0, k, 0);
    }
    while Limiter::decide(&t, 0, ABUSER, 0) {}
    let before = t.stats();
    let rss_before = rss();
    let mut samples = Vec::with_capacity((flood / 64 + 1) as usize);
    let (mut abuser_admitted, mut legit_refused, mut legit_calls) = (0, 0, 0);
    let mut early = before;
    let start = Instant::now();
    for i in 0..flood {
        if i == 10 * CALLS_PER_MS {
            early = t.stats();
        }
        let key = match i % 1000 {
            0 => ABUSER,
            500 => FLOOD_RESIDENT + (i / 1000) % LEGIT,
            _ => 1 << 40 | i,
        };
        let admitted = if i % 64 == 7 {
            let (admitted, ns) = timed(|| Limiter::decide(&t, 0, key, i));
            samples.push(ns);
            admitted
        } else {
            Limiter::decide(&t, 0, key, i)
        };
        match i % 1000 {
            0 => abuser_admitted += admitted as u64,
            500 => {
                legit_calls += 1;
                legit_refused += !admitted as u64;
            }
            _ => {}
        }
    }
    let ns_per_call = start.elapsed().as_nanos() as f64 / flood as f64;
    // The abuser owed a whole burst at 0: it earns one call per 10 ms.
    let abuser_allowed = now_ms(flood).saturating_sub(T0) / (1000 / RATE as u64) + 1;
    // Ten calls at once right after: a fresh key would have all ten.
    let abuser_after = (0..10)
        .filter(|_| Limiter::decide(&t, 0, ABUSER, flood))
        .count() as u64;
    Flood {
        samples,
        abuser_admitted,
        abuser_allowed,
        abuser_after,
        legit_refused,
        legit_calls,
        before,
        early,
        after: t.stats(),
        rss_growth: rss().saturating_sub(rss_before),
        ns_per_call,
    }
}

/// `flood` new keys with the clock stopped against a full table: every
/// key owes, nothing drains. Whether a key over its limit before it (and
/// silent during it) is still refused after it, and the table's stats.
fn flood_frozen(flood: u64) -> (bool, KeyTableStats) {
    let t = table(FLOOD_RESIDENT);
    for k in 0..FLOOD_RESIDENT {
        Limiter::decide(&t, 0, k, 0);
    }
    while Limiter::decide(&t, 0, SILENT_ABUSER, 0) {}
    for i in 0..flood {
        black_box(Limiter::decide(&t, 0, 1 << 40 | i, 0));
    }
    (Limiter::decide(&t, 0, SILENT_ABUSER, 0), t.stats())
}

/// Governor under the same flood until it is done or its resident set
/// grew by GOVERNOR_CAP: keys taken, growth, ns per call, sampled times.
fn flood_governor(flood: u64) -> (u64, u64, f64, Vec<u32>) {
    let gov = Gov::new();
    for k in 0..FLOOD_RESIDENT + LEGIT {
        gov.limiter.check_key(&k).ok();
    }
    let before = rss();
    let mut samples = Vec::new();
    let start = Instant::now();
    let mut done = 0;
    while done < flood {
        if done % (1 << 16) == 0 && rss().saturating_sub(before) > GOVERNOR_CAP {
            break;
        }
        let key = 1 << 40 | done;
        if done % 64 == 7 {
            samples.push(timed(|| gov.decide(0, key, done)).1);
        } else {
            black_box(gov.decide(0, key, done));
        }
        done += 1;
    }
    let ns = start.elapsed().as_nanos() as f64 / done as f64;
    (done, rss().saturating_sub(before), ns, samples)
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let rounds = if quick { 5 } else { 9 };
    let sizes: &[u64] = if quick {
        &[100_000, 1_000_000]
    } else {
        &[100_000, 1_000_000, 10_000_000]
    };
    let flood = if quick { 10_000_000 } else { 100_000_000 };

    println!("rate 100/s, burst 100; ns per decision per thread, best of {rounds} alternated blocks of {BLOCK} calls");
    println!(
        "{:<28} {:>2} {:>9} {:>9} {:>8}  memory (ours / governor)",
        "keys", "th", "ours ns", "gov ns", "gov/ours"
    );

    let pair = point_pair(rounds);
    let hot = [42u64];
    let mut hot_ours = f64::MAX;
    {
        let ours = table(1024);
        let gov = Gov::new();
        for threads in [1, 2] {
            let r = compare(&ours, &gov, &hot, threads, rounds);
            if threads == 1 {
                hot_ours = r.0;
            }
            row("1 hot key", threads, r, "");
        }
        let ours = OursClocked(table(1024), Instant::now());
        let gov = GovClocked(RateLimiter::keyed(quota()));
        row(
            "1 hot key, reading the clock",
            1,
            compare(&ours, &gov, &hot, 1, rounds),
            "",
        );
    }
    for &n in sizes {
        let (ours, gov, grown) = filled(n);
        let draws = draws::uniform(n);
        let mem = format!("{} / {}", mib(ours_mem(&ours)), mib(grown));
        for threads in [1, 2] {
            let name = format!("{n} uniform");
            row(
                &name,
                threads,
                compare(&ours, &gov, &draws, threads, rounds),
                &mem,
            );
        }
    }
    {
        let (ours, gov, grown) = filled(ZIPF_KEYS);
        let draws = draws::zipf(ZIPF_KEYS);
        let mem = format!("{} / {}", mib(ours_mem(&ours)), mib(grown));
        for threads in [1, 2] {
            row(
                "10^6 Zipf s=1",
                threads,
                compare(&ours, &gov, &draws, threads, rounds),
                &mem,
            );
        }
    }
    println!(
        "point pair by id: {pair:.1} ns; one hot key / pair = {:.2} (goal <= 1.5)",
        hot_ours / pair
    );

    let mut quiet = quiet_samples(flood / 10, &hot);
    let [q50, q99, ..] = percentiles(&mut quiet);
    let mut resident = quiet_samples(flood / 10, &draws::uniform(FLOOD_RESIDENT));
    let [r50, r99, ..] = percentiles(&mut resident);
    println!("\nflood: {flood} new keys against a full table of {FLOOD_RESIDENT} keys (per-call times include Instant's cost)");
    println!("quiet one key, sampled: p50 {q50} ns, p99 {q99} ns");
    println!("quiet, its {FLOOD_RESIDENT} resident keys drawn uniformly, sampled: p50 {r50} ns, p99 {r99} ns");
    let mut f = flood_ours(flood);
    let [p50, p99, p999, max] = percentiles(&mut f.samples);
    println!(
        "ours: {:.1} ns/call; sampled p50 {p50} ns, p99 {p99} ns, p99.9 {p999} ns, max {max} ns; p99 / one key's p50 = {:.2} (goal <= 4), p99 / resident keys' p99 = {:.2}",
        f.ns_per_call,
        p99 as f64 / q50 as f64,
        p99 as f64 / r99 as f64
    );
    println!("ours: stats before {:?}", f.before);
    println!("ours: stats at 10 ms {:?}", f.early);
    println!("ours: stats after  {:?}", f.after);
    println!(
        "ours: resident set growth {} (the samples' Vec alone: {})",
        mib(f.rss_growth),
        mib(f.samples.len() as u64 * 4)
    );
    println!(
        "ours: abuser admitted {} times during the flood (its rate allows {}), {} of 10 calls right after (a fresh key: 10)",
        f.abuser_admitted, f.abuser_allowed, f.abuser_after
    );
    println!(
        "ours: legitimate keys refused {} of {} calls",
        f.legit_refused, f.legit_calls
    );
    let frozen = flood / 10;
    let (silent_after, stats) = flood_frozen(frozen);
    println!(
        "ours, clock stopped, {frozen} new keys: key over its limit before still refused after: {}; {stats:?}",
        !silent_after
    );
    let (taken, grown, ns, mut samples) = flood_governor(flood);
    let [g50, g99, g999, gmax] = percentiles(&mut samples);
    println!(
        "governor: took {taken} of {flood} new keys ({}), resident set grew {}; {ns:.1} ns/call; sampled p50 {g50} ns, p99 {g99} ns, p99.9 {g999} ns, max {gmax} ns",
        if taken < flood { "stopped at the 4 GiB cap" } else { "all" },
        mib(grown)
    );
}
