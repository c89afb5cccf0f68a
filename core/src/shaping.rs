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
    cold_factor: i64,
    warning: i64,
    max: i64,
    slope: f64,
}

impl Curve {
    fn of(s: &Shape) -> Curve {
        let count = s.rate as f64;
        let period = s.warm_up_period_sec as f64;
        let cold_factor = s.cold_factor;
        // Sentinel casts the product to an integer before dividing.
        // Checked and saturating where `validate` rules values out: a
        // corrupted shared file may hold any fields (none may panic).
        let warning = ((period * count) as i64)
            .checked_div(cold_factor.saturating_sub(1))
            .unwrap_or(0);
        let max =
            warning.saturating_add((2.0 * period * count / (1.0 + cold_factor as f64)) as i64);
        let slope = (cold_factor as f64 - 1.0) / count / max.saturating_sub(warning) as f64;
        Curve {
            count,
            cold_factor,
            warning,
            max,
            slope,
        }
    }

    /// The admitted rate per second with `stored` tokens left.
    fn qps(&self, stored: i64) -> f64 {
        if stored < self.warning || self.max <= self.warning {
            return self.count;
        }
        let above = stored.saturating_sub(self.warning) as f64;
        next_up(1.0 / (above * self.slope + 1.0 / self.count))
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
        let qps = curve.as_ref().map(|c| {
            self.sync(c, now_ms, previous_pass);
            c.qps(self.stored(c))
        });
        if !s.paces() {
            // Warm-up alone: this second admits up to the current rate.
            let within = |q: f64| matches!((token as f64).partial_cmp(&q), Some(Less | Equal));
            return qps.is_some_and(|q| !within(q));
        }
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
