//! Owners of the three short transitions that make others wait: a name slot
//! being claimed, a point's delay turn, a strategy being written.
//!
//! In a table shared by several processes, a process may die (`kill -9`) at
//! any instruction, in the middle of one of them. So each of these words holds
//! the id of its holder, never a bare "taken" bit, and a waiter that has spun
//! for a while asks the table view's [`Liveness`] whether that holder still
//! lives; when it does not, the waiter takes over by compare-and-swap. The
//! hot path never asks: only a waiter does, after spinning.
//!
//! A private table has one owner, [`Owner::PRIVATE`], which is always alive
//! ([`AlwaysAlive`]: no question costs a syscall).

use crate::sync::{spin, AtomicU32, Ordering};

/// A word no one holds.
pub(crate) const FREE: u32 = 0;
/// The one id that is never an owner: a name slot's "ready" state.
pub(crate) const NOBODY: u32 = u32::MAX;

/// How many spins a waiter waits before it asks whether the holder lives.
#[cfg(not(loom))]
pub(crate) const SPINS_BEFORE_ASKING: u32 = 1 << 10;
#[cfg(loom)]
pub(crate) const SPINS_BEFORE_ASKING: u32 = 1;

/// Who holds a transition: a table view's id, stored in the words it takes.
/// An id is within `1..=u32::MAX - 1` (0 means "free", `u32::MAX` is a name
/// slot's "ready" state).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner(u32);

impl Owner {
    /// The owner of private tables and of points used on their own (id 1).
    /// Views of a shared table take other ids, one per process.
    pub const PRIVATE: Owner = Owner(1);

    /// The owner with this id; `None` for 0 and `u32::MAX`.
    pub const fn new(id: u32) -> Option<Owner> {
        if id == FREE || id == NOBODY {
            None
        } else {
            Some(Owner(id))
        }
    }

    /// The id.
    pub const fn id(self) -> u32 {
        self.0
    }
}

/// Tells whether the holder of a transition still lives, so that a waiter
/// takes over from a dead one instead of waiting forever.
///
/// Asked only by waiters, after spinning, never on the hot path. The ids are
/// raw words read from memory: any `u32` may be asked about (an id no one
/// has is dead). An id must not be handed out again while a word may still
/// hold it from a dead owner (e.g. give it a generation count), or a waiter
/// that found the old owner dead could take the word from the new one.
pub trait Liveness {
    /// Whether the owner with this id lives.
    fn is_alive(&self, owner: u32) -> bool;

    /// Called at each [`Checkpoint`] of the transitions (feature
    /// `test-hooks` only): a test parks a process here, or unwinds out of
    /// it to leave the transition half done, as a crash would.
    #[cfg(any(loom, feature = "test-hooks"))]
    fn checkpoint(&self, at: Checkpoint) {
        let _ = at;
    }
}

/// A view may borrow its liveness (e.g. a process registry shared by views).
impl<T: Liveness + ?Sized> Liveness for &T {
    #[inline]
    fn is_alive(&self, owner: u32) -> bool {
        (**self).is_alive(owner)
    }

    #[cfg(any(loom, feature = "test-hooks"))]
    fn checkpoint(&self, at: Checkpoint) {
        (**self).checkpoint(at)
    }
}

/// Every owner lives: the liveness of private tables.
#[derive(Copy, Clone, Debug, Default)]
pub struct AlwaysAlive;

impl Liveness for AlwaysAlive {
    #[inline]
    fn is_alive(&self, _owner: u32) -> bool {
        true
    }
}

/// The transitions a process can die in while others may wait on it. Named
/// in every build (the checkpoints compile away without `test-hooks`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transition {
    /// A name slot claimed by an insert. Steps: 0 slot claimed, 1 longest
    /// probe raised, 2 name written (state not yet ready).
    Claim,
    /// A delay starting. Steps: 0 turn taken, 1 old probe withdrawn, 2
    /// delay's end stored (probe not yet available), 3 before the turn is
    /// given back.
    DelayStart,
    /// A probe settling. Steps: 0 turn taken, 1 delay ended or next probe's
    /// time stored, 2 before the turn is given back.
    DelaySettle,
    /// A strategy replaced under the delay's turn. Steps: 0 turn taken, 1
    /// strategy stored, 2 before the turn is given back.
    DelayReplace,
    /// A strategy copy written. Steps: 0 writer flag taken, 1 copy marked
    /// busy, 2 values written, 3 copy marked stable, 4 readers flipped to
    /// it (flag not yet given back).
    StrategyStore,
    /// A permit taken by a view with a ledger (ledger.rs). Steps: 0 counted
    /// in the row, `in_flight` not yet raised; 1 refused, the row's count
    /// not yet taken back.
    Acquire,
    /// A permit returned by a view with a ledger. Steps: 0 `in_flight`
    /// lowered, the row's count not yet.
    Release,
    /// A point's permits recounted from the ledger rows (in_flight.rs).
    /// Steps: 0 the table's recount word taken, 1 `in_flight` frozen, no
    /// row read yet.
    Recount,
}

/// A point in a transition where a test may park or crash a process.
#[cfg(any(loom, feature = "test-hooks"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Checkpoint {
    /// Which transition.
    pub transition: Transition,
    /// How far it got (see [`Transition`]).
    pub step: u8,
}

/// A table view's owner and liveness, passed down to the transitions.
#[derive(Copy, Clone)]
pub(crate) struct Holder<'a> {
    pub(crate) owner: u32,
    liveness: &'a dyn Liveness,
    /// The table's recount word (in_flight.rs), if the point is in a table.
    pub(crate) recounter: Option<&'a AtomicU32>,
}

impl<'a> Holder<'a> {
    pub(crate) const PRIVATE: Holder<'static> = Holder {
        owner: Owner::PRIVATE.0,
        liveness: &AlwaysAlive,
        recounter: None,
    };

    pub(crate) fn new(
        owner: Owner,
        liveness: &'a dyn Liveness,
        recounter: &'a AtomicU32,
    ) -> Holder<'a> {
        Holder {
            owner: owner.0,
            liveness,
            recounter: Some(recounter),
        }
    }

    /// Takes `word` if it is free.
    #[inline]
    pub(crate) fn try_take(&self, word: &AtomicU32) -> bool {
        word.compare_exchange(FREE, self.owner, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes `word`, waiting while a live owner holds it.
    #[inline]
    pub(crate) fn take(&self, word: &AtomicU32) {
        if !self.try_take(word) {
            self.wait_take(word);
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_take(&self, word: &AtomicU32) {
        let mut spins = 0u32;
        while !self.try_take(word) {
            spin();
            spins = spins.wrapping_add(1);
            if spins % SPINS_BEFORE_ASKING == 0 && self.take_from_dead(word) {
                return;
            }
        }
    }

    /// Takes `word` from its holder if that holder is dead.
    pub(crate) fn take_from_dead(&self, word: &AtomicU32) -> bool {
        let held = word.load(Ordering::Relaxed);
        held != FREE
            && !self.liveness.is_alive(held)
            && word
                .compare_exchange(held, self.owner, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Gives `word` back.
    #[inline]
    pub(crate) fn give_back(&self, word: &AtomicU32) {
        word.store(FREE, Ordering::Release);
    }

    /// Waits until `word` holds no owner (it is [`FREE`] or [`NOBODY`]),
    /// setting it back to [`FREE`] when its owner is dead. Returns the value.
    #[inline]
    pub(crate) fn settled(&self, word: &AtomicU32) -> u32 {
        let held = word.load(Ordering::Acquire);
        if held == FREE || held == NOBODY {
            return held;
        }
        self.wait_settled(word)
    }

    /// [`Holder::settled`] once the word was seen held: out of the probe loop.
    #[cold]
    #[inline(never)]
    fn wait_settled(&self, word: &AtomicU32) -> u32 {
        let mut spins = 0u32;
        loop {
            let held = word.load(Ordering::Acquire);
            if held == FREE || held == NOBODY {
                return held;
            }
            spin();
            spins = spins.wrapping_add(1);
            if spins % SPINS_BEFORE_ASKING == 0
                && !self.liveness.is_alive(held)
                && word
                    .compare_exchange(held, FREE, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                return FREE;
            }
        }
    }

    /// A checkpoint of a transition (feature `test-hooks`; nothing otherwise).
    #[inline(always)]
    #[allow(unused_variables)]
    pub(crate) fn reached(&self, transition: Transition, step: u8) {
        #[cfg(any(loom, feature = "test-hooks"))]
        self.liveness.checkpoint(Checkpoint { transition, step });
    }
}
