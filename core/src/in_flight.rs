//! A point's requests in flight: one word that takes and returns permits by
//! compare-and-swap, and that a recount can make exact again from the
//! ledger rows (ledger.rs) after a process died.
//!
//! The word: the count (low 24 bits), the epoch of the last recount (7
//! bits), and a frozen bit (the top one). A recount, holding the table's
//! recount word (owner.rs; one recount at a time per table):
//!
//! 1. freezes the word (nobody takes or returns a permit of the point);
//! 2. reads every live process's counter of the point, tagging each with
//!    the new epoch (`Held::read_for`), and sums them;
//! 3. thaws the word to that sum, at the new epoch.
//!
//! A thread that read the word before a recount and acts after it sees its
//! compare-and-swap fail on the changed epoch, and asks its row's tag
//! whether the recount counted its step: the tag is the recount's epoch
//! only if the recount read the row after the step. Then it settles so the
//! count stays exact:
//!
//! - an acquire the recount counted already holds its permit (it gives it
//!   back at once if that permit put the point over its threshold);
//! - a refusal's undo, or a release, that a recount counted (its row still
//!   held the permit when read) takes that permit out of `in_flight`, as
//!   long as the word is still at that recount's epoch: a later recount read
//!   the row without it.
//!
//! A recounter that dies leaves the word frozen: a waiter that has spun for
//! a while takes the recount word from it (owner.rs) and thaws the word as
//! it was, at an epoch no row is tagged with (the dead one's next plus one),
//! so no thread takes that unfinished recount for one that counted it. A
//! recount that finds the word already frozen (its holder died) uses that
//! epoch too. Epochs wrap after 128 recounts: a thread would have to stay
//! descheduled between two instructions for that many to be fooled.

use crate::ledger::Held;
use crate::owner::{Holder, Transition, SPINS_BEFORE_ASKING};
use crate::sync::{const_fn, spin, AtomicU32, Ordering};

const COUNT_MASK: u32 = (1 << 24) - 1;
/// The most permits a point holds at once.
pub(crate) const MAX_COUNT: u32 = COUNT_MASK;
const EPOCH_SHIFT: u32 = 24;
const EPOCH_MASK: u32 = 0x7f;
const FROZEN: u32 = 1 << 31;
/// Everything but the count: a change here means a recount began.
const RECOUNT_BITS: u32 = !COUNT_MASK;

#[inline]
fn epoch_of(word: u32) -> u32 {
    (word >> EPOCH_SHIFT) & EPOCH_MASK
}

#[inline]
fn word(count: u32, epoch: u32) -> u32 {
    count | (epoch & EPOCH_MASK) << EPOCH_SHIFT
}

/// The requests of one point holding a concurrency permit (module doc).
#[repr(transparent)]
pub(crate) struct InFlight(AtomicU32);

impl InFlight {
    const_fn! {
        pub(crate) fn new() -> InFlight {
            InFlight(AtomicU32::new(0))
        }
    }

    /// Requests holding a permit now.
    #[inline]
    pub(crate) fn count(&self) -> u32 {
        self.0.load(Ordering::Acquire) & COUNT_MASK
    }

    /// Takes a permit unless `limit` (negative: none) is reached, counting
    /// it in `row` first. `Ok(count with it)` or `Err(count seen)`.
    #[inline(always)]
    pub(crate) fn acquire(
        &self,
        limit: i64,
        row: Option<&Held>,
        holder: &Holder<'_>,
    ) -> Result<u32, u32> {
        // Read before the row's add: a recount between the two would change
        // the word, and the compare-and-swap below would see it.
        let mut w = self.0.load(Ordering::Acquire);
        let mut base = None;
        loop {
            let held = w & COUNT_MASK;
            if w & FROZEN != 0 {
                w = self.thawed(holder);
                continue;
            }
            if (limit >= 0 && held as i64 >= limit) || held == MAX_COUNT {
                if let (Some(row), Some(base)) = (row, base) {
                    holder.reached(Transition::Acquire, 1);
                    self.undo(row, base, holder);
                }
                return Err(held);
            }
            if let (Some(r), None) = (row, base) {
                base = Some(r.add());
                holder.reached(Transition::Acquire, 0);
            }
            match self
                .0
                .compare_exchange_weak(w, w + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(held + 1),
                Err(seen) => match (row, base) {
                    (Some(row), Some(base)) if (seen ^ w) & RECOUNT_BITS != 0 => {
                        match self.after_recount(limit, row, base, holder) {
                            Ok(done) => return done,
                            Err(thawed) => w = thawed,
                        }
                    }
                    _ => w = seen,
                },
            }
        }
    }

    /// An acquire whose row's add came before a recount that began after
    /// its read: whether it holds its permit now (`Ok`, settled), or the
    /// word to try again from (`Err`: the recount did not count it).
    #[cold]
    #[inline(never)]
    fn after_recount(
        &self,
        limit: i64,
        row: &Held,
        base: u32,
        holder: &Holder<'_>,
    ) -> Result<Result<u32, u32>, u32> {
        let w = self.thawed(holder);
        // The tag after the word: a recount that tags the row later changes
        // the word, and the caller's compare-and-swap from `w` fails.
        let tag = row.tag();
        if tag == base || tag != epoch_of(w) {
            return Err(w);
        }
        let held = w & COUNT_MASK;
        if limit >= 0 && held as i64 > limit {
            self.release(Some(row), holder);
            return Ok(Err(held - 1));
        }
        Ok(Ok(held))
    }

    /// Takes back a refused acquire's add to `row`, whose tag was `base`.
    #[cold]
    #[inline(never)]
    fn undo(&self, row: &Held, base: u32, holder: &Holder<'_>) {
        let tag = row.remove();
        if tag != base {
            self.uncount(tag, holder);
        }
    }

    /// Returns a permit, then uncounts it from `row`; never below zero, even
    /// for a forged entry.
    #[inline]
    pub(crate) fn release(&self, row: Option<&Held>, holder: &Holder<'_>) {
        let mut w = self.0.load(Ordering::Acquire);
        let before = loop {
            if w & FROZEN != 0 {
                w = self.thawed(holder);
                continue;
            }
            if w & COUNT_MASK == 0 {
                break None;
            }
            // The tag after the word, as in `after_recount`.
            let tag = row.map(Held::tag);
            match self
                .0
                .compare_exchange_weak(w, w - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break tag,
                Err(seen) => w = seen,
            }
        };
        if let Some(row) = row {
            holder.reached(Transition::Release, 0);
            let tag = row.remove();
            if before.is_some_and(|before| before != tag) {
                self.uncount(tag, holder);
            }
        }
    }

    /// Takes out of the count a permit that the recount of `epoch` counted
    /// from a row after it had left `in_flight`, unless a later recount has
    /// made the count again.
    #[cold]
    #[inline(never)]
    fn uncount(&self, epoch: u32, holder: &Holder<'_>) {
        let mut w = self.0.load(Ordering::Acquire);
        loop {
            if w & FROZEN != 0 {
                w = self.thawed(holder);
                continue;
            }
            if epoch_of(w) != epoch || w & COUNT_MASK == 0 {
                return;
            }
            match self
                .0
                .compare_exchange_weak(w, w - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => w = seen,
            }
        }
    }

    /// The word once no recount freezes it; thaws it when its recounter
    /// died (module doc).
    #[cold]
    #[inline(never)]
    fn thawed(&self, holder: &Holder<'_>) -> u32 {
        let mut spins = 0u32;
        loop {
            let w = self.0.load(Ordering::Acquire);
            if w & FROZEN == 0 {
                return w;
            }
            spin();
            spins = spins.wrapping_add(1);
            if spins % SPINS_BEFORE_ASKING == 0 {
                self.thaw_orphan(holder);
            }
        }
    }

    /// Thaws the word as it was if no live recounter holds the recount word.
    fn thaw_orphan(&self, holder: &Holder<'_>) {
        let Some(recounter) = holder.recounter else {
            // A point outside a table: nothing recounts it.
            self.thaw_as_was();
            return;
        };
        if holder.try_take(recounter) || holder.take_from_dead(recounter) {
            self.thaw_as_was();
            holder.give_back(recounter);
        }
    }

    fn thaw_as_was(&self) {
        let w = self.0.load(Ordering::Acquire);
        if w & FROZEN != 0 {
            let thawed = word(w & COUNT_MASK, epoch_of(w) + 2);
            let _ = self
                .0
                .compare_exchange(w, thawed, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Makes the count the sum of point `index`'s counters in `rows` (every
    /// live process's row), as `holder`, which must hold the table's recount
    /// word (module doc). Returns the new count.
    pub(crate) fn recount(&self, index: usize, rows: &[&[Held]], holder: &Holder<'_>) -> u32 {
        let mut w = self.0.load(Ordering::Acquire);
        let (frozen, epoch) = loop {
            if w & FROZEN != 0 {
                // Left frozen by a recounter that died: rows may carry its
                // next epoch, so skip it.
                break (w, epoch_of(w) + 2);
            }
            match self
                .0
                .compare_exchange(w, w | FROZEN, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break (w | FROZEN, epoch_of(w) + 1),
                Err(seen) => w = seen,
            }
        };
        holder.reached(Transition::Recount, 1);
        let sum: u64 = rows
            .iter()
            .filter_map(|row| row.get(index))
            .map(|held| u64::from(held.read_for(epoch)))
            .sum();
        let count = sum.min(u64::from(MAX_COUNT)) as u32;
        // Fails only if a waiter took this recounter for dead and thawed
        // the word: then the rows tagged here are at an epoch it skipped.
        let _ = self.0.compare_exchange(
            frozen,
            word(count, epoch),
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
        count
    }
}
