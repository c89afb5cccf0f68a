//! Adaptive concurrency: an in-flight limit that finds itself from observed
//! latency, so nobody has to guess a `concurrentThreshold`.
//!
//! Four algorithms with their peers' semantics and defaults, and one of ours
//! ([`AdaptiveParams::defaults`]; core/src/adaptive/README.md has the formulas):
//!
//! - [`Algorithm::Aimd`], [`Algorithm::Vegas`], [`Algorithm::Gradient2`]:
//!   Netflix concurrency-limits 0.5.4 (`AIMDLimit`, `VegasLimit`,
//!   `Gradient2Limit`), updated on every sample.
//! - [`Algorithm::Gradient`]: Envoy's adaptive concurrency filter, gradient
//!   controller: the limit recomputed once per `concurrency_update_interval`
//!   from a percentile of that interval's latencies against a min RTT that is
//!   measured periodically at a pinned low concurrency.
//! - [`Algorithm::Knee`]: ours. Envoy's min-RTT sampling and windows, no
//!   buffer: each window the limit becomes `min(1, minRTT / p50) × L /
//!   (1 − h)`, whose one fixed point beyond the knee K is `K / (1 − h)`
//!   (h = 4 %, wider when the latency is noisy); it doubles per window
//!   until a window shows a queue (README: derivation, settle time, where
//!   it fails).
//!
//! # State and concurrency
//!
//! [`AdaptiveLimit`] is plain data: seven `u64` words and a histogram of
//! `u32` counters, all atomics. It lives in the shared-memory file of a
//! table, so it is used by many threads of many processes at once, any of
//! which may die at any instruction. Hence:
//!
//! - **No caller ever waits on another.** There is no lock: every change is
//!   a compare-and-swap on one word, an atomic add, or a plain store.
//! - **Per-sample algorithms** (AIMD, Vegas, Gradient2): the peer runs
//!   `onSample` under a `synchronized` lock, so each sample sees the state the
//!   previous one left. Here each state variable is one word (the limit as
//!   `f64` bits; Vegas's no-load RTT; Gradient2's long RTT as `f64` bits;
//!   Vegas's probe counter and jitter packed in one word), updated by a CAS
//!   loop that recomputes from the value it replaces, so no update to a word
//!   is lost and each word moves exactly as the peer's variable does. What
//!   differs: a sample may combine one word with another word's value from
//!   one update earlier (a limit step computed with a long RTT that lacks the
//!   concurrent sample), which the peer's lock excludes. Both averages and
//!   both limits are contractions of their inputs, so a one-sample lag
//!   changes a step by at most one sample's weight (Gradient2: 2/601 of the
//!   long RTT) and the limit converges to the same fixed point.
//! - **Windowed algorithm** (Envoy's gradient): samples are aggregated with
//!   atomic adds into a fixed histogram; the caller whose CAS moves the
//!   window's start closes it (percentile, new limit, histogram cleared).
//!   Envoy does the same under a mutex from a timer; here the first sample
//!   after the interval closes the window (a window without samples changes
//!   nothing in Envoy either). The min-RTT measurement is a mode bit in one
//!   word, entered and left by CAS; while it is on, [`AdaptiveLimit::limit`]
//!   reads the minimum concurrency and the limit word keeps the value to
//!   return to (Envoy's "deferred limit"). A measurement is finished by any
//!   sample that finds enough samples gathered, so a dead finisher leaves it
//!   to the next sample.
//! - **Any bit pattern is a valid state.** A process killed between two
//!   words leaves each word valid on its own; what it may leave is one lost
//!   update (a sample not counted, a histogram not cleared so one window
//!   mixes two windows' samples, a min RTT from the previous measurement).
//!   All-zero is fresh (the initial limit); every read is sanitized: a limit
//!   that is 0, NaN or infinite reads as the initial limit and any other is
//!   clamped into `[min_limit, max_limit]`; a long RTT that is not a positive
//!   finite number restarts from the next sample; a min-RTT due time or
//!   window start further from `now` than one period restarts that period.
//!
//! The parameters are not in the state: the caller passes the same
//! [`AdaptiveParams`] to every call (they come from the strategy). When the
//! algorithm of a point changes, [`AdaptiveLimit::reset`] it (another
//! algorithm's words read as a valid but meaningless state otherwise).
//!
//! Time is explicit: `now_ms` (the caller's clock, as everywhere in the
//! core) and `rtt_us`, the request's duration in microseconds.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// An adaptive-limit algorithm, by its code in the strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Algorithm {
    /// Additive increase, multiplicative decrease (concurrency-limits
    /// `AIMDLimit`): +1 per sample while at least half the limit is in
    /// flight, ×0.9 on a drop or a sample slower than 5 s.
    Aimd = 1,
    /// TCP Vegas's queue estimate (concurrency-limits `VegasLimit`).
    Vegas = 2,
    /// Long- against short-RTT gradient (concurrency-limits
    /// `Gradient2Limit`).
    Gradient2 = 3,
    /// Envoy's adaptive concurrency filter, gradient controller.
    Gradient = 4,
    /// Ours: Envoy's min-RTT sampling and windows, a limit that seeks the
    /// knee (the concurrency where latency starts to grow) with a headroom
    /// of 4 %, doubling until the first queue shows.
    Knee = 5,
}

crate::error::names!(Algorithm {
    Aimd => "AIMD",
    Vegas => "VEGAS",
    Gradient2 => "GRADIENT2",
    Gradient => "GRADIENT",
    Knee => "KNEE",
});

impl Algorithm {
    /// The algorithm of a strategy code, `None` for any other number
    /// (codes follow [`Algorithm::ALL`] from 1).
    pub const fn from_code(code: i64) -> Option<Algorithm> {
        if code >= 1 && code <= Algorithm::ALL.len() as i64 {
            Some(Algorithm::ALL[code as usize - 1])
        } else {
            None
        }
    }

    /// Its code in the strategy.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

/// The bounds of an adaptive limit and the algorithm that moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveParams {
    /// Which algorithm.
    pub algorithm: Algorithm,
    /// The lowest limit (read as 1 if 0). For [`Algorithm::Gradient`] it is
    /// also Envoy's `min_concurrency`, the limit while the min RTT is
    /// measured.
    pub min_limit: u32,
    /// The highest limit (read as `min_limit` if lower).
    pub max_limit: u32,
    /// The limit of a fresh state (clamped into the bounds).
    pub initial_limit: u32,
}

impl AdaptiveParams {
    /// Each peer's own defaults:
    ///
    /// | algorithm | min | max | initial | source |
    /// |---|---|---|---|---|
    /// | AIMD | 20 | 200 | 20 | `AIMDLimit.Builder` (concurrency-limits 0.5.4) |
    /// | Vegas | 1 | 1000 | 20 | `VegasLimit.Builder`: `maxConcurrency` 1000, `initialLimit` 20; the limit is kept ≥ 1 |
    /// | Gradient2 | 20 | 200 | 20 | `Gradient2Limit.Builder` |
    /// | Gradient | 3 | 1000 | 3 | Envoy `min_rtt_calc_params.min_concurrency` 3, `max_concurrency_limit` 1000; the controller starts at `min_concurrency` |
    /// | Knee | 3 | 1000 | 3 | Envoy's gradient's, so the two compare on the same bounds |
    pub const fn defaults(algorithm: Algorithm) -> AdaptiveParams {
        let (min_limit, max_limit, initial_limit) = match algorithm {
            Algorithm::Aimd => (20, 200, 20),
            Algorithm::Vegas => (1, 1000, 20),
            Algorithm::Gradient2 => (20, 200, 20),
            Algorithm::Gradient | Algorithm::Knee => (3, 1000, 3),
        };
        AdaptiveParams {
            algorithm,
            min_limit,
            max_limit,
            initial_limit,
        }
    }

    /// `(min, max, initial)`, made consistent: `1 <= min <= initial <= max`.
    pub const fn bounds(&self) -> (u32, u32, u32) {
        let min = if self.min_limit == 0 {
            1
        } else {
            self.min_limit
        };
        let max = if self.max_limit < min {
            min
        } else {
            self.max_limit
        };
        let initial = if self.initial_limit < min {
            min
        } else if self.initial_limit > max {
            max
        } else {
            self.initial_limit
        };
        (min, max, initial)
    }
}

/// AIMD: the factor of a decrease (`AIMDLimit` `backoffRatio` 0.9).
pub const AIMD_BACKOFF_RATIO: f64 = 0.9;
/// AIMD: a sample slower than this counts as a drop (`AIMDLimit` `timeout`
/// 5 s).
pub const AIMD_TIMEOUT_US: u64 = 5_000_000;
/// Vegas: a probe of the no-load RTT every `jitter × 30 × limit` samples,
/// jitter uniform in [0.5, 1) (`VegasLimit` `probeMultiplier` 30).
pub const VEGAS_PROBE_MULTIPLIER: u32 = 30;
/// Gradient2: `smoothing` 0.2.
pub const GRADIENT2_SMOOTHING: f64 = 0.2;
/// Gradient2: `queueSize` 4 (the constant default function).
pub const GRADIENT2_QUEUE_SIZE: f64 = 4.0;
/// Gradient2: `rttTolerance` 1.5.
pub const GRADIENT2_RTT_TOLERANCE: f64 = 1.5;
/// Gradient2: the long RTT's exponential average window, `longWindow` 600.
pub const GRADIENT2_LONG_WINDOW: u32 = 600;
/// Gradient2: samples averaged plainly before the exponential average
/// starts (`ExpAvgMeasurement` warm-up window 10).
pub const GRADIENT2_WARMUP: u64 = 10;
/// Gradient (Envoy): `concurrency_update_interval`. Envoy has no default
/// (the field is required); 100 ms is its docs' example.
pub const GRADIENT_UPDATE_INTERVAL_MS: u64 = 100;
/// Gradient (Envoy): `sample_aggregate_percentile`, default 50.
pub const GRADIENT_PERCENTILE: u64 = 50;
/// Gradient (Envoy): `min_rtt_calc_params.interval`. Required in Envoy;
/// 60 s is its docs' example.
pub const GRADIENT_MIN_RTT_INTERVAL_MS: u64 = 60_000;
/// Gradient (Envoy): `min_rtt_calc_params.request_count`, default 50.
pub const GRADIENT_MIN_RTT_REQUESTS: u32 = 50;
/// Gradient (Envoy): `min_rtt_calc_params.jitter`, default 15 %.
pub const GRADIENT_JITTER_PCT: u64 = 15;
/// Gradient (Envoy): `min_rtt_calc_params.buffer`, default 25 %.
pub const GRADIENT_BUFFER_PCT: u64 = 25;
/// Gradient (Envoy): the limit pinned at the minimum for this many windows
/// in a row starts a min-RTT measurement.
pub const GRADIENT_MIN_WINDOWS: u32 = 5;

/// Knee: the least headroom h over the knee, in percent: each window the
/// limit becomes `g × L / (1 − h)` with `g = minRTT / p50`, whose fixed
/// point beyond the knee K (where `p50 = minRTT × L / K`) is `K / (1 − h)`.
pub const KNEE_HEADROOM_PCT: u64 = 4;
/// Knee: the headroom grows with the latency's noise: at least
/// [`KNEE_HEADROOM_PCT`], else twice the relative standard error of a
/// window's p50, estimated as IQR / (p50 × √n) from the min-RTT
/// measurement's interquartile range (exact for a uniform spread, 7 % high
/// for a normal one), at most [`KNEE_HEADROOM_MAX_PCT`].
pub const KNEE_HEADROOM_MAX_PCT: u64 = 25;
/// Knee: until the first window whose p50 is this much above the min RTT
/// (a queue), the limit doubles per window (its slow start).
pub const KNEE_QUEUE_PCT: u64 = 25;
/// Knee: a window in which more than this share of samples were dropped
/// (failed from overload) cuts the limit by [`KNEE_BACKOFF_RATIO`].
pub const KNEE_DROP_PCT: u64 = 10;
/// Knee: the cut of a window with drops.
pub const KNEE_BACKOFF_RATIO: f64 = 0.9;
/// Knee: a window closes after [`GRADIENT_UPDATE_INTERVAL_MS`] once it has
/// this many samples (a p50 of fewer is too noisy to tell a 4 % queue).
pub const KNEE_WINDOW_SAMPLES: u32 = 100;
/// Knee: this many windows in a row in which the limit fell (or sat at its
/// minimum) start a min-RTT measurement (Envoy's rule counts 5 at the
/// minimum; at the knee's fixed point half the windows fall, so 10 in a row
/// happen about once in 1000 windows).
pub const KNEE_FALLING_WINDOWS: u32 = 10;
/// Knee: the min RTT is the p50 of this many samples at the minimum limit
/// (Envoy's `request_count`; its interval, jitter and update interval are
/// the `GRADIENT_*` constants).
pub const KNEE_MIN_RTT_REQUESTS: u32 = 100;

/// Buckets of the latency histogram (Envoy's gradient): 8 per power of two
/// of 16 µs units, so a bucket is at most 1/8 of its value wide; latencies
/// from 4.19 s up share the last bucket.
pub const HIST_BUCKETS: usize = 128;
const HIST_UNIT_US: u64 = 16;

/// One point's adaptive limit (module doc): 568 bytes of atomics, all-zero
/// fresh, any bit pattern valid.
///
/// Words, by algorithm:
///
/// | word | AIMD | Vegas | Gradient2 | Gradient (Envoy) | Knee |
/// |---|---|---|---|---|---|
/// | `limit` | limit, `f64` bits | estimated limit | estimated limit | limit (kept while measuring the min RTT) | as Gradient |
/// | `rtt_base` | – | no-load RTT µs | long RTT, `f64` bits µs | min RTT µs | min RTT µs (low 40 bits), the measurement's IQR / p50 in thousandths (high 24) |
/// | `rtt_last` | last RTT µs | last RTT µs | last (short) RTT µs | last window's percentile µs | as Gradient |
/// | `samples` | samples seen | samples seen | samples seen | samples seen | samples seen |
/// | `probe` | – | probe count (low 32), jitter (high 32) | – | mode: measuring bit (63), epoch or due time ms (low 48) | as Gradient |
/// | `window` | – | – | – | window start ms | window start ms (low 48), the window's most in flight (high 16, saturating) |
/// | `aux` | – | – | – | window sample count (low 32), windows at the minimum (high 32) | measurement's sample count (low 32), falling windows in a row (bits 32–39), the window's drops (bits 40–62), slow start over (bit 63) |
/// | `hist` | – | – | – | latency histogram | latency histogram (samples not dropped; its total is the window's count) |
#[repr(C)]
pub struct AdaptiveLimit {
    limit: AtomicU64,
    rtt_base: AtomicU64,
    rtt_last: AtomicU64,
    samples: AtomicU64,
    probe: AtomicU64,
    window: AtomicU64,
    aux: AtomicU64,
    hist: [AtomicU32; HIST_BUCKETS],
}

// Loom's model atomics are larger: the layout holds for the real ones.
#[cfg(not(loom))]
const _: () = assert!(core::mem::size_of::<AdaptiveLimit>() == 7 * 8 + 4 * HIST_BUCKETS);
#[cfg(not(loom))]
const _: () = assert!(core::mem::size_of::<AdaptiveLimit>() == 568);

/// What [`AdaptiveLimit::stats`] reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct AdaptiveStats {
    /// The limit in force ([`AdaptiveLimit::limit`]).
    pub limit: u32,
    /// 1 while Envoy's gradient or Knee measures its min RTT (the limit is
    /// then its minimum), else 0.
    pub measuring_min_rtt: u32,
    /// The reference RTT in µs: Vegas's no-load RTT, Envoy's and Knee's min
    /// RTT (0 until measured), Gradient2's long RTT (its "RTT no-load"); 0
    /// for AIMD.
    pub min_rtt_us: u64,
    /// The recent RTT in µs: the last sample's (AIMD, Vegas, Gradient2), the
    /// last window's percentile (Gradient, Knee).
    pub short_rtt_us: u64,
    /// Gradient2's long RTT in µs (exponential average over 600 samples);
    /// for Gradient, the min RTT plus its 25 % buffer; for Knee, the min RTT
    /// / (1 − h), the latency at its fixed point; 0 otherwise.
    pub long_rtt_us: u64,
    /// Samples seen since the last reset (wrapping).
    pub samples: u64,
}

const MODE_MEASURING: u64 = 1 << 63;
/// Knee's `aux`: the falling windows in a row (8 bits), the window's drops
/// (23 bits), the slow start over (1 bit).
const KNEE_AT_MIN_SHIFT: u32 = 32;
const KNEE_DROP_SHIFT: u32 = 40;
const KNEE_DROPS: u64 = ((1 << 23) - 1) << KNEE_DROP_SHIFT;
const KNEE_GROWN: u64 = 1 << 63;
/// Knee's `rtt_base`: the min RTT µs (low 40 bits) and the measurement's
/// interquartile range over its p50, in thousandths (high 24 bits).
const KNEE_SPREAD_SHIFT: u32 = 40;
const KNEE_RTT_MASK: u64 = (1 << KNEE_SPREAD_SHIFT) - 1;
const KNEE_SPREAD_MAX: u64 = (1 << (64 - KNEE_SPREAD_SHIFT)) - 1;
/// Knee's `window`: the most in flight seen in the window, above the start.
const PEAK_SHIFT: u32 = 48;
const PEAK_MAX: u64 = 0xffff;
const MS_MASK: u64 = (1 << 48) - 1;
const LOW32: u64 = 0xffff_ffff;

impl Default for AdaptiveLimit {
    fn default() -> Self {
        AdaptiveLimit::new()
    }
}

impl AdaptiveLimit {
    crate::sync::const_fn! {
        /// A fresh state (all zero): the limit is the initial limit.
        pub fn new() -> AdaptiveLimit {
            AdaptiveLimit {
                limit: AtomicU64::new(0),
                rtt_base: AtomicU64::new(0),
                rtt_last: AtomicU64::new(0),
                samples: AtomicU64::new(0),
                probe: AtomicU64::new(0),
                window: AtomicU64::new(0),
                aux: AtomicU64::new(0),
                hist: crate::sync::zeroed_u32(),
            }
        }
    }

    /// Back to fresh (the initial limit, nothing measured).
    pub fn reset(&self) {
        self.limit.store(0, Ordering::Relaxed);
        self.rtt_base.store(0, Ordering::Relaxed);
        self.rtt_last.store(0, Ordering::Relaxed);
        self.samples.store(0, Ordering::Relaxed);
        self.probe.store(0, Ordering::Relaxed);
        self.window.store(0, Ordering::Relaxed);
        self.aux.store(0, Ordering::Relaxed);
        self.clear_hist();
    }

    /// The in-flight limit now: a request is admitted while fewer than this
    /// many are in flight. Always in `[min, max]` of `params.bounds()`.
    #[inline]
    pub fn limit(&self, params: &AdaptiveParams) -> u32 {
        let (min, max, _) = params.bounds();
        if matches!(params.algorithm, Algorithm::Gradient | Algorithm::Knee)
            && self.probe.load(Ordering::Relaxed) & MODE_MEASURING != 0
        {
            return min;
        }
        let l = self.estimate(params, self.limit.load(Ordering::Relaxed));
        // `as` truncates toward zero (as `trunc` would) and saturates; the
        // estimate is clamped already.
        (l as u32).clamp(min, max)
    }

    /// One finished request: `rtt_us` its duration, `in_flight` the requests
    /// in flight when it started (itself included, as concurrency-limits
    /// passes it), `dropped` if it failed from overload (a timeout, a
    /// rejection by the server). Requests the limit refused are no samples.
    pub fn on_sample(
        &self,
        params: &AdaptiveParams,
        now_ms: u64,
        rtt_us: u64,
        in_flight: u32,
        dropped: bool,
    ) {
        self.samples.fetch_add(1, Ordering::Relaxed);
        match params.algorithm {
            Algorithm::Aimd => self.aimd(params, rtt_us, in_flight, dropped),
            Algorithm::Vegas => self.vegas(params, now_ms, rtt_us, in_flight, dropped),
            Algorithm::Gradient2 => self.gradient2(params, rtt_us, in_flight),
            Algorithm::Gradient => self.gradient(params, now_ms, rtt_us),
            Algorithm::Knee => self.knee(params, now_ms, rtt_us, in_flight, dropped),
        }
    }

    /// The limit and the inputs the algorithm judged it from.
    pub fn stats(&self, params: &AdaptiveParams) -> AdaptiveStats {
        let limit = self.limit(params);
        let samples = self.samples.load(Ordering::Relaxed);
        let base = self.rtt_base.load(Ordering::Relaxed);
        let last = self.rtt_last.load(Ordering::Relaxed);
        match params.algorithm {
            Algorithm::Aimd => AdaptiveStats {
                limit,
                short_rtt_us: last,
                samples,
                ..AdaptiveStats::default()
            },
            Algorithm::Vegas => AdaptiveStats {
                limit,
                min_rtt_us: base,
                short_rtt_us: last,
                samples,
                ..AdaptiveStats::default()
            },
            Algorithm::Gradient2 => {
                let long = positive(f64::from_bits(base)).map_or(0, to_u64);
                AdaptiveStats {
                    limit,
                    min_rtt_us: long,
                    short_rtt_us: last,
                    long_rtt_us: long,
                    samples,
                    ..AdaptiveStats::default()
                }
            }
            Algorithm::Gradient => {
                let measuring = self.probe.load(Ordering::Relaxed) & MODE_MEASURING != 0;
                AdaptiveStats {
                    limit,
                    measuring_min_rtt: measuring as u32,
                    min_rtt_us: base,
                    short_rtt_us: last,
                    long_rtt_us: base
                        .saturating_add(base.saturating_mul(GRADIENT_BUFFER_PCT) / 100),
                    samples,
                }
            }
            Algorithm::Knee => {
                let measuring = self.probe.load(Ordering::Relaxed) & MODE_MEASURING != 0;
                let min_rtt = base & KNEE_RTT_MASK;
                let headroom = knee_headroom(base >> KNEE_SPREAD_SHIFT, KNEE_WINDOW_SAMPLES as u64);
                AdaptiveStats {
                    limit,
                    measuring_min_rtt: measuring as u32,
                    min_rtt_us: min_rtt,
                    short_rtt_us: last,
                    long_rtt_us: to_u64(min_rtt as f64 / (1.0 - headroom)),
                    samples,
                }
            }
        }
    }

    /// The estimated limit a `limit` word holds, sanitized (module doc).
    #[inline]
    fn estimate(&self, params: &AdaptiveParams, bits: u64) -> f64 {
        let (min, max, initial) = params.bounds();
        let v = f64::from_bits(bits);
        if bits == 0 || !v.is_finite() {
            return initial as f64;
        }
        clamp(v, min as f64, max as f64)
    }

    /// Replaces the limit by `step(current)` (a CAS loop: no update lost);
    /// `step` returning `None` leaves it.
    #[inline]
    fn update_limit(&self, params: &AdaptiveParams, step: impl Fn(f64) -> Option<f64>) {
        let (min, max, _) = params.bounds();
        let mut bits = self.limit.load(Ordering::Relaxed);
        loop {
            let current = self.estimate(params, bits);
            let Some(next) = step(current) else { return };
            let next = if next.is_nan() {
                current
            } else {
                clamp(next, min as f64, max as f64)
            };
            if next.to_bits() == bits {
                return;
            }
            match self.limit.compare_exchange_weak(
                bits,
                next.to_bits(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => bits = seen,
            }
        }
    }

    // AIMDLimit._update: on a drop or a sample over the timeout the limit
    // becomes floor(limit × 0.9); otherwise, when at least half the limit was
    // in flight, limit + 1; clamped into [min, max]. The limit is an integer.
    fn aimd(&self, params: &AdaptiveParams, rtt_us: u64, in_flight: u32, dropped: bool) {
        self.rtt_last.store(rtt_us, Ordering::Relaxed);
        self.update_limit(params, |current| {
            let current = trunc(current);
            if dropped || rtt_us > AIMD_TIMEOUT_US {
                Some(trunc(current * AIMD_BACKOFF_RATIO))
            } else if in_flight as f64 * 2.0 >= current {
                Some(current + 1.0)
            } else {
                None
            }
        });
    }

    // VegasLimit._update (core/src/adaptive/README.md has the formulas).
    fn vegas(
        &self,
        params: &AdaptiveParams,
        now_ms: u64,
        rtt_us: u64,
        in_flight: u32,
        dropped: bool,
    ) {
        let rtt = rtt_us.max(1);
        self.rtt_last.store(rtt, Ordering::Relaxed);
        let estimate = self.estimate(params, self.limit.load(Ordering::Relaxed));

        // The probe: count samples (one add); at jitter × 30 × limit of them,
        // the no-load RTT is replaced by this sample's and a new jitter drawn.
        // The sample whose CAS restarts the count probes; if another sample
        // moved the word first, a later sample still finds the probe due.
        let before = self.probe.fetch_add(1, Ordering::Relaxed);
        let word = before.wrapping_add(1);
        let jitter = 0.5 + 0.5 * ((word >> 32) as f64 / 4_294_967_296.0);
        let due = jitter * VEGAS_PROBE_MULTIPLIER as f64 * estimate <= (word & LOW32) as f64;
        let probed = due && {
            let draw = splitmix64(word ^ now_ms.rotate_left(20) ^ rtt) >> 32;
            self.probe
                .compare_exchange(word, draw << 32, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        };
        if probed {
            self.rtt_base.store(rtt, Ordering::Relaxed);
            return;
        }

        // A new minimum becomes the no-load RTT; that sample moves nothing else.
        let mut noload = self.rtt_base.load(Ordering::Relaxed);
        while noload == 0 || rtt < noload {
            match self.rtt_base.compare_exchange_weak(
                noload,
                rtt,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => noload = seen,
            }
        }

        self.update_limit(params, |limit| {
            let queue = ceil(limit * (1.0 - noload as f64 / rtt as f64));
            let log = log10_root(limit) as f64;
            if dropped {
                return Some(limit - log);
            }
            if (in_flight as f64) * 2.0 < limit {
                return None;
            }
            let (alpha, beta, threshold) = (3.0 * log, 6.0 * log, log);
            if queue <= threshold {
                Some(limit + beta)
            } else if queue < alpha {
                Some(limit + log)
            } else if queue > beta {
                Some(limit - log)
            } else {
                None
            }
        });
    }

    // Gradient2Limit._update (core/src/adaptive/README.md). Drops are ignored, as there.
    fn gradient2(&self, params: &AdaptiveParams, rtt_us: u64, in_flight: u32) {
        let short = rtt_us.max(1) as f64;
        self.rtt_last.store(rtt_us, Ordering::Relaxed);
        // `samples` was incremented for this sample already.
        let seen = self.samples.load(Ordering::Relaxed).wrapping_sub(1);
        let factor = 2.0 / (GRADIENT2_LONG_WINDOW as f64 + 1.0);

        let mut bits = self.rtt_base.load(Ordering::Relaxed);
        let long = loop {
            let averaged = match positive(f64::from_bits(bits)) {
                None => short,
                Some(v) if seen < GRADIENT2_WARMUP => v + (short - v) / (seen + 1) as f64,
                Some(v) => v * (1.0 - factor) + short * factor,
            };
            // A long RTT over twice the short one decays by 5 % (the stored
            // value: this sample's gradient uses the average, as the peer's).
            let stored = if averaged / short > 2.0 {
                averaged * 0.95
            } else {
                averaged
            };
            match self.rtt_base.compare_exchange_weak(
                bits,
                stored.to_bits(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break averaged,
                Err(seen_bits) => bits = seen_bits,
            }
        };

        self.update_limit(params, |limit| {
            if (in_flight as f64) < limit / 2.0 {
                return None;
            }
            let gradient = clamp(GRADIENT2_RTT_TOLERANCE * long / short, 0.5, 1.0);
            let next = limit * gradient + GRADIENT2_QUEUE_SIZE;
            Some(limit * (1.0 - GRADIENT2_SMOOTHING) + next * GRADIENT2_SMOOTHING)
        });
    }

    // Envoy's gradient controller (core/src/adaptive/README.md).
    fn gradient(&self, params: &AdaptiveParams, now_ms: u64, rtt_us: u64) {
        let now = now_ms & MS_MASK;
        let Some(mode) = self.min_rtt_phase(now, rtt_us, GRADIENT_MIN_RTT_REQUESTS, 0) else {
            return;
        };

        self.hist_add(rtt_us);
        self.aux.fetch_add(1, Ordering::Relaxed);
        let start = self.window.load(Ordering::Relaxed);
        let closes = now >= start.saturating_add(GRADIENT_UPDATE_INTERVAL_MS) || start > now;
        if !closes
            || self
                .window
                .compare_exchange(start, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // This caller closed the window.
        let percentile = self.hist_percentile(GRADIENT_PERCENTILE);
        self.clear_hist();
        let aux = self.aux.fetch_and(!LOW32, Ordering::Relaxed);
        let Some(sample) = percentile else { return };
        if start > now {
            return; // a window from the future: restarted, not judged
        }
        self.rtt_last.store(sample, Ordering::Relaxed);
        let min_rtt = self.rtt_base.load(Ordering::Relaxed);
        if min_rtt == 0 {
            return;
        }
        let (min, max, _) = params.bounds();
        let old_bits = self.limit.load(Ordering::Relaxed);
        let old = trunc(self.estimate(params, old_bits));
        let buffered = min_rtt as f64 * (1.0 + GRADIENT_BUFFER_PCT as f64 / 100.0);
        let gradient = clamp(buffered / sample.max(1) as f64, 0.5, 2.0);
        let scaled = old * gradient;
        let new = clamp(trunc(scaled + sqrt(scaled)), min as f64, max as f64);
        self.limit.store(new.to_bits(), Ordering::Relaxed);
        let at_min = old == min as f64 && new == min as f64;
        self.count_min_windows(
            mode,
            now,
            aux >> 32,
            at_min,
            (0xffff_ffff, 32),
            GRADIENT_MIN_WINDOWS,
        );
    }

    // Ours (core/src/adaptive/README.md): Envoy's min-RTT sampling and
    // windows; each window's p50 s against the min RTT m gives the limit
    // g·L/(1 − h), g = clamp(m/s, 0.5, 1), doubled instead while no window
    // has shown a queue yet; a window with over 10 % drops cuts it by 0.9;
    // a window in which fewer than half the limit were ever in flight moves
    // nothing (the traffic, not the server, bounded its latency).
    fn knee(
        &self,
        params: &AdaptiveParams,
        now_ms: u64,
        rtt_us: u64,
        in_flight: u32,
        dropped: bool,
    ) {
        let now = now_ms & MS_MASK;
        let Some(mode) = self.min_rtt_phase(now, rtt_us, KNEE_MIN_RTT_REQUESTS, KNEE_GROWN) else {
            return;
        };
        // One add per sample: the histogram counts the window's latencies
        // (its total is counted only when the window may close), `aux` its
        // drops.
        if dropped {
            // Not a latency: an overload error may come back at once.
            self.aux.fetch_add(1 << KNEE_DROP_SHIFT, Ordering::Relaxed);
        } else {
            self.hist_add(rtt_us);
        }
        let enough = || {
            let aux = self.aux.load(Ordering::Relaxed);
            // The slow start asks only whether latency rose by a quarter: a
            // quarter of the samples tells that.
            let needed = match aux & KNEE_GROWN {
                0 => KNEE_WINDOW_SAMPLES / 4,
                _ => KNEE_WINDOW_SAMPLES,
            };
            self.hist_total() + ((aux & KNEE_DROPS) >> KNEE_DROP_SHIFT) >= needed as u64
        };

        // The window's start and its most in flight are one word: the CAS
        // that closes the window takes both.
        let peak_now = (in_flight as u64).min(PEAK_MAX);
        let mut word = self.window.load(Ordering::Relaxed);
        let closed = loop {
            let start = word & MS_MASK;
            let closes = start > now
                || (now >= start.saturating_add(GRADIENT_UPDATE_INTERVAL_MS) && enough());
            let next = if closes {
                now // this sample counted in the closing window
            } else if word >> PEAK_SHIFT < peak_now {
                start | (peak_now << PEAK_SHIFT)
            } else {
                return;
            };
            match self
                .window
                .compare_exchange_weak(word, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) if closes => break word,
                Ok(_) => return,
                Err(seen) => word = seen,
            }
        };
        // This caller closed the window.
        let start = closed & MS_MASK;
        let peak = (closed >> PEAK_SHIFT).max(peak_now);
        let latencies = self.hist_total();
        let percentile = self.hist_percentile(GRADIENT_PERCENTILE);
        self.clear_hist();
        let aux = self.aux.fetch_and(!(LOW32 | KNEE_DROPS), Ordering::Relaxed);
        if start > now {
            return; // a window from the future: restarted, not judged
        }
        let drops = (aux & KNEE_DROPS) >> KNEE_DROP_SHIFT;
        let count = latencies + drops;
        let grown = aux & KNEE_GROWN != 0;
        if let Some(s) = percentile {
            self.rtt_last.store(s, Ordering::Relaxed);
        }
        let base = self.rtt_base.load(Ordering::Relaxed);
        let mut min_rtt = base & KNEE_RTT_MASK;
        if min_rtt == 0 || count == 0 {
            return;
        }
        let headroom = knee_headroom(base >> KNEE_SPREAD_SHIFT, latencies);
        let (min, max, _) = params.bounds();
        let old = self.estimate(params, self.limit.load(Ordering::Relaxed));
        let (new, grows_on) = if drops * 100 > count * KNEE_DROP_PCT {
            (old * KNEE_BACKOFF_RATIO, true)
        } else if let Some(s) = percentile {
            if (peak as f64) < (old / 2.0).min(PEAK_MAX as f64) {
                return; // the traffic kept the latency low, not the limit
            }
            // In the slow start (no queue yet), a busy window faster than
            // the min RTT, over as many samples as a measurement: the
            // measurement was high (a min RTT too high puts the limit above
            // the knee in proportion). Halfway toward it, so one lucky
            // window moves it by half its luck. Not later: beyond the knee
            // the windows that happen to be fast would ratchet it down.
            if !grown && s < min_rtt && latencies >= KNEE_MIN_RTT_REQUESTS as u64 {
                min_rtt = (min_rtt + s).div_ceil(2);
                self.rtt_base
                    .store((base & !KNEE_RTT_MASK) | min_rtt, Ordering::Relaxed);
            }
            if !grown && s * 100 < min_rtt * (100 + KNEE_QUEUE_PCT) {
                (old * 2.0, false)
            } else {
                let g = clamp(min_rtt as f64 / s.max(1) as f64, 0.5, 1.0);
                (g * old / (1.0 - headroom), true)
            }
        } else {
            (old, grown)
        };
        let new = clamp(new, min as f64, max as f64);
        self.limit.store(new.to_bits(), Ordering::Relaxed);
        if grows_on && !grown {
            self.aux.fetch_or(KNEE_GROWN, Ordering::Relaxed);
        }
        // Falling window after window (or sitting at the minimum) means
        // the latency does not come down with the limit: the min RTT was
        // measured low (the limit then falls by b / (1 − h) per window
        // below the knee) or the server is degrading; either way, measure
        // it again.
        let at_min = trunc(old) == min as f64 && trunc(new) == min as f64;
        let falls = at_min || new < old;
        let windows = (aux >> KNEE_AT_MIN_SHIFT) & 0xff;
        self.count_min_windows(
            mode,
            now,
            windows,
            falls,
            (0xff, KNEE_AT_MIN_SHIFT),
            KNEE_FALLING_WINDOWS,
        );
    }

    /// Envoy's count of windows in a row with the limit at its minimum (for
    /// Knee: falling), in the bits of `aux` given as (mask, shift); at
    /// `limit` a min-RTT measurement starts (the min RTT may have been
    /// measured wrong).
    fn count_min_windows(
        &self,
        mode: u64,
        now: u64,
        before: u64,
        counts: bool,
        (mask, shift): (u64, u32),
        limit: u32,
    ) {
        let windows = if counts { (before & mask) + 1 } else { 0 };
        let mut word = self.aux.load(Ordering::Relaxed);
        loop {
            let next = (word & !(mask << shift)) | (windows.min(limit as u64) << shift);
            match self
                .aux
                .compare_exchange_weak(word, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(seen) => word = seen,
            }
        }
        if windows >= limit as u64 {
            let _ = self
                .probe
                .compare_exchange(mode, now, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Envoy's min-RTT measurement, shared by Gradient and Knee: `None` when
    /// this sample went to (or started) a measurement, else the mode word
    /// (not measuring: the next measurement's due time).
    #[inline]
    fn min_rtt_phase(&self, now: u64, rtt_us: u64, requests: u32, keep: u64) -> Option<u64> {
        let mode = self.probe.load(Ordering::Relaxed);
        let due = mode & MS_MASK;
        let longest = GRADIENT_MIN_RTT_INTERVAL_MS
            + ceil_div(GRADIENT_MIN_RTT_INTERVAL_MS * GRADIENT_JITTER_PCT, 100);
        if mode & MODE_MEASURING == 0 && now < due && due - now <= longest {
            return Some(mode); // between measurements: the usual sample
        }
        self.measure_min_rtt(mode, now, rtt_us, requests, keep);
        None
    }

    /// [`Self::min_rtt_phase`] out of the usual path: a sample while
    /// measuring, or one that starts a measurement.
    #[cold]
    #[inline(never)]
    fn measure_min_rtt(&self, mode: u64, now: u64, rtt_us: u64, requests: u32, keep: u64) {
        if mode & MODE_MEASURING != 0 {
            let epoch = mode & MS_MASK;
            if epoch > now {
                // A measurement from the future (garbage or a clock step):
                // restart it now.
                self.enter_measuring(mode, now, keep);
                return;
            }
            // Requests sent before the measurement began tell nothing of
            // the latency at the minimum concurrency (Envoy's min_rtt_epoch).
            if now.saturating_mul(1000).saturating_sub(rtt_us) < epoch.saturating_mul(1000) {
                return;
            }
            self.hist_add(rtt_us);
            self.rtt_last.store(rtt_us, Ordering::Relaxed);
            let count = (self.aux.fetch_add(1, Ordering::Relaxed) & LOW32) + 1;
            if count >= requests as u64 {
                let percentile = self.hist_percentile(GRADIENT_PERCENTILE);
                let range = ceil_div(GRADIENT_MIN_RTT_INTERVAL_MS * GRADIENT_JITTER_PCT, 100);
                let jitter = splitmix64(mode ^ rtt_us ^ now.rotate_left(24)) % range;
                let due = (now + GRADIENT_MIN_RTT_INTERVAL_MS + jitter) & MS_MASK;
                if self
                    .probe
                    .compare_exchange(mode, due, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    if let Some(p) = percentile {
                        let p = p.max(1);
                        let base = match keep {
                            // Knee: the measurement's spread beside it.
                            KNEE_GROWN => {
                                let iqr = self
                                    .hist_percentile(75)
                                    .unwrap_or(p)
                                    .saturating_sub(self.hist_percentile(25).unwrap_or(p));
                                let spread = (iqr.saturating_mul(1000) / p).min(KNEE_SPREAD_MAX);
                                p.min(KNEE_RTT_MASK) | (spread << KNEE_SPREAD_SHIFT)
                            }
                            _ => p,
                        };
                        self.rtt_base.store(base, Ordering::Relaxed);
                    }
                    self.clear_hist();
                    self.aux.fetch_and(keep, Ordering::Relaxed);
                    self.window.store(now, Ordering::Relaxed);
                }
            }
            return;
        }
        // Due (or a due time further than one period: garbage or a clock
        // step): a measurement starts.
        self.enter_measuring(mode, now, keep);
    }

    /// Starts a min-RTT measurement (the CAS from `mode` decides who);
    /// `keep`: the bits of `aux` that survive it.
    fn enter_measuring(&self, mode: u64, now: u64, keep: u64) {
        if self
            .probe
            .compare_exchange(
                mode,
                MODE_MEASURING | now,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            self.clear_hist();
            self.aux.fetch_and(keep, Ordering::Relaxed);
        }
    }

    fn hist_add(&self, rtt_us: u64) {
        self.hist[bucket_of(rtt_us)].fetch_add(1, Ordering::Relaxed);
    }

    fn hist_total(&self) -> u64 {
        self.hist
            .iter()
            .map(|b| b.load(Ordering::Relaxed) as u64)
            .sum()
    }

    fn clear_hist(&self) {
        for b in &self.hist {
            b.store(0, Ordering::Relaxed);
        }
    }

    /// The histogram's `pct` percentile in µs (interpolated inside its
    /// bucket), `None` when empty.
    fn hist_percentile(&self, pct: u64) -> Option<u64> {
        let mut counts = [0u64; HIST_BUCKETS];
        let mut total = 0u64;
        for (c, b) in counts.iter_mut().zip(&self.hist) {
            *c = b.load(Ordering::Relaxed) as u64;
            total += *c;
        }
        if total == 0 {
            return None;
        }
        let rank = ceil_div(total * pct.min(100), 100).max(1);
        let mut below = 0u64;
        for (i, &c) in counts.iter().enumerate() {
            if c > 0 && below + c >= rank {
                let (lo, width) = bucket_range(i);
                let inside = (rank - below) as f64 - 0.5;
                let units = lo as f64 + width as f64 * inside / c as f64;
                return Some(to_u64(units * HIST_UNIT_US as f64));
            }
            below += c;
        }
        None
    }
}

/// Knee's headroom h for a window of `n` latencies, given the min-RTT
/// measurement's IQR / p50 in thousandths (`KNEE_HEADROOM_MAX_PCT`).
fn knee_headroom(spread_milli: u64, n: u64) -> f64 {
    let floor = KNEE_HEADROOM_PCT as f64 / 100.0;
    let noise = 2.0 * spread_milli as f64 / 1000.0 / sqrt(n.max(1) as f64);
    clamp(noise, floor, KNEE_HEADROOM_MAX_PCT as f64 / 100.0)
}

/// The histogram bucket of a latency: 8 buckets per power of two of 16 µs
/// units (exact below 128 µs).
pub(crate) fn bucket_of(rtt_us: u64) -> usize {
    let v = rtt_us / HIST_UNIT_US;
    if v < 8 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64; // >= 3
    let sub = (v >> (e - 3)) & 7;
    let index = 8 * (e - 2) + sub;
    (index as usize).min(HIST_BUCKETS - 1)
}

/// A bucket's first value and width, in 16 µs units.
fn bucket_range(index: usize) -> (u64, u64) {
    if index < 8 {
        return (index as u64, 1);
    }
    let e = index as u64 / 8 + 2;
    let sub = index as u64 % 8;
    ((8 + sub) << (e - 3), 1 << (e - 3))
}

/// concurrency-limits' `Log10RootIntFunction`: max(1, ⌊log10 n⌋) of the
/// integer part.
fn log10_root(limit: f64) -> u32 {
    let mut n = to_u64(limit);
    let mut digits = 0;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits.max(1)
}

/// The next number of splitmix64 after `x` (a jitter draw).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn positive(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then_some(v)
}

fn clamp(v: f64, lo: f64, hi: f64) -> f64 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

/// Toward zero (`(int)` in Java); for the bounded values used here.
fn trunc(v: f64) -> f64 {
    if v > -4.5e15 && v < 4.5e15 {
        (v as i64) as f64
    } else {
        v
    }
}

fn ceil(v: f64) -> f64 {
    let t = trunc(v);
    if t < v {
        t + 1.0
    } else {
        t
    }
}

fn to_u64(v: f64) -> u64 {
    // `as` saturates, and NaN becomes 0.
    v as u64
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

/// Square root by Newton's method from an exponent-halving first guess
/// (no_std has no `f64::sqrt`).
fn sqrt(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 || !x.is_finite() {
        return 0.0;
    }
    let mut g = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..6 {
        g = 0.5 * (g + x / g);
    }
    // Rounding may leave g just under an integer whose square fits (4.999…
    // for 25): Envoy truncates limit + sqrt, so take the integer.
    let next = trunc(g) + 1.0;
    if next * next <= x {
        next
    } else {
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_and_log10_match_the_float_functions() {
        for x in [1.0, 2.0, 3.0, 9.0, 50.0, 1000.0, 12345.678, 1e9] {
            let r = sqrt(x);
            assert!((r * r - x).abs() <= x * 1e-12, "{x}");
        }
        for n in 1..2000u64 {
            let r = sqrt((n * n) as f64);
            assert_eq!(r, n as f64, "sqrt of {}", n * n);
        }
        assert_eq!(log10_root(0.0), 1);
        assert_eq!(log10_root(9.9), 1);
        assert_eq!(log10_root(99.0), 1);
        assert_eq!(log10_root(100.0), 2);
        assert_eq!(log10_root(1000.0), 3);
        assert_eq!(ceil(2.1), 3.0);
        assert_eq!(ceil(-0.5), 0.0);
        assert_eq!(ceil(2.0), 2.0);
    }

    #[test]
    fn buckets_cover_their_values() {
        for v in [0u64, 15, 16, 127, 128, 130, 1000, 20_000, 20_999, 4_000_000] {
            let (lo, width) = bucket_range(bucket_of(v));
            let u = v / HIST_UNIT_US;
            assert!(lo <= u && u < lo + width, "{v}: {lo} {width}");
        }
        assert_eq!(bucket_of(u64::MAX), HIST_BUCKETS - 1);
        for i in 1..HIST_BUCKETS {
            let (lo, w) = bucket_range(i - 1);
            assert_eq!(bucket_range(i).0, lo + w);
        }
    }
}
