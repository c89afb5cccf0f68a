//! `KeyTable`: per-key state in buckets the caller provides; see the
//! module doc for the semantics and the eviction order.

use core::fmt;

use crate::error::ErrorCode;
use crate::sync::{const_fn, zeroed, AtomicU64, Ordering};

use super::cell::{
    emptied, leaving, marked, owner, payload_of, same_owner, state_word, taken, unmarked,
    KeyBucket, KeyCell, BUCKET_CELLS,
};
use super::decision::{debt, step, KeyDecision};
use super::hash::{buckets_of, fingerprint, hash};
use super::rule::{KeyRule, KeyRuleKind};

/// The most buckets a table may have (2^28 keys, 4 GiB of cells).
pub const MAX_KEY_BUCKETS: usize = 1 << 26;

/// Why a key table call was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// No buckets, or more than [`MAX_KEY_BUCKETS`] (`SDS_INVALID_CAPACITY`).
    InvalidCapacity,
    /// A cost of 0 (`SDS_INVALID_ARGUMENT`): [`KeyTable::peek`] reads
    /// without taking.
    ZeroCost,
    /// An in-flight table's new key found every candidate cell holding
    /// units (`SDS_TABLE_FULL`): nginx answers 503 there too.
    TableFull,
    /// [`KeyTable::release`] on a table whose rule is not in flight
    /// (`SDS_INVALID_ARGUMENT`).
    NotInFlight,
}

impl KeyError {
    /// The stable code.
    pub const fn code(&self) -> ErrorCode {
        match self {
            KeyError::InvalidCapacity => ErrorCode::InvalidCapacity,
            KeyError::ZeroCost | KeyError::NotInFlight => ErrorCode::InvalidArgument,
            KeyError::TableFull => ErrorCode::TableFull,
        }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::InvalidCapacity => write!(
                f,
                "a key table needs 1..={MAX_KEY_BUCKETS} buckets of {BUCKET_CELLS} keys"
            ),
            KeyError::ZeroCost => f.write_str("cost must be >= 1"),
            KeyError::TableFull => {
                f.write_str("key table is full: every cell the key may take holds units")
            }
            KeyError::NotInFlight => f.write_str("only an inFlight rule gives units back"),
        }
    }
}

/// A table's counters, kept beside its buckets: plain data (`repr(C)`,
/// integer atomics, one cache line). All zero is a fresh table's.
#[repr(C, align(64))]
pub struct KeyTableState {
    resident: AtomicU64,
    evictions: AtomicU64,
    lossy_evictions: AtomicU64,
    /// Unused (zero): the rest of the line.
    reserved: [AtomicU64; 5],
}

impl KeyTableState {
    const_fn! {
        /// A fresh table's counters.
        pub fn new() -> KeyTableState {
            KeyTableState {
                resident: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                lossy_evictions: AtomicU64::new(0),
                reserved: zeroed(),
            }
        }
    }
}

impl Default for KeyTableState {
    fn default() -> KeyTableState {
        KeyTableState::new()
    }
}

/// A table's counters read at once.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyTableStats {
    /// How many keys fit.
    pub capacity: u64,
    /// Cells holding a key (a process killed while taking or giving one
    /// up leaves this one off).
    pub resident: u64,
    /// Keys whose cell was given to another key.
    pub evictions: u64,
    /// Of those, keys whose state was not a fresh key's: their next call
    /// starts from a fresh state (the only way the table forgets a limit).
    pub lossy_evictions: u64,
}

/// Memory a key table lives in: its buckets, and its counters unless the
/// table keeps its own (`None`: every `AsRef<[KeyBucket]>`).
pub trait KeyStorage {
    /// The buckets.
    fn buckets(&self) -> &[KeyBucket];
    /// The counters kept next to the buckets, if any.
    fn state(&self) -> Option<&KeyTableState>;
}

impl<T: AsRef<[KeyBucket]>> KeyStorage for T {
    #[inline]
    fn buckets(&self) -> &[KeyBucket] {
        self.as_ref()
    }

    #[inline]
    fn state(&self) -> Option<&KeyTableState> {
        None
    }
}

/// Buckets and counters in memory shared with other views (a mapping).
#[derive(Copy, Clone)]
pub struct SharedKeys<'a> {
    /// The counters.
    pub state: &'a KeyTableState,
    /// The buckets.
    pub buckets: &'a [KeyBucket],
}

impl KeyStorage for SharedKeys<'_> {
    #[inline]
    fn buckets(&self) -> &[KeyBucket] {
        self.buckets
    }

    #[inline]
    fn state(&self) -> Option<&KeyTableState> {
        Some(self.state)
    }
}

/// A cell found for a key: its place among the key's candidates and the
/// key word seen there.
#[derive(Copy, Clone)]
struct Found {
    at: usize,
    word: u64,
}

/// What a claim got.
enum Claim {
    /// A cell for the key.
    Got(Found),
    /// Another call changed a cell first: look again.
    Retry,
    /// Every candidate holds in-flight units.
    Full,
}

/// A key's candidate cells, in the order inserts try them: its first
/// bucket's, then its second's (none when the table has one bucket).
#[derive(Copy, Clone)]
struct Candidates<'a> {
    first: &'a [KeyCell; BUCKET_CELLS],
    second: Option<&'a [KeyCell; BUCKET_CELLS]>,
}

impl<'a> Candidates<'a> {
    #[inline]
    fn cells(self) -> impl Iterator<Item = (usize, &'a KeyCell)> {
        self.first
            .iter()
            .chain(self.second.into_iter().flatten())
            .enumerate()
    }

    #[inline]
    fn cell(self, at: usize) -> &'a KeyCell {
        match (at.checked_sub(BUCKET_CELLS), self.second) {
            (Some(i), Some(second)) => &second[i % BUCKET_CELLS],
            _ => &self.first[at % BUCKET_CELLS],
        }
    }

    /// The cell holding `fp`, if any: the first bucket's line, then the
    /// second's.
    #[inline]
    fn find(self, fp: u64) -> Option<Found> {
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
    rule: KeyRule,
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

    fn counters(&self) -> &KeyTableState {
        self.storage.state().unwrap_or(&self.own)
    }

    /// The counters now.
    pub fn stats(&self) -> KeyTableStats {
        let c = self.counters();
        KeyTableStats {
            capacity: self.capacity() as u64,
            resident: c.resident.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            lossy_evictions: c.lossy_evictions.load(Ordering::Relaxed),
        }
    }

    #[inline]
    fn candidates(&self, key: &[u8]) -> (u64, Candidates<'_>) {
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
    /// admitted. A key not in the table gets a cell (see the module doc).
    #[inline]
    pub fn decide(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, KeyError> {
        if cost == 0 {
            return Err(KeyError::ZeroCost);
        }
        self.run(key, now_ms, cost)
    }

    /// What [`KeyTable::decide`] would answer for a cost of 0: the key's
    /// remaining units and reset, nothing taken, no cell taken.
    pub fn peek(&self, key: &[u8], now_ms: u64) -> KeyDecision {
        self.run(key, now_ms, 0)
            .unwrap_or_else(|_| self.fresh(key, now_ms))
    }

    fn fresh(&self, key: &[u8], now_ms: u64) -> KeyDecision {
        let quota = self.rule.quota_of(fingerprint(hash(key)));
        step(self.rule.kind(), quota, 0, now_ms, 0).decision
    }

    #[inline]
    fn run(&self, key: &[u8], now_ms: u64, cost: u32) -> Result<KeyDecision, KeyError> {
        let (fp, candidates) = self.candidates(key);
        loop {
            let found = match candidates.find(fp) {
                Some(found) => found,
                None if cost == 0 => return Ok(self.fresh(key, now_ms)),
                None => match self.claim(candidates, fp, now_ms) {
                    Claim::Got(found) => found,
                    Claim::Retry => continue,
                    Claim::Full => return Err(KeyError::TableFull),
                },
            };
            let cell = candidates.cell(found.at);
            if let Some(decision) = self.apply(cell, found.word, now_ms, cost) {
                return Ok(decision);
            }
        }
    }

    /// Decides on a cell whose key word was `word`: `None` if the cell
    /// changed hands before the decision took effect (the caller starts
    /// over, so no decision is lost with an evicted state).
    #[inline]
    fn apply(&self, cell: &KeyCell, word: u64, now_ms: u64, cost: u32) -> Option<KeyDecision> {
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
            let next = step(self.rule.kind(), quota, payload, now_ms, cost);
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
            let now = cell.key.fetch_add(0, Ordering::AcqRel);
            if now == word || (leaving(now) && self.cancel(cell, now, word)) {
                return Some(next.decision);
            }
            if self.rule.kind() == KeyRuleKind::InFlight {
                // Units taken in a cell given up are not held: put the
                // state back unless the next owner wrote its own.
                let _ =
                    cell.state
                        .compare_exchange(new, state, Ordering::AcqRel, Ordering::Acquire);
            }
            return None;
        }
    }

    /// Cancels the leaving mark on `word`'s owner's cell, seen as `seen`:
    /// whether the cell is still that owner's, unmarked.
    fn cancel(&self, cell: &KeyCell, mut seen: u64, word: u64) -> bool {
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

    /// Gives `fp` a cell among its candidates: a free one (empty, or with a
    /// fresh key's state) in the bucket with more free cells, else the one
    /// with the least debt, never one holding in-flight units. The key's own
    /// cell if another call just gave it one.
    #[inline(never)]
    fn claim(&self, candidates: Candidates<'_>, fp: u64, now_ms: u64) -> Claim {
        let mut least: Option<(u64, Found)> = None;
        // Per bucket: free cells, and the first of them.
        let mut free = [(0u32, None::<Found>); 2];
        for (at, cell) in candidates.cells() {
            let word = cell.key.load(Ordering::Acquire);
            let found = Found { at, word };
            let debt = match owner(word) {
                0 => 0,
                other if other == fp => return Claim::Got(found),
                other => self.debt_of(cell, word, other, now_ms),
            };
            if debt == 0 {
                let (count, first) = &mut free[at / BUCKET_CELLS];
                *count += 1;
                first.get_or_insert(found);
            } else if debt < u64::MAX && least.is_none_or(|(most, _)| debt < most) {
                least = Some((debt, found));
            }
        }
        let roomier = if free[1].0 > free[0].0 {
            free[1]
        } else {
            free[0]
        };
        let Some(victim) = roomier.1.or(least.map(|(_, found)| found)) else {
            return Claim::Full;
        };
        let cell = candidates.cell(victim.at);
        let old = owner(victim.word);
        let expected = match self.rule.kind() {
            KeyRuleKind::InFlight if old != 0 => match self.mark(cell, victim.word) {
                Some(mark) => mark,
                None => return Claim::Retry,
            },
            _ => victim.word,
        };
        let word = taken(expected, fp);
        if cell
            .key
            .compare_exchange(expected, word, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Claim::Retry;
        }
        let counters = self.counters();
        if old == 0 {
            counters.resident.fetch_add(1, Ordering::Relaxed);
        } else {
            counters.evictions.fetch_add(1, Ordering::Relaxed);
            // The state given up, read (by a read-modify-write, see
            // `apply`) after the cell changed hands: any call of the old
            // key that took effect is in it.
            // (In flight: the mark checked the owner held nothing; a unit
            // taken since is given back by its taker.)
            let state = cell.state.fetch_add(0, Ordering::AcqRel);
            let in_flight = self.rule.kind() == KeyRuleKind::InFlight;
            if !in_flight && self.debt_in(state, victim.word, old, now_ms) > 0 {
                counters.lossy_evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
        match self.settle(
            candidates,
            fp,
            Found {
                at: victim.at,
                word,
            },
        ) {
            Some(found) => Claim::Got(found),
            None => Claim::Retry,
        }
    }

    /// In-flight tables: marks a cell leaving, then checks (by a
    /// read-modify-write, see `apply`) that its owner holds no units. The
    /// mark to take the cell from, or `None` (the mark cancelled, or the
    /// owner holds units). A call of the owner that took units meanwhile
    /// sees the mark and cancels it; a mark left by a dead claim is taken
    /// over by the next.
    fn mark(&self, cell: &KeyCell, word: u64) -> Option<u64> {
        let mark = marked(word);
        cell.key
            .compare_exchange(word, mark, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        let state = cell.state.fetch_add(0, Ordering::AcqRel);
        if payload_of(state, word).unwrap_or(0) == 0 {
            return Some(mark);
        }
        let _ =
            cell.key
                .compare_exchange(mark, unmarked(mark), Ordering::AcqRel, Ordering::Acquire);
        None
    }

    /// After a claim: if another call put the key in another candidate at
    /// the same time, the earlier cell keeps it and the later is emptied.
    fn settle(&self, candidates: Candidates<'_>, fp: u64, mine: Found) -> Option<Found> {
        for (at, cell) in candidates.cells() {
            let word = cell.key.load(Ordering::Acquire);
            if at == mine.at || owner(word) != fp {
                continue;
            }
            if at < mine.at {
                if self.give_up(candidates.cell(mine.at), mine.word) {
                    return None;
                }
            } else {
                self.give_up(cell, word);
            }
        }
        Some(mine)
    }

    /// Empties a cell of `word`'s owner, unless (in flight) it holds units:
    /// then both cells stay, the earlier decides, and the later is freed
    /// once its units come back.
    fn give_up(&self, cell: &KeyCell, word: u64) -> bool {
        match self.rule.kind() {
            KeyRuleKind::InFlight => self
                .mark(cell, word)
                .is_some_and(|mark| self.empty_cell(cell, mark)),
            _ => self.empty_cell(cell, word),
        }
    }

    fn empty_cell(&self, cell: &KeyCell, word: u64) -> bool {
        let done = cell
            .key
            .compare_exchange(word, emptied(word), Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if done {
            self.counters().resident.fetch_sub(1, Ordering::Relaxed);
        }
        done
    }

    fn debt_of(&self, cell: &KeyCell, word: u64, fp: u64, now_ms: u64) -> u64 {
        self.debt_in(cell.state.load(Ordering::Acquire), word, fp, now_ms)
    }

    fn debt_in(&self, state: u64, word: u64, fp: u64, now_ms: u64) -> u64 {
        let quota = self.rule.quota_of(fp);
        let payload = payload_of(state, word).unwrap_or(0);
        debt(self.rule.kind(), quota, payload, now_ms)
    }

    /// Gives back `units` that an admitted call of an in-flight rule took
    /// for `key` (at most what it holds); whether it held any.
    pub fn release(&self, key: &[u8], units: u32) -> Result<bool, KeyError> {
        if self.rule.kind() != KeyRuleKind::InFlight {
            return Err(KeyError::NotInFlight);
        }
        if units == 0 {
            return Err(KeyError::ZeroCost);
        }
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
