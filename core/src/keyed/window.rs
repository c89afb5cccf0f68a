//! The window rules, on windows aligned to multiples of `periodMs` (`W`):
//! window `w = now / W`, `e = now % W` ms into it.
//!
//! - Fixed: a count per window; a call of cost `n` is admitted when
//!   `count + n ≤ limit`. State: the window's lap (30 bits of `w`) and
//!   the count (24 bits).
//! - Sliding-window counter (Python `limits`' `SlidingWindowCounter`, as
//!   its memory storage computes it, and Cloudflare's): the previous
//!   window's count weighs by the part of it still inside the sliding
//!   window, `weighted = prev × (W − e) / W + cur`, and a call is admitted
//!   when `floor(weighted) + n ≤ limit`. State: the lap (22 bits), `prev`
//!   and `cur` (16 bits each).
//!
//! A refused call counts nothing (as `limits`' sliding window; its fixed
//! window and express-rate-limit count refused hits too).
//!
//! Callers read their clocks before they decide, so around a boundary a
//! call whose clock is in window `w` can reach a key already in `w + 1`
//! (another thread or process decided there first): it counts in `w + 1`,
//! at that window's start, so racing clocks never reset a window. A stored
//! lap further from the call's reads as zero: after a clock step back of
//! more than a window the counts restart (and so does a call held up for
//! longer than a window between reading its clock and deciding, e.g. a
//! thread preempted that long: keep windows well above such stalls), and
//! a key idle for a whole multiple of 2^22 windows (48 days of 1 s
//! windows) would read its old counts.

use super::decision::{fraction, KeyDecision, Step, NEVER};
use super::rule::Quota;

const FIXED_COUNT_BITS: u32 = 24;
const FIXED_LAP: u64 = (1 << 30) - 1;
const SLIDING_LAP: u64 = (1 << 22) - 1;
const COUNT16: u64 = 0xffff;

/// The window and the ms into it of a call at `now_ms` on a state stored
/// in lap `stored` (of `lap_mask`): a call one window behind the stored one
/// counts at the start of the stored window (see the module doc).
fn position(q: &Quota, stored: u64, lap_mask: u64, now_ms: u64) -> (u64, u64) {
    let w = now_ms / q.period_ms;
    match stored == w.wrapping_add(1) & lap_mask {
        true => (w.wrapping_add(1), 0),
        false => (w, now_ms % q.period_ms),
    }
}

fn fixed_count(q: &Quota, payload: u64, now_ms: u64) -> (u64, u64, u64) {
    let (w, e) = position(q, payload >> FIXED_COUNT_BITS, FIXED_LAP, now_ms);
    let lap = w & FIXED_LAP;
    let count = match payload >> FIXED_COUNT_BITS == lap {
        true => payload & ((1 << FIXED_COUNT_BITS) - 1),
        false => 0,
    };
    (lap, count, e)
}

#[inline]
pub(crate) fn fixed_step(q: &Quota, payload: u64, now_ms: u64, cost: u32) -> Step {
    let (lap, count, e) = fixed_count(q, payload, now_ms);
    let limit = q.limit as u64;
    let admitted = count + cost as u64 <= limit;
    let end = if admitted { count + cost as u64 } else { count };
    let left = q.period_ms - e;
    Step {
        payload: lap << FIXED_COUNT_BITS | end,
        write: admitted && cost > 0,
        decision: KeyDecision {
            admitted,
            limit: q.limit,
            remaining: limit.saturating_sub(end) as u32,
            reset_ms: if end > 0 { left } else { 0 },
            retry_after_ms: match admitted {
                true => 0,
                false if cost as u64 > limit => NEVER,
                false => left,
            },
            window_ms: q.period_ms,
        },
    }
}

pub(crate) fn fixed_debt(q: &Quota, payload: u64, now_ms: u64) -> u64 {
    let (_, count, _) = fixed_count(q, payload, now_ms);
    fraction(count as u128, q.limit as u128)
}

/// (lap, prev, cur, e) at `now_ms`.
fn sliding_counts(q: &Quota, payload: u64, now_ms: u64) -> (u64, u64, u64, u64) {
    let stored = payload >> 32;
    let (w, e) = position(q, stored, SLIDING_LAP, now_ms);
    let lap = w & SLIDING_LAP;
    let (prev, cur) = (payload >> 16 & COUNT16, payload & COUNT16);
    let (prev, cur) = if stored == lap {
        (prev, cur)
    } else if stored == w.wrapping_sub(1) & SLIDING_LAP {
        (cur, 0)
    } else {
        (0, 0)
    };
    (lap, prev, cur, e)
}

/// `floor(prev × (W − e) / W)`.
fn weighed(prev: u64, w: u64, e: u64) -> u64 {
    (prev as u128 * (w - e) as u128 / w as u128) as u64
}

/// The first `e' ≥ e` within the window where `floor(prev × (W − e') / W)
/// + cur ≤ room`.
fn fits_at(prev: u64, cur: u64, room: u64, w: u64, e: u64) -> Option<u64> {
    let spare = room.checked_sub(cur)?;
    if prev == 0 {
        return Some(e);
    }
    // prev × (W − e') < (spare + 1) × W, so W − e' ≤ ((spare + 1) × W − 1) / prev.
    let most_left = ((spare as u128 + 1) * w as u128 - 1) / prev as u128;
    let at = (w as u128).saturating_sub(most_left).max(e as u128) as u64;
    (at < w).then_some(at)
}

/// ms from `e` until `fits_at` holds, in this window, the next (where
/// `prev` is this `cur`) or the one after (empty).
fn wait(prev: u64, cur: u64, room: u64, w: u64, e: u64) -> u64 {
    match fits_at(prev, cur, room, w, e) {
        Some(at) => at - e,
        None => (w - e) + fits_at(cur, 0, room, w, 0).unwrap_or(w),
    }
}

#[inline]
pub(crate) fn sliding_step(q: &Quota, payload: u64, now_ms: u64, cost: u32) -> Step {
    let (lap, prev, cur, e) = sliding_counts(q, payload, now_ms);
    let (w, limit, cost) = (q.period_ms, q.limit as u64, cost as u64);
    let used = weighed(prev, w, e) + cur;
    let admitted = used + cost <= limit;
    let cur = if admitted { cur + cost } else { cur };
    let retry_after_ms = match admitted {
        true => 0,
        false if cost > limit => NEVER,
        false => wait(prev, cur, limit - cost, w, e),
    };
    Step {
        payload: lap << 32 | prev << 16 | cur,
        write: admitted && cost > 0,
        decision: KeyDecision {
            admitted,
            limit: q.limit,
            remaining: limit.saturating_sub(weighed(prev, w, e) + cur) as u32,
            reset_ms: wait(prev, cur, 0, w, e),
            retry_after_ms,
            window_ms: w,
        },
    }
}

pub(crate) fn sliding_debt(q: &Quota, payload: u64, now_ms: u64) -> u64 {
    let (_, prev, cur, e) = sliding_counts(q, payload, now_ms);
    let w = q.period_ms as u128;
    if weighed(prev, q.period_ms, e) + cur == 0 {
        return 0;
    }
    let part = prev as u128 * (w - e as u128) + cur as u128 * w;
    fraction(part, w * q.limit as u128)
}
