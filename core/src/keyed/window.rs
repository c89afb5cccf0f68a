//! The window rules (`W = periodMs`; the formulas are the module doc's).
//!
//! - Fixed, aligned (the default): windows aligned to multiples of `W`,
//!   window `w = now / W`, `e = now % W` ms into it. State: the window's
//!   lap (30 bits of `w`) and the count (24 bits).
//! - Fixed, from the first hit (`windowFromFirstHit`): a key's window
//!   starts at the hit that finds none live and lasts `W` ms. State: the
//!   start (`t` low bits of its ms) and the count (`c` bits), `c + t = 54`,
//!   `c = max(12, bits(limit) + 1)`.
//! - Sliding-window counter: `prev` and `cur`, the counts of the previous
//!   and the current aligned window, and the lap of `cur`'s window. State:
//!   the lap (`54 − 2c` bits) and two counts of `c = max(16, bits(limit))`
//!   bits (limits below 2^16 keep the 22-bit lap and 16-bit counts).
//!
//! A count saturates at `2^c − 1` (more than the limit) and stays there
//! until its window ends: a key that reached it is over its limit until
//! then, whatever is taken off.
//!
//! Callers read their clocks before they decide, so around a boundary a
//! call whose clock is in one window can reach a key already in the next
//! (another thread or process decided there first): it counts in that
//! window, at its start, so racing clocks never reset a window (aligned: a
//! call one window behind; from the first hit: a call less than `W` before
//! the start). A stored lap or start further from the call's reads as no
//! window: after a clock step back of more than a window the counts
//! restart (and so does a call held up for longer than a window between
//! reading its clock and deciding, e.g. a thread preempted that long: keep
//! windows well above such stalls). A key idle for a whole multiple of the
//! lap's range (2^22 windows for sliding windows of limits below 2^16, at
//! least 2^12; 2^30 aligned fixed windows), or for within `W` of a
//! multiple of `2^t` ms from the first hit (`2^t ≥ 16 W`), reads its old
//! counts: a misread that only refuses, for less than one window.

use super::cell::PAYLOAD_BITS;
use super::decision::{fraction, KeyCount, KeyDecision, Step, NEVER};
use super::rule::Quota;

const FIXED_COUNT_BITS: u32 = 24;
const FIXED_LAP: u64 = (1 << 30) - 1;

const fn mask(bits: u32) -> u64 {
    (1 << bits) - 1
}

/// A count operation of [`crate::keyed::KeyTable::increment`], `decrement`
/// and `count`.
#[derive(Copy, Clone)]
pub(crate) enum CountOp {
    /// Counts `n` units whatever the limit.
    Add(u64),
    /// Takes up to `n` units off a live window's count.
    Take(u64),
    /// Reads.
    Read,
}

/// A fixed window as a call at `now` sees it.
struct Fixed {
    /// The payload's bits above the count: the window's lap or start.
    base: u64,
    count: u64,
    /// The most the count holds.
    cap: u64,
    /// ms until the window ends.
    left: u64,
    /// From the first hit: a window is live (0: a hit would start one).
    live: bool,
}

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

fn fixed(q: &Quota, payload: u64, now_ms: u64) -> Fixed {
    if q.from_first_hit {
        return from_first_hit(q, payload, now_ms);
    }
    let (w, e) = position(q, payload >> FIXED_COUNT_BITS, FIXED_LAP, now_ms);
    let lap = w & FIXED_LAP;
    let count = match payload >> FIXED_COUNT_BITS == lap {
        true => payload & mask(FIXED_COUNT_BITS),
        false => 0,
    };
    Fixed {
        base: lap << FIXED_COUNT_BITS,
        count,
        cap: mask(FIXED_COUNT_BITS),
        left: q.period_ms - e,
        live: false,
    }
}

/// A window from the first hit: live while the call is less than `W` ms
/// after its start (or, a late clock, before it: then at its start). A
/// payload of 0 is no window (a live one whose start is 0 mod 2^t and
/// whose count was taken down to 0 reads so too).
fn from_first_hit(q: &Quota, payload: u64, now_ms: u64) -> Fixed {
    let c = q.count_bits;
    let time = mask(PAYLOAD_BITS - c);
    let w = q.period_ms;
    let since = now_ms.wrapping_sub(payload >> c) & time;
    let into = match since {
        d if d < w => Some(d),
        d if time - d < w - 1 => Some(0),
        _ => None,
    };
    match (payload != 0, into) {
        (true, Some(d)) => Fixed {
            base: payload & !mask(c),
            count: payload & mask(c),
            cap: mask(c),
            left: w - d,
            live: true,
        },
        _ => Fixed {
            base: (now_ms & time) << c,
            count: 0,
            cap: mask(c),
            left: w,
            live: false,
        },
    }
}

#[inline]
pub(crate) fn fixed_step(q: &Quota, payload: u64, now_ms: u64, cost: u32) -> Step {
    let f = fixed(q, payload, now_ms);
    let (limit, cost) = (q.limit as u64, cost as u64);
    let admitted = f.count + cost <= limit;
    let counts = admitted || q.count_refused;
    let end = if counts {
        (f.count + cost).min(f.cap)
    } else {
        f.count
    };
    Step {
        payload: f.base | end,
        write: counts && cost > 0,
        decision: KeyDecision {
            admitted,
            limit: q.limit,
            remaining: limit.saturating_sub(end) as u32,
            reset_ms: if end > 0 || f.live { f.left } else { 0 },
            retry_after_ms: match admitted {
                true => 0,
                false if cost > limit => NEVER,
                false => f.left,
            },
            window_ms: q.period_ms,
        },
    }
}

pub(crate) fn fixed_debt(q: &Quota, payload: u64, now_ms: u64) -> u64 {
    let f = fixed(q, payload, now_ms);
    // A live window of no count still holds its reset time.
    fraction(f.count as u128, q.limit as u128).max(f.live as u64)
}

/// `count`'s new value under `op` (a count at its cap stays there).
fn counted(count: u64, cap: u64, op: CountOp) -> u64 {
    match op {
        CountOp::Add(n) => count.saturating_add(n).min(cap),
        CountOp::Take(n) if count < cap => count.saturating_sub(n),
        _ => count,
    }
}

/// A count operation on a fixed window: taking off needs a live window
/// (a decrement never starts one).
pub(crate) fn fixed_count(q: &Quota, payload: u64, now_ms: u64, op: CountOp) -> Step<KeyCount> {
    let f = fixed(q, payload, now_ms);
    let end = counted(f.count, f.cap, op);
    let write = end != f.count || matches!(op, CountOp::Add(n) if n > 0);
    Step {
        payload: f.base | end,
        write,
        decision: KeyCount {
            count: end,
            previous: 0,
            reset_ms: if end > 0 || f.live || write {
                f.left
            } else {
                0
            },
        },
    }
}

/// (lap, prev, cur, e) at `now_ms`.
fn sliding_counts(q: &Quota, payload: u64, now_ms: u64) -> (u64, u64, u64, u64) {
    let c = q.count_bits;
    let lap_mask = mask(PAYLOAD_BITS - 2 * c);
    let stored = payload >> (2 * c);
    let (w, e) = position(q, stored, lap_mask, now_ms);
    let lap = w & lap_mask;
    let (prev, cur) = (payload >> c & mask(c), payload & mask(c));
    let (prev, cur) = if stored == lap {
        (prev, cur)
    } else if stored == w.wrapping_sub(1) & lap_mask {
        (cur, 0)
    } else {
        (0, 0)
    };
    (lap, prev, cur, e)
}

fn sliding_payload(q: &Quota, lap: u64, prev: u64, cur: u64) -> u64 {
    let c = q.count_bits;
    lap << (2 * c) | prev << c | cur
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
        payload: sliding_payload(q, lap, prev, cur),
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

/// A count operation on the current aligned window's count.
pub(crate) fn sliding_count(q: &Quota, payload: u64, now_ms: u64, op: CountOp) -> Step<KeyCount> {
    let (lap, prev, cur, e) = sliding_counts(q, payload, now_ms);
    let end = counted(cur, mask(q.count_bits), op);
    Step {
        payload: sliding_payload(q, lap, prev, end),
        write: end != cur,
        decision: KeyCount {
            count: end,
            previous: prev,
            reset_ms: q.period_ms - e,
        },
    }
}
