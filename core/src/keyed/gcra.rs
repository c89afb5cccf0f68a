//! The rate rule: GCRA, one theoretical arrival time (TAT) per key, in µs.
//!
//! `T = periodMs × 1000 / limit` µs per unit and a burst of `B` units is
//! `B × T` µs of debt. A call of cost `n` at `now` is admitted when
//! `max(TAT, now) + n × T − now ≤ B × T`, and then stores that sum as the
//! new TAT; a refused call changes nothing. A TAT further than `B × T`
//! ahead can only come from a clock stepped back: it is read as `now + B ×
//! T`, so a step back costs a key at most one burst's refill.

use super::decision::{fraction, KeyDecision, Step, NEVER};
use super::rule::Quota;

/// The latest `now` in µs: later times decide as this one (year 2255).
const MAX_NOW_US: u64 = (1 << 53) - 1;

fn now_us(now_ms: u64) -> u64 {
    now_ms.saturating_mul(1000).min(MAX_NOW_US)
}

/// µs rounded up to ms.
fn ceil_ms(us: u64) -> u64 {
    us.div_ceil(1000)
}

#[inline]
pub(crate) fn step(q: &Quota, tat: u64, now_ms: u64, cost: u32) -> Step {
    let now = now_us(now_ms);
    // Written back when clamped, so the debt of a step back drains.
    let stepped_back = tat > now + q.capacity_us;
    let tat = tat.clamp(now, now + q.capacity_us);
    let need = (cost as u64).saturating_mul(q.emission_us);
    let next = tat.saturating_add(need);
    let admitted = next - now <= q.capacity_us;
    let end = if admitted { next } else { tat };
    let retry_after_ms = match admitted {
        true => 0,
        false if need > q.capacity_us => NEVER,
        false => ceil_ms(next - q.capacity_us - now),
    };
    Step {
        payload: end,
        write: (admitted && cost > 0) || stepped_back,
        decision: KeyDecision {
            admitted,
            limit: q.burst,
            remaining: ((now + q.capacity_us - end) / q.emission_us) as u32,
            reset_ms: ceil_ms(end - now),
            retry_after_ms,
            window_ms: ceil_ms(q.capacity_us),
        },
    }
}

pub(crate) fn debt(q: &Quota, tat: u64, now_ms: u64) -> u64 {
    let now = now_us(now_ms);
    let ahead = tat.clamp(now, now + q.capacity_us) - now;
    fraction(ahead as u128, q.capacity_us as u128)
}
