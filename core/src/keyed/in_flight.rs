//! The in-flight rule: units held per key (nginx `limit_conn`). A call of
//! cost `n` is admitted when `held + n ≤ limit` and holds its units until
//! `KeyTable::release`. A key holding units is never evicted (table.rs:
//! the leaving mark); a key holding none is a fresh key.
//!
//! The units held are the payload's low 32 bits (a limit is a `u32`); a
//! shared table's ledger keeps a marker above them while a process's step
//! is between its ledger and the cell (ledger.rs).

use super::decision::{KeyDecision, Step, NEVER};
use super::rule::Quota;

#[inline]
pub(crate) fn step(q: &Quota, payload: u64, cost: u32) -> Step {
    let held = held(payload);
    let limit = q.limit as u64;
    let admitted = held + cost as u64 <= limit;
    let end = if admitted { held + cost as u64 } else { held };
    Step {
        payload: end,
        write: admitted && cost > 0,
        decision: KeyDecision {
            admitted,
            limit: q.limit,
            remaining: limit.saturating_sub(end) as u32,
            reset_ms: 0,
            retry_after_ms: if cost as u64 > limit && !admitted {
                NEVER
            } else {
                0
            },
            window_ms: 0,
        },
    }
}

/// Units held are not debt that fades: a holder is never a victim.
pub(crate) fn debt(payload: u64) -> u64 {
    if held(payload) == 0 {
        0
    } else {
        u64::MAX
    }
}

/// The units held in a payload (a ledger's marker aside).
#[inline]
pub(crate) fn held(payload: u64) -> u64 {
    payload & HELD
}

/// The payload bits that count units held.
pub(crate) const HELD: u64 = (1 << 32) - 1;
