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
//! word (`generation: 10 bits | payload: 54 bits`), encoded as
//! [`KEY_LAYOUT_VERSION`] says. Four cells make a bucket of
//! one 64-byte line. 10^7 keys fit in 160 MB of cells. Give a table twice
//! as many cells as the keys that owe something at once: with 10^6 such
//! keys filled at one instant, 1.25x the cells lost 1.4 % of them to lossy
//! evictions (all 8 candidates live), 1.5x 0.15 %, 2x 7 keys, 4x none
//! (`examples/keyed_vs_governor.rs`).
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
//! One [`KeyRule`] per table (its kind, `limit`, `periodMs`, `burst`, the
//! fixed window's flags `windowFromFirstHit` and `countRefused`), from
//! (camelCase name, value) pairs through [`KeyRuleBuilder`], plus up to
//! [`MAX_EXCEPTIONS`] named keys with a `limit` of their own (Sentinel's
//! `paramFlowItemList`; a rate's burst scales with it), listed by
//! [`KeyRule::exceptions`] by fingerprint. Every call has a cost `n ≥ 1`
//! (units); a refused call takes nothing, unless the rule counts refused
//! calls.
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
//! - **Fixed window** (`W = periodMs`, `L = limit < 2^24`): a count per
//!   window; a call is admitted when `count + n ≤ L`. Windows are aligned
//!   to multiples of `W` (`w = now / W`, ending at `(w + 1) × W`), or with
//!   `windowFromFirstHit` a key's window starts at the hit `s` that finds
//!   no live window and is live for `s ≤ now < s + W` (a hit at `s + W`
//!   starts the next). With `countRefused` every call counts, refused ones
//!   too: `count ← count + n` whatever the verdict.
//! - **Sliding-window counter** (`L < 2^21`): `weighted = prev × (W − e) /
//!   W + cur`, `e = now mod W`, `prev` and `cur` the counts of the previous
//!   and the current aligned window; admitted when `floor(weighted) + n ≤
//!   L`, then `cur ← cur + n`. Why not larger: `limits` counts exactly, so
//!   `prev` and `cur` take `c = max(16, bits(L))` bits each and the lap the
//!   `54 − 2c` left; past `L = 2^21 − 1` the lap would have fewer than 12
//!   bits and a key idle for a few thousand windows would read old counts
//!   (counts in units of `L / 2^16` would fit any limit, but not exactly).
//! - **In flight** (nginx `limit_conn`): at most `limit` units held per key
//!   at once; a call takes `n` when `held + n ≤ limit` and
//!   [`KeyTable::release`] gives them back. No period. A key holding units
//!   is never evicted: when all 8 candidates of a new key hold some, its
//!   call fails with [`KeyError::TableFull`] (nginx answers 503 there).
//!
//! **Counts, as stores keep them** ([`KeyCount`], window rules only):
//! [`KeyTable::increment`] counts `n` whatever the limit and returns the
//! count after it and `reset_ms`, when the window ends (`s + W − now` from
//! the first hit, `(w + 1) × W − now` aligned); [`KeyTable::decrement`]
//! takes up to `n` off a live window's count (never below 0, never
//! starting a window); [`KeyTable::count`] reads (`reset_ms = 0` for a key
//! with no window). A count saturates at `2^c − 1` and then stays there
//! until its window ends (aligned fixed: `c = 24`; from the first hit: `c
//! = max(12, bits(L) + 1)`, so more than `2 L`; sliding: `c = max(16,
//! bits(L))`). Which options serve which library exactly (at ms
//! resolution, with the time the caller passes):
//!
//! - Python `limits`, `FixedWindowRateLimiter` on `MemoryStorage` (and its
//!   Redis, Memcached, MongoDB storages, which set the expiry at the first
//!   hit alike): `fixedWindow` with `windowFromFirstHit` and `periodMs =
//!   expiry × 1000`. `incr(key, expiry, amount)` is `increment` (`count`),
//!   `get` is `count().count`, `get_expiry` is `now + count().reset_ms`,
//!   `clear` is [`KeyTable::reset`], `reset` is [`KeyTable::reset_all`];
//!   `hit` is `increment(..).count ≤ L`, or `decide` with `countRefused`
//!   (the same verdict; `remaining` is `get_window_stats`' `max(0, L −
//!   count)`). One storage serves every limit item and is given the
//!   expiry per call: a store keeps a table per expiry.
//! - `limits`' `SlidingWindowCounterRateLimiter` on `MemoryStorage`:
//!   `slidingWindow`. `acquire_sliding_window_entry` is `decide(..)
//!   .admitted` (a refused hit counts nothing; `amount > limit` is never
//!   admitted); `get_sliding_window` is `count()`: `(previous, previous > 0
//!   ? reset_ms : 0, count, reset_ms + W)` in s; `clear_sliding_window` is
//!   `reset`. `limits` weighs with floats, we with integers: a weighted
//!   count within float rounding of a whole number may floor differently.
//! - express-rate-limit's `MemoryStore`: `fixedWindow` with
//!   `windowFromFirstHit`, `periodMs = windowMs`. `increment` is
//!   `increment(key, now, 1)`: `{totalHits: count, resetTime: now +
//!   reset_ms}`; `decrement` is `decrement(key, now, 1)`; `get` is
//!   `count()` (`undefined` when `reset_ms = 0`); `resetKey` is `reset`,
//!   `resetAll` is `reset_all`. The middleware's verdict `totalHits >
//!   limit` is `decide` with `countRefused` (every hit counted, refused
//!   ones too).
//!
//! Exact but for: counts past the cap (`totalHits` stops there; a count
//! at its cap stays until the window ends, where a library would let
//! decrements bring it back under the limit); a key evicted under
//! pressure (the table's stats count it when its state was not fresh);
//! a window from the first hit whose start is 0 mod `2^t` and whose count
//! a decrement took to 0 reads as no window (a later hit starts a new
//! one); and the misreads of keys idle for very long (Edges). A refused
//! call of the aligned fixed window with `countRefused` is no library's
//! (Redis-style `INCR` + `EXPIRE` stores anchor at the first hit).
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
//! A new key whose call changes a fresh state (admitted, or counted)
//! takes, among its 8 candidates (a call refused on a fresh state, a cost
//! above the quota, takes none): a **free** cell, empty or
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
//!   with a bit-equal payload. A refused call writes nothing (unless the rule
//!   counts refused calls).
//! - A claim that takes a key's cell it found free (in flight: holding no
//!   units) first marks it *leaving* in its key word, then checks
//!   (read-modify-write) that its state is still free, then takes it. A
//!   call of the owner that decided meanwhile sees the mark and cancels
//!   it (or, if the cell is already gone, starts over: its write is of an
//!   old generation, which the next owner ignores), so a free cell is
//!   taken losing nothing and units held are never evicted; a mark left by
//!   a dead process is cancelled by the owner's next call or taken over by
//!   the next claim. (A cell taken with a debt, all candidates owing, is
//!   taken at once and counted lossy.)
//! - Two first calls of one new key may claim two cells at once; one is
//!   emptied, and only one in which no call has decided yet (the same
//!   mark): the later candidate if so, else the earlier. A decision on the
//!   emptied one starts over. If calls decided in both (each found before
//!   the other was claimed), both stay and the earlier decides (Edges).
//! - The counters of [`KeyTableState`] are kept beside the cells; a process
//!   killed between a claim and its count leaves `resident` off by one.
//!
//! # Edges
//!
//! - Clock steps: a rate's TAT more than a burst ahead (the clock went
//!   back) is read and written as one burst ahead, so a step back costs a
//!   key at most one burst's refill; a window whose lap is not the current
//!   one (nor, sliding, the one before) reads as empty, and so does a
//!   window from the first hit whose start is `W` or more before the
//!   call, or `W` or more after it (a call less than `W` before the start
//!   counts in that window, at its start: callers' clocks race).
//! - A window key idle for very long may read its old counts, a misread
//!   that only refuses, for less than one window: sliding, after a whole
//!   multiple of `2^(54 − 2c)` windows (`2^22`, 48 days of 1 s windows,
//!   for `L < 2^16`; `2^12` windows at `L = 2^21 − 1`); aligned fixed,
//!   `2^30` windows; from the first hit, within `W` of a multiple of `2^t`
//!   ms, `t = 54 − c ≥ bits(W) + 4` (`L = 100`, `W` = 15 min: `t = 42`,
//!   139 years; `L = 10^6`, `W` = 1 day: `t = 33`, 99 days; a key back
//!   after that misreads with a chance of `2 W / 2^t` ≤ 1/8, 2 % there).
//!   Times after the year 2255 decide as that year.
//! - Two first calls of one new key that claim two cells at once, each
//!   decided in before the other cell was claimed, keep both cells: the
//!   earlier decides, and the later's state is the key's no more (a rate's
//!   or a window's calls there are forgotten, not counted lossy, until the
//!   cell is taken; in flight, releases look in both and the key may hold
//!   up to twice its limit until the later's units come back). It takes
//!   three calls of one new key racing within a few instructions.
//! - In flight on a table shared by processes, a process killed while it
//!   holds units has them given back exactly once, by whoever sweeps its
//!   ledger row (below); until then they count. A helper that stalls
//!   between reading a step's marker and clearing it as stale, while 32
//!   steps of the same ledger entry bring the cell back to the very same
//!   word, could clear a live marker (ledger.rs).
//!
//! # In flight on shared tables
//!
//! A cell counts the units held per key, not who holds them; a process
//! killed while holding some would leave them held for good. So each
//! process of a shared in-flight table has a row of entries in a
//! [`KeyLedger`] (the shm crate keeps the rows and a process slot each in
//! the file), and decides and gives back through
//! [`KeyTable::decide_ledgered`] and [`KeyTable::release_ledgered`]: an
//! entry counts the units its process holds in one cell. A step is counted
//! in the entry first (pending), then in the cell, whose state carries a
//! marker naming the step (payload bits 32..54, above the units held),
//! then the entry commits and the marker is cleared; a call that finds
//! another step's marker helps it first (nothing waits on its process).
//! [`KeyTable::sweep_ledger`] gives back a dead process's row: a pending
//! entry whose marker is in its cell took effect (committed), one whose
//! marker is not did not (cancelled); then each entry's units are given
//! back by the same steps, so a sweep killed midway is finished by the
//! next. A process holds units on at most about a row of keys at once
//! ([`KeyError::LedgerFull`] before the cell is touched), and gives back
//! only units it took. `src/keyed/ledger_tests.rs` stops a process at
//! every step and checks what the sweep gives back.

mod cell;
mod decision;
mod eviction;
mod gcra;
mod hash;
mod in_flight;
mod input;
mod ledger;
mod rule;
mod rule_input;
mod storage;
mod table;
mod window;

pub use cell::{KeyBucket, KeyCell, BUCKET_CELLS};
pub use decision::{KeyCount, KeyDecision, NEVER};
pub use input::{
    lone_surrogate, units_from_i128, units_from_value, utf16_to_utf8, LoneSurrogate, UnitsError,
};
pub use ledger::{KeyLedger, KeyLedgerEntry, MAX_LEDGER_ROW, MAX_LEDGER_SLOTS};
pub use rule::{
    key_fingerprint, KeyException, KeyRule, KeyRuleBuilder, KeyRuleKind, MAX_EXCEPTIONS,
    MAX_PERIOD_MS,
};
pub use rule_input::{KeyField, KeyRuleBreak, KeyRuleError, KindInput};
pub use storage::{
    KeyError, KeyStorage, KeyTableState, KeyTableStats, SharedKeys, MAX_KEY_BUCKETS,
};
pub use table::KeyTable;

/// The encoding of a key cell's words, for every rule (cell.rs, gcra.rs,
/// window.rs, in_flight.rs): a shared file records it, and a build whose
/// cells differ refuses the file. 1: 16-bit sliding counts and aligned
/// fixed windows only; 2: counts as wide as their limit needs, fixed
/// windows from the first hit.
pub const KEY_LAYOUT_VERSION: u32 = 2;

#[cfg(all(test, not(loom)))]
mod ledger_tests;
#[cfg(all(test, not(loom)))]
mod tests;
