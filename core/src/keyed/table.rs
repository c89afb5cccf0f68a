//! `KeyTable`: per-key state in buckets the caller provides; see the
//! module doc for the semantics and the eviction order.

use crate::sync::Ordering;

use super::cell::{
    leaving, owner, payload_of, same_owner, state_word, unmarked, KeyCell, BUCKET_CELLS,
};
use super::decision::{count_step, step, KeyCount, KeyDecision, Step};
use super::eviction::Claim;
use super::hash::{buckets_of, fingerprint, hash};
use super::rule::{KeyRule, KeyRuleKind, Quota};
use super::storage::{KeyError, KeyStorage, KeyTableState, KeyTableStats, MAX_KEY_BUCKETS};
use super::window::CountOp;

/// A cell found for a key: its place among the key's candidates and the
/// key word seen there.
#[derive(Copy, Clone)]
pub(super) struct Found {
    pub(super) at: usize,
    pub(super) word: u64,
}

/// A key's candidate cells, in the order inserts try them: its first
/// bucket's, then its second's (none when the table has one bucket).
#[derive(Copy, Clone)]
pub(super) struct Candidates<'a> {
    first: &'a [KeyCell; BUCKET_CELLS],
    second: Option<&'a [KeyCell; BUCKET_CELLS]>,
}

impl<'a> Candidates<'a> {
    #[inline]
    pub(super) fn cells(self) -> impl Iterator<Item = (usize, &'a KeyCell)> {
        self.first
            .iter()
            .chain(self.second.into_iter().flatten())
            .enumerate()
    }

    #[inline]
    pub(super) fn cell(self, at: usize) -> &'a KeyCell {
        match (at.checked_sub(BUCKET_CELLS), self.second) {
            (Some(i), Some(second)) => &second[i % BUCKET_CELLS],
            _ => &self.first[at % BUCKET_CELLS],
        }
    }

    /// The cell holding `fp`, if any: the first bucket's line, then the
    /// second's.
    #[inline]
    pub(super) fn find(self, fp: u64) -> Option<Found> {
        self.cells().find_map(|(at, cell)| {
            let word = cell.key.load(Ordering::Acquire);
            (owner(word) == fp).then_some(Found { at, word })
        })
    }
}

/// Keys to per-key state under one rule, over caller storage of a fixed
/// number of buckets.
pub struct KeyTable<S: KeyStorage> {
    storage: S,
    pub(super) rule: KeyRule,
    own: KeyTableState,
}

impl<S: KeyStorage> KeyTable<S> {
    /// A view of `storage` deciding by `rule`.
    pub fn new(storage: S, rule: KeyRule) -> Result<KeyTable<S>, KeyError> {
        let n = storage.buckets().len();
        if n == 0 || n > MAX_KEY_BUCKETS {
            return Err(KeyError::InvalidCapacity);
        }
        Ok(KeyTable {
            storage,
            rule,
            own: KeyTableState::new(),
        })
    }

    /// The rule.
    pub fn rule(&self) -> &KeyRule {
        &self.rule
    }

    /// How many keys fit.
    pub fn capacity(&self) -> usize {
        self.storage.buckets().len() * BUCKET_CELLS
    }

    pub(super) fn counters(&self) -> &KeyTableState {
        self.storage.state().unwrap_or(&self.own)
    }

    /// Counts `decide`'s answers from now on ([`KeyTableStats::admitted`],
    /// `refused`), in every process of a shared table; see
    /// [`KeyTableState::count_decisions`] for why not from the start.
    pub fn count_decisions(&self) {
        self.counters().count_decisions();
    }

    /// The counters now.
    pub fn stats(&self) -> KeyTableStats {
        let c = self.counters();
        KeyTableStats {
            capacity: self.capacity() as u64,
            resident: c.resident.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            lossy_evictions: c.lossy_evictions.load(Ordering::Relaxed),
            admitted: c.decisions(true),
            refused: c.decisions(false),
        }
    }

    /// The index of a cell of this table among all its cells.
    pub(super) fn cell_index(&self, cell: &KeyCell) -> u64 {
        let base = self.storage.buckets().as_ptr() as usize;
        ((cell as *const KeyCell as usize - base) / core::mem::size_of::<KeyCell>()) as u64
    }

    /// The cell at `index`, if the table has one there.
    pub(super) fn cell_at(&self, index: u64) -> Option<&KeyCell> {
        let index = usize::try_from(index).ok()?;
        let bucket = self.storage.buckets().get(index / BUCKET_CELLS)?;
        Some(&bucket.cells[index % BUCKET_CELLS])
    }

    #[inline]
    pub(super) fn candidates(&self, key: &[u8]) -> (u64, Candidates<'_>) {
        let h = hash(key);
        let buckets = self.storage.buckets();
        let (first, second) = buckets_of(h, buckets.len());
        let candidates = Candidates {
            first: &buckets[first].cells,
            second: (second != first).then(|| &buckets[second].cells),
        };
        (fingerprint(h), candidates)
    }

    /// Decides a call of `cost` units for `key` at `now_ms`, taking them if
    /// admitted. A key not in the table gets a cell (see the module doc)
    /// unless its call is refused on a fresh state (a cost above the quota).
    #[inline(always)]
    pub fn decide(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, KeyError> {
        if cost == 0 {
            return Err(KeyError::ZeroCost);
        }
        let kind = self.rule.kind();
        let decision = self.run(key, Some(now_ms), |q, payload| {
            step(kind, q, payload, now_ms, cost)
        })?;
        self.counters().tally(key, decision.admitted);
        Ok(decision)
    }

    /// What [`KeyTable::decide`] would answer for a cost of 0: the key's
    /// remaining units and reset, nothing taken, no cell taken.
    pub fn peek(&self, key: &[u8], now_ms: u64) -> KeyDecision {
        let kind = self.rule.kind();
        let read = |q: &Quota, payload| step(kind, q, payload, now_ms, 0);
        let fresh = |_| read(self.rule.quota_of(fingerprint(hash(key))), 0).decision;
        self.run(key, None, read).unwrap_or_else(fresh)
    }

    /// Window rules: counts `units` for `key` in its window whatever the
    /// limit (a store's `incr` / `increment`), starting a window if it has
    /// none; the count after it and when the window ends. A key not in the
    /// table gets a cell.
    pub fn increment(&self, key: &[u8], now_ms: u64, units: u32) -> Result<KeyCount, KeyError> {
        if units == 0 {
            return Err(KeyError::ZeroCost);
        }
        self.count_op(key, now_ms, CountOp::Add(units as u64))
    }

    /// Window rules: takes up to `units` off the count of `key`'s live
    /// window, keeping the window (express-rate-limit's `decrement`); the
    /// count after it. No window, nothing taken; a count at its cap stays.
    pub fn decrement(&self, key: &[u8], now_ms: u64, units: u32) -> Result<KeyCount, KeyError> {
        if units == 0 {
            return Err(KeyError::ZeroCost);
        }
        self.count_op(key, now_ms, CountOp::Take(units as u64))
    }

    /// Window rules: `key`'s counts at `now_ms` (a store's `get` and
    /// `get_expiry`, or `get_sliding_window`), nothing taken.
    pub fn count(&self, key: &[u8], now_ms: u64) -> Result<KeyCount, KeyError> {
        self.count_op(key, now_ms, CountOp::Read)
    }

    fn count_op(&self, key: &[u8], now_ms: u64, op: CountOp) -> Result<KeyCount, KeyError> {
        let kind = self.rule.kind();
        if !matches!(kind, KeyRuleKind::FixedWindow | KeyRuleKind::SlidingWindow) {
            return Err(KeyError::NotWindow);
        }
        let claim_at = matches!(op, CountOp::Add(_)).then_some(now_ms);
        self.run(key, claim_at, |q, payload| {
            count_step(kind, q, payload, now_ms, op).unwrap_or(Step {
                payload,
                write: false,
                decision: KeyCount::default(),
            })
        })
    }

    /// Runs `f` on `key`'s state (0 when it has none), storing what it
    /// writes. A key not in the table gets a cell when `claim_at` (the
    /// time its candidates' debts are weighed at), else `f` reads a fresh
    /// state.
    #[inline]
    fn run<R>(
        &self,
        key: &[u8],
        claim_at: Option<u64>,
        f: impl Fn(&Quota, u64) -> Step<R>,
    ) -> Result<R, KeyError> {
        let (fp, candidates) = self.candidates(key);
        loop {
            let found = match (candidates.find(fp), claim_at) {
                (Some(found), _) => found,
                (None, None) => return Ok(f(self.rule.quota_of(fp), 0).decision),
                (None, Some(now_ms)) => {
                    // A call that leaves a fresh state as it is (refused: a
                    // cost above the quota) needs no cell, and so evicts
                    // no other key.
                    let fresh = f(self.rule.quota_of(fp), 0);
                    if !fresh.write {
                        return Ok(fresh.decision);
                    }
                    match self.claim(candidates, fp, now_ms) {
                        Claim::Got(found) => found,
                        Claim::Retry => continue,
                        Claim::Full => return Err(KeyError::TableFull),
                    }
                }
            };
            let cell = candidates.cell(found.at);
            if let Some(decision) = self.apply(cell, found.word, &f) {
                return Ok(decision);
            }
        }
    }

    /// Runs `f` on a cell whose key word was `word`: `None` if the cell
    /// changed hands before the write took effect (the caller starts over,
    /// so no decision is lost with an evicted state).
    #[inline]
    fn apply<R>(
        &self,
        cell: &KeyCell,
        word: u64,
        f: &impl Fn(&Quota, u64) -> Step<R>,
    ) -> Option<R> {
        if leaving(word) {
            // A claim is checking that the key holds no units: a call of
            // the key cancels it (the key is in use), then looks again.
            let _ = cell.key.compare_exchange(
                word,
                unmarked(word),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            return None;
        }
        let quota = self.rule.quota_of(owner(word));
        loop {
            let state = cell.state.load(Ordering::Acquire);
            let payload = match payload_of(state, word) {
                Some(payload) => payload,
                // Another generation's state is a fresh key's only while the
                // cell is still ours: else it may be the next owner's.
                None if cell.key.load(Ordering::Acquire) != word => return None,
                None => 0,
            };
            let next = f(quota, payload);
            let new = state_word(word, next.payload);
            if !next.write || new == state {
                // Read at the load: the state was this owner's then.
                return Some(next.decision);
            }
            if cell
                .state
                .compare_exchange_weak(state, new, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            // A read-modify-write, not a load: either it sees a claim of the
            // cell, or that claim's read of the state sees this write (so
            // the eviction counts it, or an in-flight claim gives up), under
            // acquire/release alone.
            // A write into a cell given up is ignored by its next owner (a
            // new generation): the decision starts over.
            let now = cell.key.fetch_add(0, Ordering::AcqRel);
            return (now == word || self.cancel(cell, now, word)).then_some(next.decision);
        }
    }

    /// Cancels any leaving mark on `word`'s owner's cell, seen as `seen`:
    /// whether the cell is still that owner's (a mark cancelled by another
    /// call leaves it so, with another mark count).
    pub(super) fn cancel(&self, cell: &KeyCell, mut seen: u64, word: u64) -> bool {
        while same_owner(seen, word) {
            if !leaving(seen) {
                return true;
            }
            match cell.key.compare_exchange(
                seen,
                unmarked(seen),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(actual) => seen = actual,
            }
        }
        false
    }

    /// The checks of every in-flight call of `units` units (a take or a
    /// give-back). A count of 0 first, as `decide`, `increment` and
    /// `decrement` check it: the bindings judge it before the call, and C
    /// passes it in, so a release of 0 on another rule gets one message.
    pub(super) fn check_in_flight(&self, units: u32) -> Result<(), KeyError> {
        if units == 0 {
            return Err(KeyError::ZeroCost);
        }
        if self.rule.kind() != KeyRuleKind::InFlight {
            return Err(KeyError::NotInFlight);
        }
        Ok(())
    }

    /// Gives back `units` that an admitted call of an in-flight rule took
    /// for `key` (at most what it holds); whether it held any.
    pub fn release(&self, key: &[u8], units: u32) -> Result<bool, KeyError> {
        self.check_in_flight(units)?;
        let (fp, candidates) = self.candidates(key);
        // A cell whose owner holds units is never given up: its state stays
        // the owner's while any is held. (A key has two cells only after
        // two first calls raced: see `settle`.)
        let mut held_any = false;
        for (_, cell) in candidates.cells() {
            let word = cell.key.load(Ordering::Acquire);
            if owner(word) == fp && self.give_back(cell, word, units) {
                held_any = true;
                break;
            }
        }
        Ok(held_any)
    }

    /// Takes up to `units` off the units `word`'s owner holds in `cell`;
    /// whether it held any.
    fn give_back(&self, cell: &KeyCell, word: u64, units: u32) -> bool {
        let mut state = cell.state.load(Ordering::Acquire);
        loop {
            let held = payload_of(state, word).unwrap_or(0);
            if held == 0 {
                return false;
            }
            let new = state_word(word, held.saturating_sub(units as u64));
            match cell
                .state
                .compare_exchange_weak(state, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(actual) => state = actual,
            }
        }
    }

    /// Forgets every key, as [`KeyTable::reset`] forgets one (a store's
    /// `resetAll`, `limits`' `reset`): how many keys the table held. A key
    /// decided during the sweep may stay.
    pub fn reset_all(&self) -> u64 {
        let cells = self.storage.buckets().iter().flat_map(|b| b.cells.iter());
        let held = |cell: &KeyCell| {
            let word = cell.key.load(Ordering::Acquire);
            owner(word) != 0 && self.empty_cell(cell, word)
        };
        cells.filter(|cell| held(cell)).count() as u64
    }

    /// Forgets `key` (its next call starts fresh, units held included);
    /// whether it was held.
    pub fn reset(&self, key: &[u8]) -> bool {
        let (fp, candidates) = self.candidates(key);
        while let Some(found) = candidates.find(fp) {
            if self.empty_cell(candidates.cell(found.at), found.word) {
                return true;
            }
        }
        false
    }
}
