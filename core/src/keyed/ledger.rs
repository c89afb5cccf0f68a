//! The ledger of an in-flight key table shared by processes: which process
//! holds which units, so that a process that dies holding some has them
//! given back, exactly once (the module doc's "In flight on shared
//! tables").
//!
//! Each process slot has a **row** of entries ([`KeyLedgerEntry`]); an
//! entry binds one cell (its index and the key word the units were taken
//! under) and counts the units its process holds there. An entry's *op
//! word* is `delta (32 bits) | negative (1) | state (2) | sequence (29)`,
//! its states free, binding, idle and pending; its *units word* is `units
//! (32) | sequence of the last step applied (32)`, so a step is applied
//! once whoever commits it.
//!
//! A step on a cell (a take or a give-back) is three compare-and-swaps:
//! 1. the entry goes pending with the step's delta and a new sequence;
//! 2. the cell's state changes by the delta and carries a **marker**
//!    naming the step (`slot + 1 (7 bits) | entry (10) | sequence (5)`,
//!    above the units held, in payload bits 32..54);
//! 3. the entry commits (its units word takes the delta unless it has
//!    the step's sequence already, then the op goes idle), then the marker
//!    is cleared.
//!
//! A cell's state holds at most one marker: any other step on the cell
//! first *helps* the marked one (commits its entry if still pending, then
//! clears the marker), so nothing waits on the process that left it. So an
//! entry pending with the step of a marker found in its cell (read after
//! the entry) has had its delta applied; a pending entry whose marker is
//! not in its cell has not (markers are cleared only after the commit, and
//! a step clears any stale marker of its entry before it goes pending).
//! Whoever holds a dead process's slot lock sweeps its row: resolves each
//! pending entry that way, gives back each idle entry's units by the same
//! three steps (as the dead process would), and frees the entries. A
//! sweeper killed midway leaves entries the next one resolves alike.
//!
//! A marker's sequence is 5 bits: a helper that stalls between reading a
//! marker and clearing it as stale, while the cell goes back to the very
//! same word with a new step of the same entry (32 steps of one entry,
//! the same units held), would clear a live marker; as the cells'
//! generations, this is far beyond what one stall lets happen.

use crate::sync::{const_fn, AtomicU64, Ordering};

use super::cell::{payload_of, same_owner, state_word, KeyCell};
use super::decision::KeyDecision;
use super::in_flight::{self, held};
use super::storage::{KeyError, KeyStorage};
use super::table::KeyTable;

/// The most process slots a ledger names (a marker keeps `slot + 1` in 7
/// bits).
pub const MAX_LEDGER_SLOTS: usize = 127;
/// The most entries in a process's row (a marker keeps the entry in 10
/// bits): a process holds units on at most about this many keys at once.
pub const MAX_LEDGER_ROW: usize = 1024;
/// Entries a process's step looks at for a cell, from the cell's place in
/// its row.
const PROBE: usize = 32;

const M32: u64 = (1 << 32) - 1;
const SEQ: u64 = (1 << 29) - 1;
const FREE: u64 = 0;
const BINDING: u64 = 1;
const IDLE: u64 = 2;
const PENDING: u64 = 3;

/// One entry of a process's ledger row: 32 bytes, `repr(C)`, integer
/// atomics; all zero is a free entry, any bit pattern is valid.
#[repr(C)]
pub struct KeyLedgerEntry {
    op: AtomicU64,
    cell: AtomicU64,
    key: AtomicU64,
    units: AtomicU64,
}

const _: () = assert!(core::mem::size_of::<KeyLedgerEntry>() == 32);

impl KeyLedgerEntry {
    const_fn! {
        /// A free entry.
        pub fn new() -> KeyLedgerEntry {
            KeyLedgerEntry {
                op: AtomicU64::new(0),
                cell: AtomicU64::new(0),
                key: AtomicU64::new(0),
                units: AtomicU64::new(0),
            }
        }
    }

    /// The units this entry counts held (0 unless idle or pending).
    pub fn units(&self) -> u64 {
        let op = Op(self.op.load(Ordering::Acquire));
        match op.state() {
            IDLE | PENDING => self.units.load(Ordering::Acquire) & M32,
            _ => 0,
        }
    }

    /// Applies `op`'s step to the units (once: the units word keeps the
    /// sequence of the last step applied), then makes the op idle.
    fn commit(&self, op: Op) {
        let mut units = self.units.load(Ordering::Acquire);
        while (units >> 32) & SEQ != op.seq() && self.op.load(Ordering::Acquire) == op.0 {
            let held = units & M32;
            let after = match op.negative() {
                true => held.saturating_sub(op.delta()),
                false => (held + op.delta()).min(M32),
            };
            let new = op.seq() << 32 | after;
            match self
                .units
                .compare_exchange(units, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => units = now,
            }
        }
        cas(&self.op, op.0, op.idle().0);
    }

    /// Makes a pending `op` idle, its step not applied (it did not take
    /// effect in the cell).
    fn cancel(&self, op: Op) {
        cas(&self.op, op.0, op.idle().0);
    }
}

impl Default for KeyLedgerEntry {
    fn default() -> KeyLedgerEntry {
        KeyLedgerEntry::new()
    }
}

/// The rows of every process slot of a table: `entries` holds
/// `entries.len() / row` rows of `row` entries, slot `s`'s first.
#[derive(Copy, Clone)]
pub struct KeyLedger<'a> {
    entries: &'a [KeyLedgerEntry],
    row: usize,
}

impl<'a> KeyLedger<'a> {
    /// Rows of `row` entries over `entries`; `None` unless `row` is 1 to
    /// [`MAX_LEDGER_ROW`] and the rows, whole, number 1 to
    /// [`MAX_LEDGER_SLOTS`].
    pub fn new(entries: &'a [KeyLedgerEntry], row: usize) -> Option<KeyLedger<'a>> {
        let slots = entries.len().checked_div(row)?;
        let fits = (1..=MAX_LEDGER_ROW).contains(&row)
            && (1..=MAX_LEDGER_SLOTS).contains(&slots)
            && slots * row == entries.len();
        fits.then_some(KeyLedger { entries, row })
    }

    /// Process slots.
    pub fn slots(&self) -> usize {
        self.entries.len() / self.row
    }

    /// Slot `slot`'s row.
    pub fn row(&self, slot: usize) -> &'a [KeyLedgerEntry] {
        &self.entries[slot * self.row..(slot + 1) * self.row]
    }

    /// The units slot `slot`'s row counts held.
    pub fn held_by(&self, slot: usize) -> u64 {
        self.row(slot).iter().map(KeyLedgerEntry::units).sum()
    }

    fn entry(&self, slot: usize, at: usize) -> Option<&'a KeyLedgerEntry> {
        (slot < self.slots() && at < self.row).then(|| &self.entries[slot * self.row + at])
    }
}

/// An entry's op word.
#[derive(Copy, Clone, PartialEq, Eq)]
struct Op(u64);

impl Op {
    fn new(state: u64, delta: u64, negative: bool, seq: u64) -> Op {
        Op((delta & M32) | (negative as u64) << 32 | state << 33 | (seq & SEQ) << 35)
    }
    fn delta(self) -> u64 {
        self.0 & M32
    }
    fn negative(self) -> bool {
        self.0 >> 32 & 1 == 1
    }
    fn state(self) -> u64 {
        (self.0 >> 33) & 3
    }
    fn seq(self) -> u64 {
        self.0 >> 35
    }
    fn next_seq(self) -> u64 {
        (self.seq() + 1) & SEQ
    }
    /// A new step of this entry: pending `delta`, the next sequence.
    fn pending(self, delta: u64, negative: bool) -> Op {
        Op::new(PENDING, delta, negative, self.next_seq())
    }
    /// The op idle, its sequence kept.
    fn idle(self) -> Op {
        Op::new(IDLE, 0, false, self.seq())
    }
    fn freed(self) -> Op {
        Op::new(FREE, 0, false, self.next_seq())
    }
}

/// A step's marker in a cell's payload (module doc), 0 for none.
fn marker(slot: usize, at: usize, seq: u64) -> u64 {
    (slot as u64 + 1) | (at as u64) << 7 | (seq & 31) << 17
}

fn marker_in(payload: u64) -> u64 {
    payload >> 32
}

/// A marker's slot, entry and sequence (5 bits).
fn parse(marker: u64) -> (usize, usize, u64) {
    (
        ((marker & 0x7f) as usize).wrapping_sub(1),
        (marker >> 7 & 0x3ff) as usize,
        marker >> 17 & 31,
    )
}

fn cas(word: &AtomicU64, old: u64, new: u64) -> bool {
    word.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Where a step found its entry: its place and op word (idle).
struct Entry<'a> {
    at: usize,
    entry: &'a KeyLedgerEntry,
    op: Op,
}

impl<S: KeyStorage> KeyTable<S> {
    /// [`KeyTable::decide`] for an in-flight table whose processes keep a
    /// [`KeyLedger`]: the units taken are counted in `slot`'s row first.
    /// [`KeyError::LedgerFull`] if the row has no entry left for the key.
    pub fn decide_ledgered(
        &self,
        ledger: &KeyLedger<'_>,
        slot: usize,
        key: &[u8],
        cost: u32,
    ) -> Result<KeyDecision, KeyError> {
        self.check_in_flight(cost)?;
        let (fp, candidates) = self.candidates(key);
        let quota = self.rule.quota_of(fp);
        if cost > quota.limit {
            // Never admitted: no cell taken, no entry.
            let found = candidates.find(fp);
            let payload = found.and_then(|f| {
                payload_of(candidates.cell(f.at).state.load(Ordering::Acquire), f.word)
            });
            let decision = in_flight::step(quota, payload.unwrap_or(0), cost).decision;
            self.counters().tally(key, decision.admitted);
            return Ok(decision);
        }
        loop {
            let found = match candidates.find(fp) {
                Some(found) => found,
                None => match self.claim(candidates, fp, 0) {
                    super::eviction::Claim::Got(found) => found,
                    super::eviction::Claim::Retry => continue,
                    super::eviction::Claim::Full => return Err(KeyError::TableFull),
                },
            };
            let cell = candidates.cell(found.at);
            if super::cell::leaving(found.word) {
                // A claim checks the key holds nothing: the key is in use.
                let _ = cas(&cell.key, found.word, super::cell::unmarked(found.word));
                continue;
            }
            if let Some(decision) = self.take(ledger, slot, cell, found.word, cost)? {
                self.counters().tally(key, decision.admitted);
                return Ok(decision);
            }
        }
    }

    /// Takes `cost` units in `cell` (key word `word`) for `slot`: `None` if
    /// the cell changed hands first (start over).
    fn take(
        &self,
        ledger: &KeyLedger<'_>,
        slot: usize,
        cell: &KeyCell,
        word: u64,
        cost: u32,
    ) -> Result<Option<KeyDecision>, KeyError> {
        let index = self.cell_index(cell);
        let Entry { at, entry, op } = self.reserve(ledger, slot, index, word)?;
        self.clear_marker(cell, word, slot, at);
        let pending = op.pending(cost as u64, false);
        if !cas(&entry.op, op.0, pending.0) {
            return Ok(None);
        }
        let mark = marker(slot, at, pending.seq()) << 32;
        let quota = self.rule.quota_of(super::cell::owner(word));
        loop {
            let state = cell.state.load(Ordering::Acquire);
            let payload = match payload_of(state, word) {
                Some(payload) => payload,
                None if cell.key.load(Ordering::Acquire) != word => {
                    entry.cancel(pending);
                    return Ok(None);
                }
                None => 0,
            };
            if marker_in(payload) != 0 {
                self.help(ledger, cell, index, word, state);
                continue;
            }
            let step = in_flight::step(quota, payload, cost);
            if !step.decision.admitted {
                entry.cancel(pending);
                return Ok(Some(step.decision));
            }
            if crashed(Crash::TakeLedgered) {
                return Ok(Some(step.decision));
            }
            let new = state_word(word, step.payload | mark);
            if !cas(&cell.state, state, new) {
                continue;
            }
            if crashed(Crash::TakeInCell) {
                return Ok(Some(step.decision));
            }
            // As `apply`: a read-modify-write that sees a claim of the cell,
            // or whose write that claim's read of the state sees.
            let now = cell.key.fetch_add(0, Ordering::AcqRel);
            let ours = now == word || self.cancel(cell, now, word);
            entry.commit(pending);
            if crashed(Crash::TakeCommitted) {
                return Ok(Some(step.decision));
            }
            cas(&cell.state, new, state_word(word, step.payload));
            // Units taken in a cell given up count for no key: the entry
            // is void (freed when its row needs room, or swept).
            return Ok(ours.then_some(step.decision));
        }
    }

    /// An idle entry of `slot`'s row bound to cell `index` under `word`
    /// (units 0 if new), among the [`PROBE`] entries from the cell's place.
    fn reserve<'l>(
        &self,
        ledger: &KeyLedger<'l>,
        slot: usize,
        index: u64,
        word: u64,
    ) -> Result<Entry<'l>, KeyError> {
        let row = ledger.row(slot);
        for sweep_void in [false, true] {
            let mut free = None;
            for at in probe(index, row.len()) {
                let entry = &row[at];
                let op = Op(entry.op.load(Ordering::Acquire));
                match op.state() {
                    IDLE if self.bound(entry, op, index, word) => {
                        return Ok(Entry { at, entry, op });
                    }
                    IDLE if sweep_void
                        && self.void(entry)
                        && self.free_entry(slot, at, entry, op) =>
                    {
                        free.get_or_insert((at, op.freed()));
                    }
                    // The first free entry ends the look: a key's entry
                    // past it (placed before it was freed) may get a twin
                    // here, which releases and sweeps find too.
                    FREE if !sweep_void => {
                        free = Some((at, op));
                        break;
                    }
                    FREE => {
                        free.get_or_insert((at, op));
                    }
                    _ => {}
                }
            }
            if let Some((at, op)) = free {
                let entry = &row[at];
                let binding = Op::new(BINDING, 0, false, op.next_seq());
                if cas(&entry.op, op.0, binding.0) {
                    entry.cell.store(index, Ordering::Relaxed);
                    entry.key.store(word, Ordering::Relaxed);
                    entry.units.store(binding.seq() << 32, Ordering::Relaxed);
                    let idle = binding.idle();
                    entry.op.store(idle.0, Ordering::Release);
                    return Ok(Entry {
                        at,
                        entry,
                        op: idle,
                    });
                }
            }
        }
        Err(KeyError::LedgerFull)
    }

    /// Whether `entry`, read as `op`, is bound to cell `index` under
    /// `word`'s owner (a binding changes only with the op's sequence).
    fn bound(&self, entry: &KeyLedgerEntry, op: Op, index: u64, word: u64) -> bool {
        entry.cell.load(Ordering::Acquire) == index
            && same_owner(entry.key.load(Ordering::Acquire), word)
            && entry.op.load(Ordering::Acquire) == op.0
    }

    /// Whether an idle entry counts nothing, or units in a cell that is no
    /// longer its key's.
    fn void(&self, entry: &KeyLedgerEntry) -> bool {
        let key = entry.key.load(Ordering::Acquire);
        entry.units() == 0
            || self
                .cell_at(entry.cell.load(Ordering::Acquire))
                .is_none_or(|cell| !same_owner(cell.key.load(Ordering::Acquire), key))
    }

    /// Frees an idle entry, clearing its marker first (a marker names an
    /// entry only while it is bound to the marked cell).
    fn free_entry(&self, slot: usize, at: usize, entry: &KeyLedgerEntry, op: Op) -> bool {
        let key = entry.key.load(Ordering::Acquire);
        if let Some(cell) = self.cell_at(entry.cell.load(Ordering::Acquire)) {
            self.clear_marker(cell, key, slot, at);
        }
        cas(&entry.op, op.0, op.freed().0)
    }

    /// Clears a marker of `slot`'s entry `at` left in `cell`'s state of
    /// `word`'s owner (its step committed).
    fn clear_marker(&self, cell: &KeyCell, word: u64, slot: usize, at: usize) {
        loop {
            let state = cell.state.load(Ordering::Acquire);
            let Some(payload) = payload_of(state, word) else {
                return;
            };
            let m = marker_in(payload);
            if m == 0 || parse(m).0 != slot || parse(m).1 != at {
                return;
            }
            if cas(&cell.state, state, state_word(word, held(payload))) {
                return;
            }
        }
    }

    /// Helps the step marked in `cell`'s `state` (of `word`'s owner, at
    /// cell `index`): commits its entry if it is still pending, then clears
    /// the marker.
    fn help(&self, ledger: &KeyLedger<'_>, cell: &KeyCell, index: u64, word: u64, state: u64) {
        let payload = payload_of(state, word).unwrap_or(0);
        let m = marker_in(payload);
        if m == 0 {
            return;
        }
        let (slot, at, seq) = parse(m);
        if let Some(entry) = ledger.entry(slot, at) {
            let op = Op(entry.op.load(Ordering::Acquire));
            let ours = op.state() == PENDING
                && op.seq() & 31 == seq
                && entry.cell.load(Ordering::Acquire) == index
                && same_owner(entry.key.load(Ordering::Acquire), word);
            // The marker still there after the entry was read: the entry's
            // step is the marked one, its delta in the cell.
            if ours && cell.state.load(Ordering::Acquire) == state {
                entry.commit(op);
            }
        }
        cas(&cell.state, state, state_word(word, held(payload)));
    }

    /// [`KeyTable::release`] for a ledgered table: gives back up to `units`
    /// that `slot`'s process holds for `key` (a process gives back only
    /// units it took); whether it held any.
    pub fn release_ledgered(
        &self,
        ledger: &KeyLedger<'_>,
        slot: usize,
        key: &[u8],
        units: u32,
    ) -> Result<bool, KeyError> {
        self.check_in_flight(units)?;
        let (fp, candidates) = self.candidates(key);
        let row = ledger.row(slot);
        let mut left = units as u64;
        for (_, cell) in candidates.cells() {
            let word = cell.key.load(Ordering::Acquire);
            if super::cell::owner(word) != fp {
                continue;
            }
            let index = self.cell_index(cell);
            for at in probe(index, row.len()) {
                if left == 0 {
                    return Ok(true);
                }
                let entry = &row[at];
                // Another cell's entry may be pending for another thread:
                // only this cell's are waited for.
                if entry.cell.load(Ordering::Acquire) != index
                    || !same_owner(entry.key.load(Ordering::Acquire), word)
                {
                    continue;
                }
                let bound = |op: Op| self.bound(entry, op, index, word);
                left -= self.give_back_entry(ledger, slot, at, left, true, bound);
            }
        }
        Ok(left < units as u64)
    }

    /// Gives back up to `most` units `slot`'s entry `at` holds, if `bound`
    /// (the entry read idle) as that slot's step: how many. `live`: the
    /// slot's process runs (this is one of its threads: a pending entry is
    /// another thread's step, waited for); else the slot is swept, and a
    /// pending entry is resolved.
    fn give_back_entry(
        &self,
        ledger: &KeyLedger<'_>,
        slot: usize,
        at: usize,
        most: u64,
        live: bool,
        bound: impl Fn(Op) -> bool,
    ) -> u64 {
        let Some(entry) = ledger.entry(slot, at) else {
            return 0;
        };
        loop {
            let op = Op(entry.op.load(Ordering::Acquire));
            match op.state() {
                PENDING if live => {
                    core::hint::spin_loop();
                    continue;
                }
                PENDING => {
                    self.resolve(slot, at, entry, op);
                    continue;
                }
                IDLE if bound(op) => {}
                _ => return 0,
            }
            let key = entry.key.load(Ordering::Acquire);
            let cell = self.cell_at(entry.cell.load(Ordering::Acquire));
            let Some(cell) = cell.filter(|c| same_owner(c.key.load(Ordering::Acquire), key)) else {
                // Its cell was given up (reset): the units count for no key.
                self.free_entry(slot, at, entry, op);
                return 0;
            };
            let units = entry.units.load(Ordering::Acquire) & M32;
            let d = most.min(units);
            if d == 0 {
                if units == 0 {
                    self.free_entry(slot, at, entry, op);
                }
                return 0;
            }
            self.clear_marker(cell, key, slot, at);
            let pending = op.pending(d, true);
            if !cas(&entry.op, op.0, pending.0) {
                continue;
            }
            let mark = marker(slot, at, pending.seq()) << 32;
            let index = self.cell_index(cell);
            loop {
                let state = cell.state.load(Ordering::Acquire);
                let Some(payload) = payload_of(state, key) else {
                    // Another owner's state: the units count for no key.
                    entry.cancel(pending);
                    self.free_entry(slot, at, entry, pending.idle());
                    return 0;
                };
                if marker_in(payload) != 0 {
                    self.help(ledger, cell, index, key, state);
                    continue;
                }
                if crashed(Crash::GiveLedgered) {
                    return d;
                }
                let left = held(payload).saturating_sub(d);
                let new = state_word(key, left | mark);
                if !cas(&cell.state, state, new) {
                    continue;
                }
                if crashed(Crash::GiveInCell) {
                    return d;
                }
                entry.commit(pending);
                if crashed(Crash::GiveCommitted) {
                    return d;
                }
                cas(&cell.state, new, state_word(key, left));
                if entry.units.load(Ordering::Acquire) & M32 == 0 {
                    self.free_entry(slot, at, entry, pending.idle());
                }
                return d;
            }
        }
    }

    /// Resolves a dead slot's pending entry: committed if its marker is in
    /// its cell (the step took effect), else cancelled; the marker cleared.
    fn resolve(&self, slot: usize, at: usize, entry: &KeyLedgerEntry, op: Op) {
        let key = entry.key.load(Ordering::Acquire);
        let Some(cell) = self.cell_at(entry.cell.load(Ordering::Acquire)) else {
            entry.cancel(op);
            return;
        };
        let state = cell.state.load(Ordering::Acquire);
        let mark = marker(slot, at, op.seq());
        let placed = payload_of(state, key).is_some_and(|p| marker_in(p) == mark);
        match placed {
            true => entry.commit(op),
            false => entry.cancel(op),
        }
        self.clear_marker(cell, key, slot, at);
    }

    /// Gives back every unit `slot`'s row holds and frees its entries: the
    /// row of a process that died, by a caller that holds its slot (so no
    /// other sweeps it at once), or a process's own row when it detaches
    /// (no thread of it deciding). The units given back.
    pub fn sweep_ledger(&self, ledger: &KeyLedger<'_>, slot: usize) -> u64 {
        let mut returned = 0;
        if slot >= ledger.slots() {
            return 0;
        }
        for (at, entry) in ledger.row(slot).iter().enumerate() {
            loop {
                let op = Op(entry.op.load(Ordering::Acquire));
                match op.state() {
                    FREE => break,
                    BINDING => {
                        cas(&entry.op, op.0, op.freed().0);
                    }
                    PENDING => self.resolve(slot, at, entry, op),
                    _ if entry.units() == 0 => {
                        self.free_entry(slot, at, entry, op);
                    }
                    _ => {
                        let units = entry.units();
                        let same = |now: Op| now == op;
                        returned += self.give_back_entry(ledger, slot, at, units, false, same);
                    }
                }
            }
        }
        returned
    }
}

/// The entries a step for cell `index` looks at in a row of `len`.
fn probe(index: u64, len: usize) -> impl Iterator<Item = usize> {
    let start = (index.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize % len;
    (0..PROBE.min(len)).map(move |i| (start + i) % len)
}

/// Where a unit test's thread stops as if its process were killed there.
#[cfg(all(test, not(loom)))]
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Crash {
    None,
    TakeLedgered,
    TakeInCell,
    TakeCommitted,
    GiveLedgered,
    GiveInCell,
    GiveCommitted,
}

#[cfg(all(test, not(loom)))]
std::thread_local! {
    pub(crate) static CRASH: core::cell::Cell<Crash> = const { core::cell::Cell::new(Crash::None) };
}

#[cfg(all(test, not(loom)))]
fn crashed(at: Crash) -> bool {
    CRASH.with(|c| c.get() == at)
}

#[cfg(not(all(test, not(loom))))]
#[derive(Copy, Clone)]
enum Crash {
    TakeLedgered,
    TakeInCell,
    TakeCommitted,
    GiveLedgered,
    GiveInCell,
    GiveCommitted,
}

#[cfg(not(all(test, not(loom))))]
#[inline(always)]
fn crashed(_: Crash) -> bool {
    false
}
