//! How a new key gets a cell among its candidates, and how a cell is given
//! up (the module doc's Eviction, and the leaving mark of in-flight
//! tables).

use crate::sync::Ordering;

use super::cell::{emptied, marked, owner, payload_of, taken, unmarked, KeyCell, BUCKET_CELLS};
use super::decision::debt;
use super::rule::KeyRuleKind;
use super::storage::KeyStorage;
use super::table::{Candidates, Found, KeyTable};

/// What a claim got.
pub(super) enum Claim {
    /// A cell for the key.
    Got(Found),
    /// Another call changed a cell first: look again.
    Retry,
    /// Every candidate holds in-flight units.
    Full,
}

impl<S: KeyStorage> KeyTable<S> {
    /// Gives `fp` a cell among its candidates: a free one (empty, or with a
    /// fresh key's state) in the bucket with more free cells, else the one
    /// with the least debt, never one holding in-flight units. The key's own
    /// cell if another call just gave it one.
    #[inline(never)]
    pub(super) fn claim(&self, candidates: Candidates<'_>, fp: u64, now_ms: u64) -> Claim {
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
            // (In flight: the mark checked that the owner held nothing; a
            // call that took units since starts over in another cell.)
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

    pub(super) fn empty_cell(&self, cell: &KeyCell, word: u64) -> bool {
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
}
