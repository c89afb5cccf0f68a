//! Per-key limits with a hard memory bound: a [`KeyTable`] decides "may
//! this *client* run?" for keys of any bytes (a user, an API key, an IP
//! address, a hot parameter), over caller storage of a fixed number of
//! [`KeyBucket`]s that never grows, allocation-free and lock-free.
//!
//! # Memory
//!
//! A key is one [`KeyCell`] of **16 bytes**, whatever the rule (the budget
//! was 32 for a rate, 64 for windows; nginx `limit_req` takes 128): a key
//! word (`fingerprint: 48 bits | leaving: 1 | generation: 15`) and a state
//! word (`generation: 10 bits | payload: 54 bits`). Four cells make a bucket of
//! one 64-byte line. 10^7 keys fit in 160 MB of cells; give a table about
//! 25 % more cells than the keys it must hold at once.
//!
//! # Finding a key
//!
//! The key's 64-bit hash picks two buckets (its *candidates*: 8 cells) and
//! a 48-bit fingerprint; the table keeps only the fingerprint. A decision
//! reads the first bucket's line, and the second's only when the key is not
//! in the first: one cache line, two at most. A new key never scans the
//! table: it takes one of its 8 candidates (see Eviction).
//!
//! **Collisions.** Two keys share one state only if they have the same
//! fingerprint and share a candidate cell: a new key meets another's
//! fingerprint among its 8 candidates with a chance of at most 8 / 2^48
//! ≈ 3 × 10^-14, so about 3 × 10^-7 over 10^7 distinct keys and 3 × 10^-6
//! over a flood of 10^8. The cost of one collision: the two keys count
//! against one state (each pays for the other's calls) until it is evicted.
//! Named exceptions are matched by fingerprint too.
//!
//! # Rules
//!
//! One [`KeyRule`] per table (its kind, `limit`, `periodMs`, `burst`), from
//! (camelCase name, value) pairs through [`KeyRuleBuilder`], plus up to
//! [`MAX_EXCEPTIONS`] named keys with a `limit` of their own (Sentinel's
//! `paramFlowItemList`; a rate's burst scales with it). Every call has a
//! cost `n ≥ 1` (units); a refused call takes nothing.
//!
//! - **Rate** (GCRA, one theoretical arrival time per key, in µs):
//!   `T = periodMs × 1000 / limit` per unit; admitted when `max(TAT, now)
//!   + n × T − now ≤ burst × T`, which becomes the new TAT. `burst` is how
//!   many units a fresh key takes at once (default `limit`). Side by side:
//!   governor's `Quota::with_period(periodMs / limit).allow_burst(burst)` is
//!   the same; nginx `limit_req rate=r burst=b nodelay` is `burst = b + 1`
//!   (nginx admits the burst plus the request at hand; without `nodelay` it
//!   delays where we refuse with a `retry_after_ms`); redis-cell
//!   `CL.THROTTLE key max_burst count period` is `burst = max_burst + 1`,
//!   `limit = count`, `periodMs = period × 1000`.
//! - **Fixed window**: windows aligned to multiples of `periodMs` (`W`);
//!   admitted when `count + n ≤ limit`; `limit < 2^24`.
//! - **Sliding-window counter**: `weighted = prev × (W − e) / W + cur`,
//!   `e = now mod W`, `prev` and `cur` the counts of the previous and the
//!   current aligned window; admitted when `floor(weighted) + n ≤ limit`
//!   (Python `limits`' `SlidingWindowCounterRateLimiter` with its memory
//!   storage's aligned windows); `limit < 2^16`.
//! - **In flight** (nginx `limit_conn`): at most `limit` units held per key
//!   at once; a call takes `n` when `held + n ≤ limit` and
//!   [`KeyTable::release`] gives them back. No period. A key holding units
//!   is never evicted: when all 8 candidates of a new key hold some, its
//!   call fails with [`KeyError::TableFull`] (nginx answers 503 there).
//!
//! `limits`' fixed window and express-rate-limit start a key's window at its
//! first hit and count refused hits; serving their stores exactly needs
//! that variant (not built yet: see issue 24).
//!
//! **A decision** ([`KeyDecision`]) gives `admitted`, `limit` (the burst, or
//! the window's limit), `remaining`, `reset_ms` (until the key is back to a
//! fresh state if no call comes), `retry_after_ms` (when refused: until the
//! same cost fits; [`NEVER`] if it exceeds the quota) and `window_ms` (the
//! window, or the time a whole burst takes to refill): `RateLimit:
//! r=remaining, t=reset`, `RateLimit-Policy: q=limit, w=window`,
//! `Retry-After`, after rounding ms up to seconds.
//!
//! # Eviction
//!
//! A new key takes, among its 8 candidates: a **free** cell, empty or
//! holding a state equal to a fresh key's (a drained rate, a passed window:
//! every decision would be the same, so nothing is lost), in the bucket
//! with more free cells; only when none is free, the cell **closest to
//! fresh** (the least debt, as a fraction of its quota), never one holding
//! in-flight units. The table's [`KeyTableStats`] count resident keys,
//! evictions and lossy evictions (those that gave up a state that was not
//! fresh). So a key over its limit
//! is given up only when all 7 other candidates owe as much: a flood of new
//! keys, each owing one call, cannot reset it (`tests/keyed_flood.rs`).
//!
//! # Concurrency and shared memory
//!
//! Cells are plain data (`repr(C)`, integer atomics; all zero is empty, any
//! bit pattern is valid), so a table may live in a mapping shared by
//! processes ([`SharedKeys`]); nothing waits and nothing is locked:
//!
//! - A key changes hands by one compare-and-swap of the key word that also
//!   bumps its generation. A state whose generation is not its key word's
//!   reads as a fresh key's, so a process killed at any instruction leaves
//!   every cell usable (at worst a key newly given a cell starts fresh).
//! - A decision that takes units is one compare-and-swap of the state
//!   word, then a read-modify-write re-read of the key word: if the cell
//!   changed hands meanwhile, the decision starts over; otherwise the
//!   claim's own read-modify-write of the state sees it, and an eviction
//!   that gives it up is counted lossy. So no admitted call is silently
//!   lost with an evicted state (`tests/keyed_loom.rs` checks every
//!   interleaving). An update computed for one owner fails on the next,
//!   unless 1 024 owners passed through the cell during that one decision
//!   with a bit-equal payload. A refused call writes nothing.
//! - In-flight tables first mark a cell *leaving* in its key word, then
//!   check (read-modify-write) that its owner holds nothing, then take it. A
//!   call of the owner that took units meanwhile sees the mark and cancels
//!   it (or, if the cell is already gone, starts over: its write is of an
//!   old generation, which the next owner ignores), so units held are never
//!   evicted; a mark left by a dead process
//!   is cancelled by the owner's next call or taken over by the next claim.
//! - Two first calls of one new key may claim two cells at once; the
//!   earlier candidate keeps the key and the later is emptied (in flight:
//!   unless it holds units already), and a decision on the emptied one
//!   starts over.
//! - The counters of [`KeyTableState`] are kept beside the cells; a process
//!   killed between a claim and its count leaves `resident` off by one.
//!
//! # Edges
//!
//! - Clock steps: a rate's TAT more than a burst ahead (the clock went
//!   back) is read and written as one burst ahead, so a step back costs a
//!   key at most one burst's refill; a window whose lap is not the current
//!   one (nor, sliding, the one before) reads as empty.
//! - A key idle for a whole multiple of 2^22 windows (48 days of 1 s
//!   windows; fixed windows 2^30) reads its old counts; times after the year
//!   2255 decide as that year.
//! - Two first calls of one new key in an in-flight table that claim two
//!   cells at once and both take units keep both cells until the later's
//!   units come back (releases look in both): for that while the key may
//!   hold up to twice its limit. A process killed
//!   while it holds in-flight units leaves them held: giving them back needs
//!   the points' ledger discipline on shared tables (not built yet).

mod cell;
mod decision;
mod eviction;
mod gcra;
mod hash;
mod in_flight;
mod rule;
mod storage;
mod table;
mod window;

pub use cell::{KeyBucket, KeyCell, BUCKET_CELLS};
pub use decision::{KeyDecision, NEVER};
pub use rule::{
    KeyField, KeyRule, KeyRuleBreak, KeyRuleBuilder, KeyRuleError, KeyRuleKind, MAX_EXCEPTIONS,
    MAX_PERIOD_MS,
};
pub use storage::{
    KeyError, KeyStorage, KeyTableState, KeyTableStats, SharedKeys, MAX_KEY_BUCKETS,
};
pub use table::KeyTable;

#[cfg(all(test, not(loom)))]
mod tests;
