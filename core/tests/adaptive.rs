//! The adaptive limit: each algorithm's steps with explicit times, bounds,
//! any bit pattern as a valid state, and threads hammering one state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use sds_core::adaptive::{
    AdaptiveLimit, AdaptiveParams, Algorithm, GRADIENT_MIN_RTT_INTERVAL_MS,
    GRADIENT_MIN_RTT_REQUESTS, GRADIENT_UPDATE_INTERVAL_MS, KNEE_FALLING_WINDOWS,
    KNEE_HEADROOM_PCT, KNEE_MIN_RTT_REQUESTS, KNEE_WINDOW_SAMPLES,
};

#[path = "../examples/common/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64;

const T0: u64 = 1_700_000_000_000;

fn params(algorithm: Algorithm) -> AdaptiveParams {
    AdaptiveParams::defaults(algorithm)
}

/// Feeds `l` one sample: the limit after it.
fn limit_after(
    l: &AdaptiveLimit,
    p: &AdaptiveParams,
    now: u64,
    rtt_us: u64,
    in_flight: u32,
    dropped: bool,
) -> u32 {
    l.on_sample(p, now, rtt_us, in_flight, dropped);
    l.limit(p)
}

/// Feeds `l` `n` alike samples, 1 ms apart from `from`.
fn feed(
    l: &AdaptiveLimit,
    p: &AdaptiveParams,
    from: u64,
    n: u64,
    rtt_us: u64,
    in_flight: u32,
    dropped: bool,
) {
    for i in 0..n {
        l.on_sample(p, from + i, rtt_us, in_flight, dropped);
    }
}

/// Envoy's gradient, measured: the first sample starts a min-RTT measurement
/// (limit pinned at the minimum), 50 samples of requests sent after it end
/// it. Returns the time after.
fn measure_min_rtt(l: &AdaptiveLimit, p: &AdaptiveParams, now: u64, rtt_us: u64) -> u64 {
    l.on_sample(p, now, rtt_us, 1, false);
    assert_eq!(l.stats(p).measuring_min_rtt, 1);
    assert_eq!(l.limit(p), 3);
    let mut t = now;
    for _ in 0..GRADIENT_MIN_RTT_REQUESTS {
        t += 10;
        l.on_sample(p, t, rtt_us, 1, false);
    }
    assert_eq!(l.stats(p).measuring_min_rtt, 0);
    t
}

#[test]
fn codes_and_names() {
    for a in Algorithm::ALL {
        assert_eq!(Algorithm::from_code(a.code()), Some(a));
    }
    assert_eq!(Algorithm::from_code(0), None);
    assert_eq!(Algorithm::from_code(6), None);
    assert_eq!(Algorithm::Gradient2.as_str(), "GRADIENT2");
    assert_eq!(Algorithm::Gradient.code(), 4);
    assert_eq!(Algorithm::from_code(5), Some(Algorithm::Knee));
    assert_eq!(Algorithm::Knee.as_str(), "KNEE");
    let p = params(Algorithm::Aimd);
    assert_eq!((p.min_limit, p.max_limit, p.initial_limit), (20, 200, 20));
    let odd = AdaptiveParams {
        algorithm: Algorithm::Aimd,
        min_limit: 0,
        max_limit: 0,
        initial_limit: 9,
    };
    assert_eq!(odd.bounds(), (1, 1, 1));
}

#[test]
fn fresh_is_the_initial_limit() {
    let l = AdaptiveLimit::new();
    assert_eq!(l.limit(&params(Algorithm::Aimd)), 20);
    assert_eq!(l.limit(&params(Algorithm::Vegas)), 20);
    assert_eq!(l.limit(&params(Algorithm::Gradient2)), 20);
    assert_eq!(l.limit(&params(Algorithm::Gradient)), 3);
    assert_eq!(l.limit(&params(Algorithm::Knee)), 3);
    let p = AdaptiveParams {
        initial_limit: 500,
        ..params(Algorithm::Aimd)
    };
    assert_eq!(l.limit(&p), 200, "the initial limit is clamped");
}

#[test]
fn aimd_adds_one_per_busy_sample_and_multiplies_by_0_9_on_a_drop() {
    let p = params(Algorithm::Aimd);
    let l = AdaptiveLimit::new();
    feed(&l, &p, T0, 10, 10_000, 20, false);
    assert_eq!(l.limit(&p), 30);
    // Fewer than half the limit in flight: no growth (app-limited).
    assert_eq!(limit_after(&l, &p, T0 + 20, 10_000, 14, false), 30);
    assert_eq!(limit_after(&l, &p, T0 + 21, 10_000, 15, false), 31);
    assert_eq!(
        limit_after(&l, &p, T0 + 22, 10_000, 31, true),
        27,
        "floor(31 * 0.9)"
    );
    assert_eq!(
        limit_after(&l, &p, T0 + 23, 5_000_001, 31, false),
        24,
        "slower than the 5 s timeout counts as a drop"
    );
    feed(&l, &p, T0 + 30, 100, 10_000, 1, true);
    assert_eq!(l.limit(&p), 20, "never under the minimum");
    feed(&l, &p, T0 + 200, 1000, 10_000, 1000, false);
    assert_eq!(l.limit(&p), 200, "never over the maximum");
    assert_eq!(l.stats(&p).short_rtt_us, 10_000);
    assert_eq!(l.stats(&p).samples, 1114);
}

#[test]
fn vegas_grows_by_beta_without_queueing_and_backs_off_when_latency_grows() {
    let p = params(Algorithm::Vegas);
    let l = AdaptiveLimit::new();
    // The first sample is the no-load RTT.
    assert_eq!(limit_after(&l, &p, T0, 10_000, 20, false), 20);
    assert_eq!(l.stats(&p).min_rtt_us, 10_000);
    // queue = ceil(20 × (1 − 10/10)) = 0 <= threshold 1: + beta (6 × log10 20 = 6).
    assert_eq!(limit_after(&l, &p, T0 + 1, 10_000, 20, false), 26);
    // queue = ceil(26 × (1 − 10/11)) = 3, not < alpha 3, not > beta 6: stays.
    assert_eq!(limit_after(&l, &p, T0 + 2, 11_000, 26, false), 26);
    // queue = ceil(26 × (1 − 10/10.5)) = 2: between threshold and alpha, + log10.
    assert_eq!(limit_after(&l, &p, T0 + 3, 10_500, 26, false), 27);
    // Twice the no-load RTT: queue = 14 > beta: − log10 (1).
    assert_eq!(limit_after(&l, &p, T0 + 4, 20_000, 27, false), 26);
    assert_eq!(
        limit_after(&l, &p, T0 + 5, 10_000, 1, true),
        25,
        "a drop: − log10"
    );
    // App-limited: under half the limit in flight changes nothing.
    assert_eq!(limit_after(&l, &p, T0 + 6, 10_000, 12, false), 25);
    assert_eq!(l.stats(&p).short_rtt_us, 10_000);
}

#[test]
fn vegas_probes_the_no_load_rtt_again() {
    let p = params(Algorithm::Vegas);
    let l = AdaptiveLimit::new();
    l.on_sample(&p, T0, 10_000, 20, false);
    // Slower samples while app-limited: the limit stays 20, so a probe is
    // due within jitter × 30 × 20 <= 600 samples; it takes the sample's RTT.
    let mut probed_at = None;
    for i in 1..=600 {
        l.on_sample(&p, T0 + i, 30_000, 1, false);
        if l.stats(&p).min_rtt_us == 30_000 {
            probed_at = Some(i);
            break;
        }
    }
    let i = probed_at.expect("a probe within 600 samples");
    // The first sample was the 1st of the count: 0.5 × 30 × 20 = 300.
    assert!((299..=600).contains(&i), "{i}");
}

#[test]
fn gradient2_grows_by_queue_size_times_smoothing_and_halves_at_most() {
    let p = params(Algorithm::Gradient2);
    let l = AdaptiveLimit::new();
    feed(&l, &p, T0, 10, 10_000, 40, false);
    // Steady RTT: gradient 1, limit × 0.8 + (limit + 4) × 0.2 = limit + 0.8.
    assert_eq!(l.limit(&p), 28);
    let s = l.stats(&p);
    assert_eq!((s.long_rtt_us, s.short_rtt_us), (10_000, 10_000));
    // Latency ×3 against the long RTT: gradient clamped at 0.5, so
    // limit × 0.9 + 0.8 per sample.
    let before = l.limit(&p);
    l.on_sample(&p, T0 + 20, 30_000, 40, false);
    let after = l.limit(&p);
    assert!(after < before, "{before} -> {after}");
    feed(&l, &p, T0 + 30, 200, 200_000, 40, false);
    assert_eq!(l.limit(&p), 20, "never under the minimum");
    // The long RTT over twice the short one decays 5 % a sample.
    let long = l.stats(&p).long_rtt_us;
    l.on_sample(&p, T0 + 300, 1_000, 40, false);
    assert!(l.stats(&p).long_rtt_us < long * 96 / 100);
    feed(&l, &p, T0 + 400, 2000, 1_000, 1000, false);
    assert_eq!(l.limit(&p), 200, "never over the maximum");
}

#[test]
fn gradient_measures_min_rtt_then_follows_the_buffered_gradient() {
    let p = params(Algorithm::Gradient);
    let l = AdaptiveLimit::new();
    // A sample of a request sent before the measurement began is ignored.
    l.on_sample(&p, T0, 10_000, 1, false);
    l.on_sample(&p, T0 + 5, 10_000, 1, false);
    assert_eq!(l.stats(&p).samples, 2);
    let mut t = measure_min_rtt(&l, &p, T0 + 20, 10_000);
    let min_rtt = l.stats(&p).min_rtt_us;
    assert!((9_500..=10_500).contains(&min_rtt), "{min_rtt}");
    assert_eq!(l.limit(&p), 3, "back to the limit before the measurement");

    // Latency at the min RTT: gradient 1.25 (the buffer); the limit grows
    // as trunc(limit × 1.25 + sqrt(limit × 1.25)) per 100 ms window.
    let mut expected = 3.0f64;
    for _ in 0..5 {
        feed(&l, &p, t, 10, 10_000, 1, false);
        t += GRADIENT_UPDATE_INTERVAL_MS;
        l.on_sample(&p, t, 10_000, 1, false); // closes the window
                                              // The histogram's percentiles are interpolated inside a bucket (at
                                              // most 1/8 of the value wide), so the gradient is 1.25 within 1 %.
        let scaled = expected * 1.25;
        let ideal = (scaled + scaled.sqrt()).trunc();
        let got = l.limit(&p) as f64;
        assert!((got - ideal).abs() <= 1.0, "{got} vs {ideal}");
        expected = got;
    }
    let grown = l.limit(&p);
    // Latency 4× the min RTT: gradient clamped at 0.5.
    feed(&l, &p, t, 10, 40_000, 1, false);
    t += GRADIENT_UPDATE_INTERVAL_MS;
    l.on_sample(&p, t, 40_000, 1, false);
    let halved = grown as f64 * 0.5;
    assert_eq!(
        l.limit(&p) as f64,
        (halved + halved.sqrt()).trunc(),
        "clamped: exact"
    );
    let s = l.stats(&p);
    assert!(
        (38_000..=42_000).contains(&s.short_rtt_us),
        "{}",
        s.short_rtt_us
    );
    assert_eq!(s.long_rtt_us, s.min_rtt_us + s.min_rtt_us / 4);

    // The next measurement comes within interval + 15 % jitter.
    let due = t + GRADIENT_MIN_RTT_INTERVAL_MS * 115 / 100 + 1;
    l.on_sample(&p, due, 10_000, 1, false);
    assert_eq!(l.stats(&p).measuring_min_rtt, 1);
    assert_eq!(l.limit(&p), 3);
}

#[test]
fn gradient_at_the_minimum_five_windows_measures_again() {
    let p = params(Algorithm::Gradient);
    let l = AdaptiveLimit::new();
    let mut t = measure_min_rtt(&l, &p, T0, 10_000);
    let mut measuring_after = None;
    for w in 0..8 {
        feed(&l, &p, t, 5, 100_000, 1, false);
        t += GRADIENT_UPDATE_INTERVAL_MS;
        l.on_sample(&p, t, 100_000, 1, false);
        if l.stats(&p).measuring_min_rtt == 0 {
            l.on_sample(&p, t + 1, 100_000, 1, false); // the due measurement starts
        }
        if l.stats(&p).measuring_min_rtt == 1 {
            measuring_after = Some(w);
            break;
        }
    }
    // Window 0 takes 3 to 3 already (gradient 0.5: trunc(1.5 + 1.22) = 2 → 3).
    assert_eq!(measuring_after, Some(4));
}

/// Knee: the first sample starts a min-RTT measurement at the minimum
/// limit; 100 samples of requests sent after it end it. Returns the time
/// after.
fn knee_measure(l: &AdaptiveLimit, p: &AdaptiveParams, now: u64, rtt_us: u64) -> u64 {
    l.on_sample(p, now, rtt_us, 1, false);
    assert_eq!(l.stats(p).measuring_min_rtt, 1);
    assert_eq!(l.limit(p), 3);
    // Requests sent after it began: their exits come an RTT later.
    let mut t = now + rtt_us / 1000 - 10;
    for i in 0..KNEE_MIN_RTT_REQUESTS {
        t += 10;
        l.on_sample(p, t, rtt_us, 3, false);
        let done = i + 1 == KNEE_MIN_RTT_REQUESTS;
        assert_eq!(l.stats(p).measuring_min_rtt, u32::from(!done), "sample {i}");
    }
    t
}

/// Knee: one window of `n` samples of `rtt_us` (`dropped` of them failed)
/// with `in_flight` in flight, closed by the sample after 100 ms. Returns
/// the time after.
fn knee_window(
    l: &AdaptiveLimit,
    p: &AdaptiveParams,
    start: u64,
    n: u32,
    rtt_us: u64,
    in_flight: u32,
    dropped: u32,
) -> u64 {
    for k in 0..n {
        l.on_sample(
            p,
            start + 1 + (k as u64 % 90),
            rtt_us,
            in_flight,
            k < dropped,
        );
    }
    let end = start + GRADIENT_UPDATE_INTERVAL_MS + 1;
    l.on_sample(p, end, rtt_us, in_flight, false); // closes the window
    end
}

#[test]
fn knee_measures_min_rtt_doubles_without_a_queue_then_seeks_the_knee() {
    let p = params(Algorithm::Knee);
    assert_eq!((p.min_limit, p.max_limit, p.initial_limit), (3, 1000, 3));
    let l = AdaptiveLimit::new();
    assert_eq!(l.limit(&p), 3);
    let mut t = knee_measure(&l, &p, T0, 20_000);
    let s = l.stats(&p);
    // The p50 of 100 samples of 20 ms, interpolated in its bucket (at most
    // 1/8 of the value wide); the long RTT is the latency at the fixed
    // point, min RTT / (1 - h).
    assert!((18_432..=20_480).contains(&s.min_rtt_us), "{s:?}");
    assert_eq!(
        s.long_rtt_us,
        s.min_rtt_us * 100 / (100 - KNEE_HEADROOM_PCT)
    );
    assert_eq!(l.limit(&p), 3, "back to the limit before the measurement");

    // The slow start: the latency stays at the min RTT, the limit doubles
    // per window (a quarter of the samples closes one).
    for want in [6, 12, 24, 48] {
        let busy = l.limit(&p);
        t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES / 4, 20_000, busy, 0);
        assert_eq!(l.limit(&p), want);
    }
    // Twice the latency (a queue as long as the service): g = 0.5 and the
    // slow start is over: 48 x 0.5 / (1 - 4 %) = 25.
    t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 40_000, 48, 0);
    let min_rtt = l.stats(&p).min_rtt_us as f64;
    assert_eq!(l.limit(&p), 25);
    // At the min RTT again: only the headroom's growth now, L / (1 - h) x
    // min RTT / p50 (both in the same bucket: 1 within 0.1 %).
    let mut limit = 48.0 * 0.5 * 100.0 / (100 - KNEE_HEADROOM_PCT) as f64;
    for _ in 0..3 {
        t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 20_000, l.limit(&p), 0);
        let p50 = l.stats(&p).short_rtt_us as f64;
        limit *= (min_rtt / p50).min(1.0) * 100.0 / (100 - KNEE_HEADROOM_PCT) as f64;
        assert_eq!(l.limit(&p), limit as u32);
    }
    // Beyond the knee K the p50 is min RTT x L / K: a p50 1.5 x the min RTT
    // says K = L / 1.5, and the limit goes to K / (1 - h) in one window.
    let busy = l.limit(&p);
    t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 30_000, busy, 0);
    let p50 = l.stats(&p).short_rtt_us as f64;
    assert!((28_672.0..30_720.0).contains(&p50), "{p50}");
    limit *= (min_rtt / p50) * 100.0 / (100 - KNEE_HEADROOM_PCT) as f64;
    assert_eq!(l.limit(&p), limit as u32);
    assert!((19..=20).contains(&l.limit(&p)), "28.3 / 1.5 / 0.96 = 19.7");
    // A window with over 10 % of its samples dropped: x 0.9, whatever the
    // latency.
    // (The limit word keeps the fraction: compare the floors within one.)
    let before = l.stats(&p).limit as f64;
    t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 10_000, 30, 20);
    let after = l.limit(&p) as f64;
    assert!(
        after <= (before + 1.0) * 0.9 && after >= before * 0.9 - 1.0,
        "{before} -> {after}"
    );
    // A window in which fewer than half the limit were ever in flight: the
    // traffic, not the server, set its latency: nothing moves.
    let quiet = l.limit(&p);
    knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 80_000, quiet / 2 - 1, 0);
    assert_eq!(l.limit(&p), quiet);
}

#[test]
fn knee_a_window_needs_its_samples_and_its_100_ms() {
    let p = params(Algorithm::Knee);
    let l = AdaptiveLimit::new();
    let mut t = knee_measure(&l, &p, T0, 20_000);
    // 100 ms pass with too few samples for the slow start's p50: the window
    // stays open until the 25th.
    for k in 0..KNEE_WINDOW_SAMPLES / 4 - 1 {
        t += 10;
        assert_eq!(limit_after(&l, &p, t, 20_000, 3, false), 3, "sample {k}");
    }
    assert_eq!(limit_after(&l, &p, t + 1, 20_000, 3, false), 6);
}

#[test]
fn knee_a_min_rtt_measured_high_is_corrected_in_the_slow_start() {
    let p = params(Algorithm::Knee);
    let l = AdaptiveLimit::new();
    let t = knee_measure(&l, &p, T0, 24_000);
    let measured = l.stats(&p).min_rtt_us;
    // A busy slow-start window of as many samples as a measurement, faster:
    // the min RTT moves halfway toward its p50.
    knee_window(&l, &p, t, KNEE_MIN_RTT_REQUESTS, 16_000, 3, 0);
    let p50 = l.stats(&p).short_rtt_us;
    assert!(p50 < measured, "{p50} {measured}");
    assert_eq!(l.stats(&p).min_rtt_us, (measured + p50).div_ceil(2));
    assert_eq!(l.limit(&p), 6);
}

#[test]
fn knee_a_noisier_latency_gets_a_wider_headroom() {
    // Latencies spread evenly over [10, 30] ms: the measurement's IQR is
    // half its p50, so a 100-sample window's p50 has a relative standard
    // error of about 0.5 / 10 = 5 %; the headroom is twice that, 10 %,
    // instead of 4 % (and the latency it settles at min RTT / 0.9).
    let p = params(Algorithm::Knee);
    let l = AdaptiveLimit::new();
    l.on_sample(&p, T0, 10_000, 1, false);
    let mut t = T0 + 30;
    for i in 0..KNEE_MIN_RTT_REQUESTS as u64 {
        t += 10;
        l.on_sample(&p, t, 10_000 + (i * 7 % 100) * 200, 3, false);
    }
    let s = l.stats(&p);
    assert_eq!(s.measuring_min_rtt, 0);
    assert!((18_000..=22_000).contains(&s.min_rtt_us), "{s:?}");
    let headroom = 1.0 - s.min_rtt_us as f64 / s.long_rtt_us as f64;
    assert!((0.08..=0.12).contains(&headroom), "{headroom}: {s:?}");
    // The same latency at the min RTT beyond the slow start: the limit
    // grows by 1 / (1 - h) per window, not 1 / 0.96.
    let mut limit = 3.0f64;
    let mut at = t;
    while limit < 400.0 {
        at = knee_window(&l, &p, at, KNEE_WINDOW_SAMPLES, 10_000, limit as u32, 0);
        limit = l.limit(&p) as f64;
    }
    at = knee_window(&l, &p, at, KNEE_WINDOW_SAMPLES, 40_000, limit as u32, 0);
    // 768 x 0.5 / (1 - h): 427 at h = 10 % (400 at the usual 4 %), within
    // what the window's 101 samples and the stats' rounding move h by.
    let out = l.limit(&p) as f64;
    let wide = limit * 0.5 / (1.0 - headroom);
    assert!((out - wide).abs() <= 2.0, "{limit} -> {out}, not {wide}");
    assert!(out > limit * 0.5 / 0.96 + 20.0, "{out}");
    let _ = at;
}

#[test]
fn knee_falling_windows_in_a_row_measure_the_min_rtt_again() {
    let p = params(Algorithm::Knee);
    let l = AdaptiveLimit::new();
    let mut t = knee_measure(&l, &p, T0, 10_000);
    // Out of the slow start at 400 (the latency twice the min RTT), then a
    // latency that stays 1.2x the min RTT however far the limit falls (a
    // min RTT measured low): 10 falling windows in a row start a
    // measurement (the limit reads the minimum).
    let mut limit = 3;
    while limit < 400 {
        t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 10_000, limit, 0);
        limit = l.limit(&p);
    }
    t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 20_000, limit, 0);
    let mut measuring_after = None;
    for w in 0..KNEE_FALLING_WINDOWS + 2 {
        let before = l.limit(&p);
        t = knee_window(&l, &p, t, KNEE_WINDOW_SAMPLES, 12_000, before, 0);
        l.on_sample(&p, t + 1, 12_000, before, false); // the due measurement starts
        if l.stats(&p).measuring_min_rtt == 1 {
            measuring_after = Some(w);
            break;
        }
        assert!(l.limit(&p) < before, "window {w}");
    }
    // The window out of the slow start fell too: it is the first of 10.
    assert_eq!(measuring_after, Some(KNEE_FALLING_WINDOWS - 2));
    assert_eq!(l.limit(&p), 3);
}

#[test]
fn every_limit_stays_in_bounds_under_random_samples() {
    let mut rng = SplitMix64(7);
    for a in Algorithm::ALL {
        let p = AdaptiveParams {
            algorithm: a,
            min_limit: 5,
            max_limit: 60,
            initial_limit: 30,
        };
        let l = AdaptiveLimit::new();
        let mut t = T0;
        for _ in 0..50_000 {
            t += rng.next() % 3;
            let rtt = 1 + rng.next() % 200_000;
            let in_flight = (rng.next() % 80) as u32;
            l.on_sample(&p, t, rtt, in_flight, rng.next() % 50 == 0);
            let limit = l.limit(&p);
            assert!((5..=60).contains(&limit), "{a:?}: {limit}");
        }
    }
}

/// A state made of arbitrary bits, as a shared file might hold after a
/// crash or a bad write.
fn garbage(seed: u64) -> AdaptiveLimit {
    let mut rng = SplitMix64(seed);
    let mut words = [0u64; 71];
    for w in words.iter_mut() {
        *w = rng.next();
    }
    const _: () = assert!(std::mem::size_of::<AdaptiveLimit>() == 71 * 8);
    // SAFETY: AdaptiveLimit is #[repr(C)] atomics only, valid for any bits.
    unsafe { std::mem::transmute::<[u64; 71], AdaptiveLimit>(words) }
}

fn with_first_word(bits: u64) -> AdaptiveLimit {
    let mut words = [0u64; 71];
    words[0] = bits;
    // SAFETY: as in `garbage`.
    unsafe { std::mem::transmute::<[u64; 71], AdaptiveLimit>(words) }
}

#[test]
fn any_bit_pattern_reads_as_a_valid_limit_and_recovers() {
    for a in Algorithm::ALL {
        let p = params(a);
        let (min, max, _) = p.bounds();
        for seed in 0..200 {
            let l = garbage(seed);
            let limit = l.limit(&p);
            assert!((min..=max).contains(&limit), "{a:?} {seed}: {limit}");
            let _ = l.stats(&p);
            let mut t = T0 + seed;
            for i in 0..300 {
                t += 1;
                l.on_sample(&p, t, 5_000 + i * 37 % 20_000, (i % 40) as u32, i % 97 == 0);
                let limit = l.limit(&p);
                assert!((min..=max).contains(&limit), "{a:?} {seed}: {limit}");
            }
        }
    }
    // NaN, infinities, zero and negatives in the limit word.
    for bits in [
        f64::NAN.to_bits(),
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        0,
    ] {
        let l = with_first_word(bits);
        assert_eq!(
            l.limit(&params(Algorithm::Aimd)),
            20,
            "{bits:#x} reads as fresh"
        );
    }
    assert_eq!(
        with_first_word((-5.0f64).to_bits()).limit(&params(Algorithm::Aimd)),
        20
    );
    assert_eq!(
        with_first_word(1e300f64.to_bits()).limit(&params(Algorithm::Aimd)),
        200
    );
    assert_eq!(
        with_first_word(77.9f64.to_bits()).limit(&params(Algorithm::Vegas)),
        77
    );

    let l = garbage(1);
    l.reset();
    assert_eq!(
        l.stats(&params(Algorithm::Gradient2)),
        AdaptiveLimit::new().stats(&params(Algorithm::Gradient2))
    );
}

#[test]
fn garbage_gradient_state_measures_min_rtt_within_one_interval() {
    // A due time or measurement epoch far from now restarts the measurement
    // (Envoy's gradient and Knee share it).
    for (p, seed) in [Algorithm::Gradient, Algorithm::Knee]
        .into_iter()
        .flat_map(|a| (0..50).map(move |seed| (params(a), seed)))
    {
        let l = garbage(seed);
        let mut t = T0;
        let mut measured = false;
        for i in 0..400 {
            t += 10;
            l.on_sample(&p, t, 10_000 + i % 7, 1, false);
            if l.stats(&p).measuring_min_rtt == 0
                && (9_000..=11_000).contains(&l.stats(&p).min_rtt_us)
            {
                measured = true;
                break;
            }
        }
        assert!(measured, "seed {seed}: {:?}", l.stats(&p));
    }
}

#[test]
fn threads_hammering_one_state_keep_it_in_bounds() {
    for a in Algorithm::ALL {
        let p = AdaptiveParams {
            algorithm: a,
            min_limit: 4,
            max_limit: 100,
            initial_limit: 10,
        };
        let l = AdaptiveLimit::new();
        let stop = AtomicBool::new(false);
        thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let limit = l.limit(&p);
                    assert!((4..=100).contains(&limit), "{a:?}: {limit}");
                    reads += 1;
                }
                reads
            });
            let writers: Vec<_> = (0..4u64)
                .map(|w| {
                    let l = &l;
                    let p = &p;
                    s.spawn(move || {
                        let mut rng = SplitMix64(w);
                        for i in 0..40_000u64 {
                            let t = T0 + i / 10;
                            let rtt = 1_000 + rng.next() % 50_000;
                            l.on_sample(
                                p,
                                t,
                                rtt,
                                (rng.next() % 120) as u32,
                                rng.next() % 100 == 0,
                            );
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            stop.store(true, Ordering::Relaxed);
            assert!(reader.join().unwrap() > 0);
        });
        let s = l.stats(&p);
        assert!((4..=100).contains(&s.limit));
        assert_eq!(s.samples, 160_000, "{a:?}: every sample counted");
    }
}
