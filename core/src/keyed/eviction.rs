//! How a new key gets a cell among its candidates, and how a cell is given
//! up (the module doc's Eviction, and the leaving mark of in-flight
//! tables).

use crate::sync::Ordering;

use super::cell::{
    emptied, marked, owner, payload_of, same_owner, taken, unmarked, KeyCell, BUCKET_CELLS,
};
use super::decision::debt;
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
        // A key's cell that looked free is taken only if it still is: its
        // owner may have decided in it since its state was read (a lossy
        // eviction where free cells were left). In flight, every victim
        // is one holding no units.
        let checked = roomier.1.is_some() && old != 0;
        let expected = match checked {
            true => {
                let free = |payload| self.debt_in_payload(payload, old, now_ms) == 0;
                match self.mark(cell, victim.word, free) {
                    Some(mark) => mark,
                    None => return Claim::Retry,
                }
            }
            false => victim.word,
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
            // A cell checked free by the mark lost nothing: a call of the
            // old key that decided since starts over in another cell.
            // Else the state given up, read (by a read-modify-write, see
            // `apply`) after the cell changed hands: any call of the old
            // key that took effect is in it.
            if !checked && self.debt_of_now(cell, victim.word, old, now_ms) > 0 {
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

    /// Marks a cell leaving, then checks (by a read-modify-write, see
    /// `apply`) that its owner's payload is still `fresh` (a claim: free,
    /// no debt and in flight no units; `settle`: no call decided in it;
    /// the same test as seen after every decision of the owner that took
    /// effect before the mark). The mark to
    /// take the cell from, or `None` (the mark cancelled, or the state not
    /// fresh). A call of the owner that decided meanwhile sees the mark and
    /// cancels it; a mark left by a dead claim is taken over by the next.
    fn mark(&self, cell: &KeyCell, word: u64, fresh: impl Fn(u64) -> bool) -> Option<u64> {
        let mark = marked(word);
        cell.key
            .compare_exchange(word, mark, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        let state = cell.state.fetch_add(0, Ordering::AcqRel);
        if fresh(payload_of(state, word).unwrap_or(0)) {
            return Some(mark);
        }
        let _ =
            cell.key
                .compare_exchange(mark, unmarked(mark), Ordering::AcqRel, Ordering::Acquire);
        None
    }

    /// After a claim: if another call put the key in another candidate at
    /// the same time, one of the two cells is given up, and only one that
    /// no call has decided in (its state still a fresh key's): the later of
    /// the two if so, else the earlier. Calls that found the later before
    /// the earlier was claimed may have decided there already, so emptying
    /// it outright could lose their decisions. If both hold decisions, both
    /// stay and the earlier decides (the module doc's Edges). Mine, unless
    /// it was given up (here or by the other call's settle).
    pub(super) fn settle(&self, candidates: Candidates<'_>, fp: u64, mine: Found) -> Option<Found> {
        for (at, cell) in candidates.cells() {
            let word = cell.key.load(Ordering::Acquire);
            if at == mine.at || owner(word) != fp {
                continue;
            }
            let (earlier, later) = match at < mine.at {
                true => ((cell, word), (candidates.cell(mine.at), mine.word)),
                false => ((candidates.cell(mine.at), mine.word), (cell, word)),
            };
            if !self.give_up(later.0, later.1) {
                self.give_up(earlier.0, earlier.1);
            }
        }
        let word = candidates.cell(mine.at).key.load(Ordering::Acquire);
        same_owner(word, mine.word).then_some(Found { at: mine.at, word })
    }

    /// Empties a cell of `word`'s owner if its state is still a fresh
    /// key's (nothing decided in it; in flight: no units held), by the
    /// leaving mark: a call that decides in it meanwhile cancels the mark,
    /// so the cell stays.
    fn give_up(&self, cell: &KeyCell, word: u64) -> bool {
        self.mark(cell, word, |payload| payload == 0)
            .is_some_and(|mark| self.empty_cell(cell, mark))
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

    fn debt_of_now(&self, cell: &KeyCell, word: u64, fp: u64, now_ms: u64) -> u64 {
        self.debt_in(cell.state.fetch_add(0, Ordering::AcqRel), word, fp, now_ms)
    }

    fn debt_of(&self, cell: &KeyCell, word: u64, fp: u64, now_ms: u64) -> u64 {
        self.debt_in(cell.state.load(Ordering::Acquire), word, fp, now_ms)
    }

    fn debt_in(&self, state: u64, word: u64, fp: u64, now_ms: u64) -> u64 {
        self.debt_in_payload(payload_of(state, word).unwrap_or(0), fp, now_ms)
    }

    fn debt_in_payload(&self, payload: u64, fp: u64, now_ms: u64) -> u64 {
        debt(self.rule.kind(), self.rule.quota_of(fp), payload, now_ms)
    }
}
