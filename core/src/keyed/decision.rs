//! `KeyDecision`, and the dispatch from a rule's kind to its state
//! transitions (gcra.rs, window.rs).

use super::rule::{KeyRuleKind, Quota};
use super::window::CountOp;
use super::{gcra, in_flight, window};

/// `retry_after_ms` of a cost no wait can admit (above the limit or burst).
pub const NEVER: u64 = u64::MAX;

/// What a key's decision says: everything an HTTP answer needs
/// (`RateLimit: "name";r=remaining;t=reset`, `RateLimit-Policy:
/// "name";q=limit;w=window`, `Retry-After`), in ms (round up to seconds
/// for headers). Plain data: C's `sds_key_decision`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyDecision {
    /// Whether the call may run: its cost was taken only if so.
    pub admitted: bool,
    /// The quota: the burst of a rate, the limit of a window (the rule's or
    /// the named key's).
    pub limit: u32,
    /// Units still available now, after this call.
    pub remaining: u32,
    /// ms until the key is back to a fresh key's state if no call comes
    /// (the burst refilled, the window over); 0 when it is fresh.
    pub reset_ms: u64,
    /// When refused: ms until the same cost would be admitted if no other
    /// call comes; `NEVER` (C: `SDS_KEY_NEVER`, `UINT64_MAX`) if the cost is
    /// above the quota. 0 if admitted, and for a refused in-flight call (a
    /// release frees units, not time).
    pub retry_after_ms: u64,
    /// The policy's window in ms: the window, or for a rate the time a
    /// whole burst takes to refill.
    pub window_ms: u64,
}

/// What a key table's `increment`, `decrement` and `count` say of a window
/// rule's key: the counts a store of Python `limits` or express-rate-limit
/// answers with (`core/src/keyed/mod.rs` maps each store call to a table
/// call). Plain data: C's `sds_key_count`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyCount {
    /// Units counted in the key's window (sliding: the current aligned
    /// window), after the call; it stops at the rule's count cap.
    pub count: u64,
    /// Sliding: the previous aligned window's count; fixed: 0.
    pub previous: u64,
    /// ms until the window ends: fixed, 0 when the key has no window (a
    /// fresh key's); sliding, until the current aligned window ends.
    pub reset_ms: u64,
}

/// A state transition: what the call says (a decision, or a count) and the
/// payload to store (when `write`).
pub(crate) struct Step<R = KeyDecision> {
    pub(crate) payload: u64,
    pub(crate) write: bool,
    pub(crate) decision: R,
}

/// Decides `cost` units (0: only reads) at `now_ms` on `payload`, the
/// kind's packed state (0 is a fresh key's).
#[inline]
pub(crate) fn step(kind: KeyRuleKind, quota: &Quota, payload: u64, now_ms: u64, cost: u32) -> Step {
    match kind {
        KeyRuleKind::Rate => gcra::step(quota, payload, now_ms, cost),
        KeyRuleKind::FixedWindow => window::fixed_step(quota, payload, now_ms, cost),
        KeyRuleKind::SlidingWindow => window::sliding_step(quota, payload, now_ms, cost),
        KeyRuleKind::InFlight => in_flight::step(quota, payload, cost),
    }
}

/// A count operation on a window rule's `payload`; `None` for the other
/// kinds.
pub(crate) fn count_step(
    kind: KeyRuleKind,
    quota: &Quota,
    payload: u64,
    now_ms: u64,
    op: CountOp,
) -> Option<Step<KeyCount>> {
    match kind {
        KeyRuleKind::FixedWindow => Some(window::fixed_count(quota, payload, now_ms, op)),
        KeyRuleKind::SlidingWindow => Some(window::sliding_count(quota, payload, now_ms, op)),
        KeyRuleKind::Rate | KeyRuleKind::InFlight => None,
    }
}

/// How far `payload` is from a fresh key's state at `now_ms`, as a
/// fraction of the quota in 1/2^32: 0 exactly when every decision would
/// be the same as a fresh key's (the cell may be taken without loss).
pub(crate) fn debt(kind: KeyRuleKind, quota: &Quota, payload: u64, now_ms: u64) -> u64 {
    match kind {
        KeyRuleKind::Rate => gcra::debt(quota, payload, now_ms),
        KeyRuleKind::FixedWindow => window::fixed_debt(quota, payload, now_ms),
        KeyRuleKind::SlidingWindow => window::sliding_debt(quota, payload, now_ms),
        KeyRuleKind::InFlight => in_flight::debt(payload),
    }
}

/// `part / whole` in 1/2^32, at least 1 when `part > 0`. A new key's claim
/// weighs up to 8 candidates by it, so the usual sizes (a part under 2^32:
/// 71 minutes of a rate's µs, or a count) divide in 64 bits, several times
/// faster than a 128-bit division; the quotient is the same.
#[inline]
pub(crate) fn fraction(part: u128, whole: u128) -> u64 {
    if part == 0 {
        return 0;
    }
    let whole = whole.max(1);
    if part < 1 << 32 && whole <= u64::MAX as u128 {
        return (((part as u64) << 32) / whole as u64).max(1);
    }
    ((part << 32) / whole).clamp(1, u64::MAX as u128) as u64
}
