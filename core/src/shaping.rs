//! Warm-up and pacing of a point's token-bucket rate: Sentinel's
//! `WarmUpController` (a cold point admits rate / coldFactor, climbing to the
//! rate over `warmUpPeriodSec`), `ThrottlingController` (requests spaced
//! evenly at the rate, each told how long to wait, refused past
//! `maxQueueingTimeMs`) and both at once (`WarmUpRateLimiterController`).
//! core/SHAPING.md states the formulas; the constants and
//! casts here are Sentinel's, so its sequences come out to the ms.
//!
//! Three words, each updated alone with a compare-and-swap, so any process
//! may die at any instruction and every bit pattern is a valid state:
//! - `latest_ns`: 1 + the time in ns the last admitted request was given
//!   (0: none yet, the next one passes at once);
//! - `filled`: 1 + the whole second (ms) the stored tokens were last synced
//!   (0: never, or the strategy's rate changed: the point is cold);
//! - `stored`: Sentinel's stored tokens, cold at `max`, warm below `warning`.
//!
//! A second's sync is claimed first (`filled`), then written (`stored`): two
//! callers never both add a second's tokens, and a caller killed between
//! the two leaves the last second's tokens, one second stale.

use core::cmp::Ordering::{Equal, Less};

use crate::strategy::Strategy;
use crate::sync::{const_fn, spin, AtomicU64, Ordering};

const NS_PER_MS: u64 = 1_000_000;

/// 2^-47: how far apart the two sides of [`Curve::admits`] must be for the
/// answer to be sure without the division.
const MARGIN: f64 = 1.0 / (1u64 << 47) as f64;

/// The shaping state of one point (`repr(C)`, 24 bytes, all zero: cold and
/// never paced).
#[repr(C)]
pub(crate) struct Shaping {
    latest_ns: AtomicU64,
    filled: AtomicU64,
    stored: AtomicU64,
}

/// The four strategy fields shaping reads, by value: the decision passes
/// these, not the whole strategy, so the strategy it reads never has to
/// leave registers for memory on the usual path.
#[derive(Copy, Clone)]
pub(crate) struct Shape {
    rate: i64,
    warm_up_period_sec: i64,
    cold_factor: i64,
    max_queueing_time_ms: i64,
}

impl Shape {
    #[inline(always)]
    pub(crate) fn of(s: &Strategy) -> Shape {
        Shape {
            rate: s.token_bucket_generated_tokens_in_second,
            warm_up_period_sec: s.warm_up_period_sec,
            cold_factor: s.cold_factor,
            max_queueing_time_ms: s.max_queueing_time_ms,
        }
    }

    fn warms_up(&self) -> bool {
        self.warm_up_period_sec > 0
    }

    fn paces(&self) -> bool {
        self.max_queueing_time_ms >= 0
    }
}

/// Sentinel's warm-up constants for a rate, a period and a cold factor.
struct Curve {
    count: f64,
    /// `1 / count`: computed with the others from the strategy's fields
    /// alone, before the stored tokens are read.
    inverse_count: f64,
    cold_factor: i64,
    warning: i64,
    max: i64,
    /// `max - warning`, the tokens the slope spreads the cold factor over.
    gap: i64,
}

impl Curve {
    fn of(s: &Shape) -> Curve {
        let count = s.rate as f64;
        let period = s.warm_up_period_sec as f64;
        let cold_factor = s.cold_factor;
        // Sentinel casts the product to an integer before dividing.
        // Checked and saturating where `validate` rules values out: a
        // corrupted shared file may hold any fields (none may panic).
        let warning = whole_quotient((period * count) as i64, cold_factor.saturating_sub(1));
        let span = (2.0 * period * count / (1.0 + cold_factor as f64)) as i64;
        // max - warning is the span unless the sum saturates.
        let (max, gap) = match warning.checked_add(span) {
            Some(max) => (max, span),
            None => {
                let max = warning.saturating_add(span);
                (max, max.saturating_sub(warning))
            }
        };
        Curve {
            count,
            inverse_count: 1.0 / count,
            cold_factor,
            warning,
            max,
            gap,
        }
    }

    /// The admitted rate per second with `stored` tokens left.
    fn qps(&self, stored: i64) -> f64 {
        match self.cold_interval(stored) {
            Some(interval) => next_up(1.0 / interval),
            None => self.count,
        }
    }

    /// Above the warning line, the seconds per request the cold rate is the
    /// reciprocal of; `None` below it (the full rate).
    fn cold_interval(&self, stored: i64) -> Option<f64> {
        if stored < self.warning || self.max <= self.warning {
            return None;
        }
        let above = stored.saturating_sub(self.warning) as f64;
        Some(above * self.slope() + self.inverse_count)
    }

    /// Sentinel's slope: how much slower each stored token above the
    /// warning line makes a request.
    fn slope(&self) -> f64 {
        (self.cold_factor as f64 - 1.0) / self.count / self.gap as f64
    }

    /// Whether `token` requests in a second are within the rate with
    /// `stored` tokens left: `token <= qps(stored)`, the comparison Sentinel
    /// makes. Multiplied out (`qps` is about `count * gap / (above *
    /// (coldFactor - 1) + gap)`), the comparison needs no division unless
    /// the two sides are within 2^-47 of each other: then `qps` decides.
    /// The margin is far above the rounding of either side and of `qps`
    /// (a few dozen roundings of 2^-53 at most).
    fn admits(&self, stored: i64, token: u64) -> bool {
        let t = token as f64;
        let exact = || matches!(t.partial_cmp(&self.qps(stored)), Some(Less | Equal));
        if stored < self.warning || self.max <= self.warning {
            return exact(); // the full rate: no division either
        }
        let above = stored.saturating_sub(self.warning) as f64;
        let (rise, gap) = (self.cold_factor as f64 - 1.0, self.gap as f64);
        let sane = self.count > 0.0 && rise > 0.0 && gap > 0.0;
        let asked = t * (above * rise + gap);
        let room = self.count * gap;
        if !(sane && asked.is_finite() && room.is_finite()) {
            exact()
        } else if asked <= room * (1.0 - MARGIN) {
            true
        } else if asked >= room * (1.0 + MARGIN) {
            false
        } else {
            exact()
        }
    }

    /// Stored tokens after `elapsed_ms` of refill, as Sentinel's
    /// `coolDownTokens`: refilled while below the warning line, or above it
    /// while the traffic stays under the cold rate.
    fn cooled(&self, stored: i64, elapsed_ms: u64, previous_pass: u64) -> i64 {
        let cold_rate = (self.count as i64)
            .checked_div(self.cold_factor)
            .unwrap_or(0);
        let refills =
            stored < self.warning || (stored > self.warning && (previous_pass as i64) < cold_rate);
        let grown = match refills {
            true => (stored as f64 + elapsed_ms as f64 * self.count / 1000.0) as i64,
            false => stored,
        };
        grown.min(self.max)
    }
}

/// `a / b` rounded toward zero as Java's `long` division (0 for a zero
/// divisor or an overflow), by a float division when both are below 2^52:
/// exact there (a non-whole quotient is at least 1/b from the next whole,
/// more than its rounding), and a few times quicker than the integer
/// division on the decision's path.
fn whole_quotient(a: i64, b: i64) -> i64 {
    const EXACT: i64 = 1 << 52;
    match (0..EXACT).contains(&a) && (1..EXACT).contains(&b) {
        true => (a as f64 / b as f64) as i64,
        false => a.checked_div(b).unwrap_or(0),
    }
}

/// Java's `Math.nextUp` for the positive finite rates it is used on (the
/// MSRV predates `f64::next_up`).
fn next_up(x: f64) -> f64 {
    match x.is_finite() && x > 0.0 {
        true => f64::from_bits(x.to_bits() + 1),
        false => x,
    }
}

impl Shaping {
    const_fn! {
        pub(crate) fn new() -> Shaping {
            Shaping {
                latest_ns: AtomicU64::new(0),
                filled: AtomicU64::new(0),
                stored: AtomicU64::new(0),
            }
        }
    }

    /// Makes the point cold again (a new rate, period or cold factor).
    pub(crate) fn cool(&self) {
        self.filled.store(0, Ordering::Release);
    }

    /// Forgets the slots given so far (a new rate or queue): the next
    /// request passes at once, as with Sentinel's new controller.
    pub(crate) fn restart_pacing(&self) {
        self.latest_ns.store(0, Ordering::Release);
    }

    /// Whether the token-bucket rule refuses, for a strategy that warms up
    /// or paces; `wait_ms` gets a paced request's wait. `token` counts this
    /// second's visits with this one, `previous_pass` the last second's
    /// admitted requests.
    #[inline(never)]
    pub(crate) fn fails(
        &self,
        s: Shape,
        now_ms: u64,
        token: u64,
        previous_pass: u64,
        wait_ms: &mut u16,
    ) -> bool {
        let curve = s.warms_up().then(|| Curve::of(&s));
        let stored = curve.as_ref().map(|c| {
            self.sync(c, now_ms, previous_pass);
            self.stored(c)
        });
        if !s.paces() {
            // Warm-up alone: this second admits up to the current rate.
            return curve
                .as_ref()
                .zip(stored)
                .is_some_and(|(c, stored)| !c.admits(stored, token));
        }
        let qps = curve.as_ref().zip(stored).map(|(c, stored)| c.qps(stored));
        let rate = s.rate;
        let cost_ns = match qps {
            // Sentinel's warm pacing rounds the interval to whole ms.
            Some(q) => ((1.0 / q * 1000.0 + 0.5) as u64).saturating_mul(NS_PER_MS),
            None if rate <= 0 => return true,
            None => (1e9 / rate as f64 + 0.5) as u64,
        };
        match self.pace(now_ms, cost_ns, s.max_queueing_time_ms as u64) {
            Some(wait) => {
                *wait_ms = wait;
                false
            }
            None => true,
        }
    }

    /// Gives the request the slot `cost_ns` after the last one: its wait in
    /// ms (rounded up), or `None` when that would pass `max_ms`.
    fn pace(&self, now_ms: u64, cost_ns: u64, max_ms: u64) -> Option<u16> {
        let now_ns = now_ms.saturating_mul(NS_PER_MS);
        let max_ns = max_ms.saturating_mul(NS_PER_MS);
        loop {
            let latest = self.latest_ns.load(Ordering::Acquire);
            let due = (latest.saturating_sub(1)).saturating_add(cost_ns);
            let (next, wait_ns) = if latest == 0 || due <= now_ns {
                (now_ns.saturating_add(1), 0)
            } else if due - now_ns > max_ns {
                return None;
            } else {
                (latest.saturating_add(cost_ns), due - now_ns)
            };
            if self
                .latest_ns
                .compare_exchange(latest, next, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Some(wait_ns.div_ceil(NS_PER_MS) as u16);
            }
            spin();
        }
    }

    /// Sentinel's `syncToken`, once per whole second: the second is claimed
    /// first, so only one caller refills it.
    fn sync(&self, c: &Curve, now_ms: u64, previous_pass: u64) {
        let second = now_ms - now_ms % 1000;
        let last = self.filled.load(Ordering::Acquire);
        if last != 0 && second < last {
            return;
        }
        if self
            .filled
            .compare_exchange(last, second + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let grown = match last {
            0 => c.max,
            _ => c.cooled(self.stored(c), second - (last - 1), previous_pass),
        };
        let left = grown.saturating_sub(previous_pass.min(i64::MAX as u64) as i64);
        self.stored.store(left.max(0) as u64, Ordering::Release);
    }

    /// The stored tokens, within `0..=max` whatever the word holds.
    fn stored(&self, c: &Curve) -> i64 {
        (self.stored.load(Ordering::Acquire).min(i64::MAX as u64) as i64).min(c.max)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_whole_quotient_is_the_integer_division() {
        let mut x: u64 = 0x5d52026;
        for _ in 0..100_000 {
            // splitmix64: numerators and divisors of every size up to 2^52.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let a = (z >> (z % 40)) as i64 & ((1 << 52) - 1);
            let b = ((z.rotate_left(17) >> (z % 52)) as i64 & ((1 << 52) - 1)).max(1);
            assert_eq!(whole_quotient(a, b), a / b, "{a} / {b}");
        }
        let edge = (1i64 << 52) - 1;
        for (a, b) in [
            (edge, 1),
            (edge, 3),
            (edge, edge),
            (edge - 1, edge),
            (0, 7),
            (i64::MAX, 2),
            (-9, 2),
            (i64::MIN, -1),
            (5, 0),
        ] {
            assert_eq!(
                whole_quotient(a, b),
                a.checked_div(b).unwrap_or(0),
                "{a} / {b}"
            );
        }
    }

    #[test]
    fn admitting_by_a_product_answers_as_the_division() {
        // Stored levels of a few curves (every one of the small ones), and
        // counts right at and around the cold rate, where the two sides are
        // within the margin and the division decides.
        let curves = [
            (10, 1, 3),
            (7, 3, 4),
            (100, 10, 3),
            (3, 60, 2),
            (1_000, 7, 9),
            (i64::MAX / 20, 10, 3),
            (1 << 40, 3_600, 1_000),
        ];
        let mut checked = 0;
        for (rate, period, cold) in curves {
            let c = Curve::of(&Shape {
                rate,
                warm_up_period_sec: period,
                cold_factor: cold,
                max_queueing_time_ms: -1,
            });
            let levels: std::vec::Vec<i64> = match c.max < 100_000 {
                true => (0..=c.max).collect(),
                false => (0..=64)
                    .map(|i| c.warning.saturating_add((c.max - c.warning) / 64 * i))
                    .chain([c.warning - 1, c.warning + 1, c.max - 1, c.max])
                    .collect(),
            };
            for stored in levels {
                let q = c.qps(stored);
                let near = q.floor() as u64;
                for token in [1, near.saturating_sub(1), near, near + 1, near + 2] {
                    let by_division = (token as f64) <= q;
                    assert_eq!(
                        c.admits(stored, token),
                        by_division,
                        "{rate} {period} {cold} {stored} {token}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn any_fields_a_corrupted_file_holds_compute_without_a_panic() {
        // `validate` never lets these in, but a shared file's bytes can be
        // anything; tests build with overflow checks on.
        let edges = [i64::MIN, -2, -1, 0, 1, 2, 3, 1_000, i64::MAX];
        for rate in edges {
            for warm_up_period_sec in edges {
                for cold_factor in edges {
                    for max_queueing_time_ms in [-1, 0, 500, i64::MAX] {
                        let shape = Shape {
                            rate,
                            warm_up_period_sec,
                            cold_factor,
                            max_queueing_time_ms,
                        };
                        let shaping = Shaping::new();
                        let mut wait_ms = 0;
                        for (now, token, passed) in
                            [(1_000, 1, 0), (3_500, 9, u64::MAX), (u64::MAX, u64::MAX, 5)]
                        {
                            shaping.fails(shape, now, token, passed, &mut wait_ms);
                        }
                    }
                }
            }
        }
    }
}
